"""A topic as people say it ("forget everything about my old job at Acme Corp"), read
into what it is about: the names it mentions, matched as whole phrases, and its other
content terms, matched by a light stem or a shared root ("allergic" for "allergies"; a
hyphenated compound, "on-call", as a phrase).
Deciding which rows a topic means reads only the row's own words (and, for the caller,
its meaning); see ``TopicMatch``.

A topic is read once alone (``topic_read``) and then against the texts it may be about
(``topic_refine``), which tell what the words alone cannot: that "acme corp" typed in
lower case is the name "Acme Corp", that "Acme" alone stands for it, and that "Dana"
is two people ("Dana Kowalski", "Dana Whitfield") unless the topic says which ("my
ex-girlfriend Dana": the Dana the texts call the ex-girlfriend), and who is who to the
user ("our dog Biscuit": "the dog" is Biscuit, and "my dog" asks for Biscuit).

A row that names the topic only to date something else ("before the Harbor launch") is
not about it; a row that holds a topic's word of the user's ("my parents") only as
someone else's ("Maya's parents") is not the user's. A row tagged with a topic's word
is filed under it, unless the topic says that word as what the user does ("where I
work"); a row in which the user does it, in the topic's own form ("we live" for "where I
live"), is the user's. The names the texts about a topic give beside it ("Rotterdam"
beside "Acme Corp's headquarters are in Rotterdam") are read by ``topic_linked``."""

import re
from dataclasses import dataclass, field, replace

from memoryhub.engine.search.text import STOPWORDS, stem, words

