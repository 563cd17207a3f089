"""A topic as people say it ("forget everything about my old job at Acme Corp"), read
into what it is about: the names it mentions, matched as whole phrases, and its other
content terms, matched by a light stem (a hyphenated compound, "on-call", as a phrase).
Deciding which rows a topic means reads only the row's own words (and, for the caller,
its meaning); see ``TopicMatch``.

A topic is read once alone (``topic_read``) and then against the texts it may be about
(``topic_refine``), which tell what the words alone cannot: that "acme corp" typed in
lower case is the name "Acme Corp", that "Acme" alone stands for it, and that "Dana"
is two people ("Dana Kowalski", "Dana Whitfield") unless the topic says which ("my
ex-girlfriend Dana": the Dana the texts call the ex-girlfriend)."""

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
    setup history preferences preference situation""".split()
)
# Beside a name, nouns that only say which side of it the topic takes: "my old job at
# Acme Corp" is about Acme Corp, "the Japan trip stuff" about Japan.
BESIDE_A_NAME = frozenset(
    """job jobs work company employer employment trip trips travel project projects team
    teams time times days life""".split()
)
_TOKEN = re.compile(r"\w+(?:[-']\w+)*", re.UNICODE)


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

    @property
    def label(self) -> str:
        return " ".join(self.phrase)


@dataclass(frozen=True)
class Topic:
    text: str
    names: tuple[Name, ...]
    terms: tuple[tuple[str, ...], ...]  # the other content words; a compound as a phrase
    tokens: tuple[str, ...] = field(default=(), repr=False)  # as written, framing dropped

    @property
    def search_words(self) -> list[str]:
        """Every word a row about the topic may hold."""
        found = [w for n in self.names for p in (n.phrase, *n.short) for w in p]
        return list(dict.fromkeys(found + [w for t in self.terms for w in t]))

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
        if low not in STOPWORDS and low not in FRAMING and len(low) > 1:
            rest.append(_phrase(low))
            kept.append(base)
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


def topic_refine(topic: Topic, texts: list[str]) -> Topic:
    """``topic`` read against the texts it may be about: terms the texts write as a
    name become that name; a name's first word alone stands for it where it names no
    one else; a one-word name the texts give to several people is ambiguous, unless
    one of them is the only one the texts mention beside the topic's other terms."""
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
    resolved: list[Name] = []
    said = [words(text) for text in texts]
    for phrase in dict.fromkeys(names):
        if len(phrase) > 1:
            # "Acme" alone for "Acme Corp": where it begins no other name and is no
            # common word (the texts never write it in lower case, as they do "home").
            others = [f for f in _fuller(phrase[0], texts) if f != " ".join(phrase)]
            common = re.compile(rf"\b{re.escape(phrase[0])}\b")
            plain = any(common.search(text) for text in texts)
            short = () if others or plain else ((phrase[0],),)
            resolved.append(Name(phrase=phrase, short=short))
            continue
        fuller = _fuller(phrase[0], texts)
        if len(fuller) < 2:
            resolved.append(Name(phrase=phrase))
            continue
        # The one the topic's other terms point to, if they point to one.
        pointed = {
            full
            for full, where in fuller.items()
            for index in where
            if any(_holds_term(said[index], t) for t in terms)
        }
        if len(pointed) == 1:
            full = next(iter(pointed))
            resolved.append(Name(phrase=tuple(full.split())))
            # The words that told which one it is have done their work ("my ex-girlfriend
            # Dana": every fact of Dana Kowalski, not only those that say "ex-girlfriend").
            telling = {t for index in fuller[full] for t in terms if _holds_term(said[index], t)}
            terms = [t for t in terms if t not in telling]
        else:
            resolved.append(Name(phrase=phrase, ambiguous=tuple(sorted(fuller))))
    if resolved:
        terms = [t for t in terms if not (len(t) == 1 and t[0] in BESIDE_A_NAME)]
    return replace(topic, names=tuple(resolved), terms=tuple(terms))


def _holds_phrase(haystack: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(haystack[i : i + n]) == phrase for i in range(len(haystack) - n + 1))


def _holds_term(said: list[str], term: tuple[str, ...]) -> bool:
    if len(term) > 1:
        return _holds_phrase(said, term)
    return stem(term[0]) in {stem(w) for w in said}


@dataclass(frozen=True)
class TopicMatch:
    """How a row's own text stands to a topic."""

    names: tuple[str, ...]  # the topic's names the text holds (as phrases, or short)
    terms: tuple[str, ...]  # the topic's other terms it holds (by stem)
    clear: bool  # it holds every name of the topic, none of them ambiguous

    @property
    def partial(self) -> bool:
        return bool(self.names or self.terms)


def topic_match(topic: Topic, text: str) -> TopicMatch:
    """Which of ``topic``'s names and terms ``text`` holds ("paged" in "being paged",
    not "page" in "status page": stems of whole words, not the index's stemming)."""
    said = words(text)
    names = tuple(
        n.label for n in topic.names if any(_holds_phrase(said, p) for p in (n.phrase, *n.short))
    )
    held = tuple(" ".join(t) for t in topic.terms if _holds_term(said, t))
    clear = (
        bool(topic.names)
        and len(names) == len(topic.names)
        and not any(n.ambiguous for n in topic.names)
    )
    return TopicMatch(names=names, terms=held, clear=clear)