# What wraps a topic rather than names it: the request itself, its hedges, and nouns
# that only say "the things about" ("my coding preferences", "the japan trip stuff").
FRAMING = frozenset(
    """forget forgets forgetting delete deleting remove removing erase erasing wipe purge
    clear drop everything anything something all whatever what know knows known remember
    remembered stored store saved keep kept related regarding concerning relating
    mentions mentioning mention please pls kindly tell told said say says
    stuff things thing info information memory memories fact facts note notes details
    detail data old former previous past earlier used like want wanted need
    setup history preferences preference situation take takes taking use uses using
    make makes""".split()
)
# Beside a name, nouns that only say which side of it the topic takes: "my old job at
# Acme Corp" is about Acme Corp, "the Japan trip stuff" about Japan.
BESIDE_A_NAME = frozenset(
    """job jobs work company employer employment trip trips travel project projects team
    teams time times days life""".split()
)
_TOKEN = re.compile(r"\w+(?:[-']\w+)*", re.UNICODE)
# Words that make what follows them a time for something else ("before the Harbor
# launch", "during Theo's school holidays"): a fact that names the topic only there is
# dated by it, not about it.
DATING = frozenset("before after during since until till".split())
# What may stand between such a word, or "my", and the noun it governs.
_DETERMINERS = frozenset("the a an my our his her their its".split())
_OWNERS = frozenset({"my", "our"})
_SUBJECTS = frozenset({"i", "we"})
# How people say who someone is to them: "my sister Lena", "our dog Biscuit", "Dana
# Whitfield is my tech lead", "my manager is Joris Vermeulen", "Project Harbor, the
# rewrite of ...". The role is one or two lower-case words; the name is capitalised.
_ROLE = r"([a-z][\w-]*(?:\s+[a-z][\w-]*)?)"
_NAME = r"([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)"
_DEFINITIONS = (
    (re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+{_ROLE},?\s+{_NAME}"), 1, 2),
    (re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+{_ROLE}\s+(?:is|was)\s+{_NAME}"), 1, 2),
    (re.compile(rf"{_NAME}\s+(?:is|was)\s+(?:my|our)\s+{_ROLE}"), 2, 1),
    (re.compile(rf"{_NAME},\s+(?:my|our|the)\s+{_ROLE}"), 2, 1),
)


def _is_name_word(token: str) -> bool:
    """A word written as part of a name: capitalised, or with capitals or digits inside
    ("AnyConnect", "S3", "k8s")."""
    if token.lower() in STOPWORDS or token.lower() in FRAMING:
        return False
    if token[0].isupper():
        return True
    return any(c.isupper() for c in token[1:]) or (
        any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
    )


def _phrase(token: str) -> tuple[str, ...]:
    return tuple(words(token))


@dataclass(frozen=True)
class Name:
    """A name of the topic: its phrase, the shorter forms the texts use for it alone
    ("acme" for "acme corp"), and, when the topic does not say which of several it
    means, the fuller names the texts give it."""

    phrase: tuple[str, ...]
    short: tuple[tuple[str, ...], ...] = ()
    ambiguous: tuple[str, ...] = ()
    # What the texts call it when they do not name it ("my ex", "the dog"): roles the
    # user gives this name and no other. For an ambiguous name, the roles of each name it
    # may be (a fact of "my ex" may be of the Dana the user means).
    roles: tuple[tuple[str, ...], ...] = ()
    # The first name, when the texts give it to others too ("Dana" of "Dana Kowalski"
    # and "Dana Whitfield"): a fact that writes it alone may be of this one or not.
    shared: str = ""

    @property
    def label(self) -> str:
        return " ".join(self.phrase)


@dataclass(frozen=True)
class Topic:
    text: str
    names: tuple[Name, ...]
    terms: tuple[tuple[str, ...], ...]  # the other content words; a compound as a phrase
    tokens: tuple[str, ...] = field(default=(), repr=False)  # as written, framing dropped
    # The terms the topic says are the user's own ("my parents"), as against someone
    # else's ("Maya's parents").
    owned: tuple[tuple[str, ...], ...] = ()
    # The terms it says as what the user does ("where I work", "I play bass"): verbs, not
    # the names of a subject a fact may be filed under.
    done: tuple[tuple[str, ...], ...] = ()

    @property
    def search_words(self) -> list[str]:
        """Every word a row about the topic may hold."""
        found = [w for n in self.names for p in (n.phrase, *n.short, *n.roles) for w in p]
        return list(dict.fromkeys(found + [w for t in self.terms for w in t]))

    @property
    def roots(self) -> list[str]:
        """The roots of its longer words, which other forms of them begin ("allerg" of
        "allergies": "allergic"; see ``_same_root``)."""
        return list(
            dict.fromkeys(
                t[0][: max(ROOT_LETTERS, len(t[0]) - ROOT_ENDING)]
                for t in self.terms
                if len(t) == 1 and len(t[0]) > ROOT_LETTERS
            )
        )

    @property
    def core(self) -> str:
        """The topic without its framing, for embedding."""
        return " ".join(self.tokens) or self.text

    @property
    def empty(self) -> bool:
        return not self.names and not self.terms


def topic_read(text: str) -> Topic:
    """The names and content terms of a topic. A name is a run of capitalised (or
    mixed-case, or lettered-and-numbered) words; a lower-cased topic has terms only
    until ``topic_refine`` finds its names in the texts."""
    names: list[tuple[str, ...]] = []
    rest: list[tuple[str, ...]] = []
    run: list[str] = []
    kept: list[str] = []
    owned: list[tuple[str, ...]] = []
    mine = False  # after "my" or "our", up to the noun it governs
    doing = False  # after "I" or "we", up to the verb
    done: list[tuple[str, ...]] = []
    previous: tuple[str, ...] = ()
    for token in _TOKEN.findall(text or ""):
        base = token.split("'")[0]  # "Acme's" -> "Acme"
        low = base.lower()
        if _is_name_word(base):
            run.append(low)
            kept.append(base)
            continue
        if run:
            names.append(tuple(w for part in run for w in _phrase(part)))
            run = []
        if low in _OWNERS:
            mine = True
            continue
        if low in _SUBJECTS:
            doing = True
            continue
        if low in FRAMING and owned and owned[-1] == rest[-1] == previous:
            # "my health information": a kind of thing, not a thing the user has.
            owned.pop()
        if low not in STOPWORDS and low not in FRAMING and len(low) > 1:
            rest.append(_phrase(low))
            kept.append(base)
            if mine:
                owned.append(_phrase(low))
            if doing:
                done.append(_phrase(low))
        mine = mine and low in FRAMING  # "my old job": still the user's
        doing = doing and low in STOPWORDS  # "I get paged": the verb after "get"
        previous = _phrase(low)
    if run:
        names.append(tuple(w for part in run for w in _phrase(part)))
    unique = tuple(dict.fromkeys(names))
    return Topic(
        text=text,
        names=tuple(Name(phrase=n) for n in unique),
        terms=tuple(
            dict.fromkeys(t for t in rest if t and not any(t == (w,) for n in unique for w in n))
        ),
        tokens=tuple(kept),
        owned=tuple(dict.fromkeys(owned)),
        done=tuple(dict.fromkeys(done)),
    )


def _capitalised(phrase: tuple[str, ...], texts: list[str]) -> bool:
    pattern = re.compile(
        r"\b" + r"\s+".join(re.escape(w[0].upper()) + re.escape(w[1:]) for w in phrase) + r"\b"
    )
    return any(pattern.search(text) for text in texts)


def _fuller(first: str, texts: list[str]) -> dict[str, list[int]]:
    """The longer names ``first`` begins in ``texts`` ("Dana Kowalski"), each with the
    texts that use it."""
    pattern = re.compile(rf"\b{re.escape(first)}\s+([A-Z][\w-]*)", re.IGNORECASE)
    found: dict[str, list[int]] = {}
    for index, text in enumerate(texts):
        for match in pattern.finditer(text):
            follower = match.group(1)
            if (
                follower[0].isupper()
                and match.group(0)[0].isupper()
                and follower.lower() not in STOPWORDS
            ):
                full = f"{first} {follower.lower()}"
                found.setdefault(full, []).append(index)
    return found


def _runs(texts: list[str]) -> set[tuple[str, ...]]:
    """Every run of capitalised words the texts write (a name, or a sentence's first
    word), lower-cased."""
    found: set[tuple[str, ...]] = set()
    for text in texts:
        for match in re.finditer(r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*", text):
            run = tuple(w for w in words(match.group(0)) if w not in STOPWORDS)
            if run:
                found.add(run)
    return found


def _shorts(phrase: tuple[str, ...], texts: list[str], runs: set) -> tuple[tuple[str, ...], ...]:
    """The words of a name the texts use alone for it ("Acme" for "Acme Corp", "Harbor"
    for "Project Harbor"): a word of no other name, and no common word (the texts never
    write it in lower case, as they do "project" or "home")."""
    shorts = []
    for word in phrase:
        if word in STOPWORDS or word in FRAMING or len(word) < 3:
            continue
        if any(word in run and not holds_phrase(list(phrase), run) for run in runs):
            continue  # "Dana" of "Dana Kowalski" also begins "Dana Whitfield"
        if any(re.search(rf"\b{re.escape(word)}\b", text) for text in texts):
            continue
        shorts.append((word,))
    return tuple(shorts)


def _role(said: str, *, before_name: bool) -> tuple[tuple[str, ...], ...]:
    """A role as a phrase, cut before its first function word ("manager at" ->
    "manager"; none where the name follows it: "my salary at Northwind" gives Northwind
    no role), and an "ex-" role also said short ("ex-girlfriend": "my ex")."""
    kept: list[str] = []
    for word in said.split():
        if word.lower() in STOPWORDS or word.lower() in FRAMING:
            if before_name:
                return ()
            break
        kept.append(word.lower())
    if not kept:
        return ()
    found = [tuple(w for part in kept for w in _phrase(part))]
    if kept[0].startswith("ex-"):
        found.append(("ex",))
    return tuple(found)


def _definitions(texts: list[str]) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Who the texts say is who to the user: each role, with the names given it."""
    found: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for text in texts:
        for pattern, role_group, name_group in _DEFINITIONS:
            for match in pattern.finditer(text):
                name = tuple(w for w in words(match.group(name_group)) if w not in STOPWORDS)
                if not name:
                    continue
                role_said = match.group(role_group)
                for role in _role(role_said, before_name=role_group < name_group):
                    found.setdefault(role, set()).add(name)
    return found


def _shared(phrase: tuple[str, ...], runs: set) -> str:
    """The first word of ``phrase`` when another name the texts write begins with it
    ("dana" of "dana kowalski", beside "dana whitfield")."""
    first = phrase[0]
    if len(phrase) < 2 or first in STOPWORDS or first in FRAMING or len(first) < 3:
        return ""
    others = (run for run in runs if run[0] == first and not holds_phrase(list(phrase), run))
    return first if any(len(run) > 1 for run in others) else ""


def _roles_of(phrase: tuple[str, ...], definitions: dict) -> tuple[tuple[str, ...], ...]:
    """The roles given ``phrase`` (or a longer name it begins or ends) and no one else."""
    roles = []
    for role, names in definitions.items():
        own = {n for n in names if holds_phrase(list(n), phrase)}
        if own and len(names) == len(own) == 1:
            roles.append(role)
    return tuple(roles)


def topic_refine(topic: Topic, texts: list[str]) -> Topic:
    """``topic`` read against the texts it may be about: terms the texts write as a
    name become that name; a word of a name stands for it alone where it names no one
    else; a one-word name the texts give to several people is ambiguous, unless one of
    them is the only one the texts mention beside the topic's other terms. A term that
    is a role the texts give one name ("my ex": "my ex-girlfriend Dana Kowalski") stands
    for that name, and a name takes the roles the texts give it alone ("the dog" for
    "our dog Biscuit")."""
    terms = list(topic.terms)
    names = [n.phrase for n in topic.names]
    # Lower-cased names: the longest runs of single-word terms, in the topic's order,
    # that the texts capitalise.
    singles = [t[0] for t in terms if len(t) == 1]
    start = 0
    while start < len(singles):
        for end in range(len(singles), start, -1):
            run = tuple(singles[start:end])
            if _capitalised(run, texts):
                names.append(run)
                terms = [t for t in terms if t not in [(w,) for w in run]]
                start = end
                break
        else:
            start += 1
    definitions = _definitions(texts)
    for term in list(terms):
        given = definitions.get(term, set())
        if len(given) == 1:
            full = next(iter(given))
            # "my neighbour Marco": the name the topic gives is told apart below.
            if not any(holds_phrase(list(full), n) for n in names):
                names.append(full)
                terms.remove(term)
    runs = _runs(texts)
    resolved: list[Name] = []
    said = [words(text) for text in texts]
    for phrase in dict.fromkeys(names):
        if len(phrase) > 1:
            resolved.append(
                Name(
                    phrase=phrase,
                    short=_shorts(phrase, texts, runs),
                    roles=_roles_of(phrase, definitions),
                    shared=_shared(phrase, runs),
                )
            )
            continue
        fuller = _fuller(phrase[0], texts)
        if len(fuller) < 2:
            resolved.append(Name(phrase=phrase, roles=_roles_of(phrase, definitions)))
            continue
        # The one the topic's other terms point to, if they point to one.
        pointed = {
            full
            for full, where in fuller.items()
            for index in where
            if any(_holds_term(said[index], t) for t in terms)
        }
        if len(pointed) == 1:
            full = tuple(next(iter(pointed)).split())
            resolved.append(
                Name(
                    phrase=full,
                    roles=_roles_of(full, definitions),
                    shared=_shared(full, runs),
                )
            )
            # The words that told which one it is have done their work ("my ex-girlfriend
            # Dana": every fact of Dana Kowalski, not only those that say "ex-girlfriend").
            telling = {
                t for index in fuller[" ".join(full)] for t in terms if _holds_term(said[index], t)
            }
            terms = [t for t in terms if t not in telling]
        else:
            resolved.append(
                Name(
                    phrase=phrase,
                    ambiguous=tuple(sorted(fuller)),
                    roles=tuple(
                        dict.fromkeys(
                            r
                            for full in sorted(fuller)
                            for r in _roles_of(tuple(full.split()), definitions)
                        )
                    ),
                )
            )
    if resolved:
        terms = [t for t in terms if not (len(t) == 1 and t[0] in BESIDE_A_NAME)]
        # A role the topic gives its name has done its work too ("my sister Lena").
        roles = {r for n in resolved for r in n.roles}
        terms = [t for t in terms if t not in roles]
    return replace(topic, names=tuple(resolved), terms=tuple(terms))


def holds_phrase(haystack: list[str], phrase: tuple[str, ...]) -> bool:
    """Whether the words ``haystack`` hold the words ``phrase`` in a row."""
    n = len(phrase)
    return any(tuple(haystack[i : i + n]) == phrase for i in range(len(haystack) - n + 1))


# Two words are forms of one where they share a root of six letters or more and each
# ends at most three letters past it: "allergies" and "allergic", "finance" and
# "financial", "therapist" and "therapy"; not "paged" and "page" (too short a root to
# tell a form from another word), nor "organic" and "organisation".
ROOT_LETTERS = 6
ROOT_ENDING = 3


def _same_root(a: str, b: str) -> bool:
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared >= ROOT_LETTERS and len(a) - shared <= ROOT_ENDING >= len(b) - shared


def _holds_term(said: list[str], term: tuple[str, ...]) -> bool:
    if len(term) > 1:
        return holds_phrase(said, term)
    return stem(term[0]) in {stem(w) for w in said} or any(_same_root(term[0], w) for w in said)


@dataclass(frozen=True)
class TopicMatch:
    """How a row's own text stands to a topic."""

    names: tuple[str, ...]  # the topic's names the text holds (as phrases, short, or roles)
    terms: tuple[str, ...]  # the topic's other terms it holds (by stem)
    clear: bool  # it holds every name of the topic, none of them ambiguous
    dated: bool = False  # it names the topic only to date something else ("before Acme")
    roles: tuple[str, ...] = ()  # the roles by which it names them ("my ex")
    owned: bool = False  # it says the user's own ("my parents"), or the user does it
    # ("we live", for "where I live"), as the topic does
    others: bool = False  # it holds the topic's owned terms only as someone else's
    # The names it writes only by a first name others share ("Dana recommended ...").
    shared: tuple[str, ...] = ()
    # The topic's terms it is filed under: a tag of its own, and not a verb of the topic.
    tagged: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        return bool(self.names or self.terms)


def _places(said: list[str], phrase: tuple[str, ...]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(said) - n + 1) if tuple(said[i : i + n]) == phrase]


def _after(said: list[str], index: int, wanted: frozenset[str], between: int = 1) -> bool:
    """Whether ``said[index]`` follows a word of ``wanted``, with at most ``between``
    determiners or modifiers between."""
    for back in range(1, between + 2):
        if index - back < 0:
            return False
        if said[index - back] in wanted:
            return True
    return False


def topic_match(topic: Topic, text: str, tags: list[str] | None = None) -> TopicMatch:
    """Which of ``topic``'s names and terms ``text`` holds ("paged" in "being paged",
    not "page" in "status page": stems of whole words, not the index's stemming); a
    name's role counts where the text says it as the user's ("my ex", "the dog"); which
    terms ``tags`` file it under ("health" for "my health information", not "work" for
    "where I work", which says what the user does)."""
    said = words(text)
    names: list[str] = []
    roles: list[str] = []
    dated = []
    for name in topic.names:
        places = [i for p in (name.phrase, *name.short) for i in _places(said, p)]
        by_role = [
            (role, i)
            for role in name.roles
            for i in _places(said, role)
            if _after(said, i, _DETERMINERS | {"the"}, between=1)
        ]
        if places or by_role:
            names.append(name.label)
            if not places:
                roles.extend(" ".join(r) for r, _ in by_role)
            spots = places + [i for _, i in by_role]
            dated.append(all(_after(said, i, DATING) for i in spots))
    shared = tuple(
        name.label
        for name in topic.names
        if name.shared
        and name.label not in names
        and re.search(rf"\b{re.escape(name.shared.capitalize())}\b(?!\s+[A-Z])", text)
    )
    held = tuple(" ".join(t) for t in topic.terms if _holds_term(said, t))
    clear = (
        bool(topic.names)
        and len(names) == len(topic.names)
        and not any(n.ambiguous for n in topic.names)
    )
    owned = others = False
    if topic.owned:
        stems = {stem(w) for t in topic.owned for w in t}
        spots = [i for i, w in enumerate(said) if stem(w) in stems]
        owned = any(_after(said, i, _OWNERS, between=1) for i in spots)
        # "Maya's parents": the word follows someone's "'s".
        others = bool(spots) and not owned and all(i >= 2 and said[i - 1] == "s" for i in spots)
    if topic.terms and set(topic.terms) <= set(topic.done) and not owned:
        # "We live in Utrecht" for "where I live": the user does it, in the topic's own
        # tense ("I worked at Acme" is not where the user works). Only where the topic is
        # what the user does and nothing more: "I play football; chess bores me" does not
        # say "I play chess".
        verbs = {w for t in topic.done for w in t}
        owned = any(
            w in verbs and _after(said, i, _SUBJECTS, between=1) for i, w in enumerate(said)
        )
    return TopicMatch(
        names=tuple(names),
        terms=held,
        clear=clear,
        dated=bool(dated) and all(dated),
        roles=tuple(roles),
        owned=owned,
        others=others,
        shared=shared,
        tagged=tuple(
            " ".join(t)
            for t in topic.terms
            if t not in topic.done and _holds_term([w for tag in tags or [] for w in words(tag)], t)
        ),
    )


# Names of the calendar say when, not what: "in March" ties no two facts together.
CALENDAR = frozenset(
    """january february march april may june july august september october november
    december monday tuesday wednesday thursday friday saturday sunday""".split()
)


def topic_linked(topic: Topic, about: list[str], texts: list[str]) -> tuple[tuple[str, ...], ...]:
    """The other names that the texts ``about`` the topic give ("Rotterdam" beside "Acme
    Corp's headquarters are in Rotterdam", "Rui" beside "Lena's husband Rui"): runs of
    capitalised words that ``texts`` never write in lower case (not a sentence's first
    common word), none of the topic's own names or roles, and no day or month."""
    own = {w for name in topic.names for p in (name.phrase, *name.short, *name.roles) for w in p}
    common = {w for text in texts for w in re.findall(r"\b[a-z][\w-]*", text)}
    found: list[tuple[str, ...]] = []
    for text in about:
        for match in re.finditer(r"[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*", text):
            run = tuple(
                w
                for w in words(match.group(0))
                if w not in STOPWORDS and w not in FRAMING and w not in CALENDAR
            )
            if len("".join(run)) < 3 or set(run) & own or set(run) & common:
                continue
            found.append(run)
    return tuple(dict.fromkeys(found))
