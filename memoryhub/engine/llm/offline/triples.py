"""Pattern triples: named things (and "I", the user) joined by a known verb phrase."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..schemas import EntityType, SourceText, Triple
from .known import known_type
from .text import Span, entities, sentences

# verb phrase -> (relation, type it implies for the subject, and for the object)
_RELATIONS: dict[str, tuple[str, EntityType | None, EntityType | None]] = {}
# passive phrases ("is used by"): the same relation with its arguments swapped
_PASSIVE: set[str] = set()


def _relation(
    phrases: str,
    name: str,
    subject: EntityType | None,
    obj: EntityType | None,
    *,
    passive: str = "",
) -> None:
    for phrase in phrases.split("|"):
        _RELATIONS[phrase] = (name, subject, obj)
    for phrase in filter(None, passive.split("|")):
        _RELATIONS[phrase] = (name, subject, obj)
        _PASSIVE.add(phrase)


_relation(
    "works at|works for|worked at|worked for|work at|work for|is employed at|is employed by|"
    "am employed at|am employed by|joined",
    "works_at",
    "person",
    "organisation",
)
_relation(
    "works on|work on|worked on|is working on|am working on|are working on",
    "works_on",
    "person",
    "project",
)
_relation(
    "lives in|live in|lived in|is based in|am based in|are based in|is located in|"
    "are located in|moved to|is headquartered in|are headquartered in|is hosted in|"
    "are hosted in|runs in|run in|is in|are in",
    "located_in",
    None,
    "place",
)
_relation("is stored in|are stored in|is kept in|are kept in", "stored_in", None, "tool")
_relation(
    "uses|use|used|is using|am using|are using|relies on|rely on|switched to|"
    "is written in|are written in|is built with|are built with|is built on|are built on",
    "uses",
    None,
    "tool",
    passive="is used by|are used by|was used by",
)
_relation("depends on|depend on|requires|require", "depends_on", None, None)
_relation(
    "runs on|run on|is hosted on|are hosted on|is deployed on|is deployed to|deploys to|"
    "is hosted at",
    "runs_on",
    None,
    "tool",
)
_relation(
    "is part of|are part of|is a member of|am a member of|belongs to|belong to",
    "part_of",
    None,
    None,
)
_relation(
    "manages|manage|leads|lead|heads|is the lead of|is the tech lead of|is the team lead of|"
    "is the head of|is the manager of|is in charge of",
    "manages",
    "person",
    None,
    passive="is managed by|is led by|was managed by|was led by",
)
_relation(
    "owns|own|is the owner of|are the owners of",
    "owns",
    None,
    None,
    passive="is owned by|are owned by|was owned by",
)
_relation(
    "maintains|maintain", "maintains", None, "project", passive="is maintained by|are maintained by"
)
_relation("reports to|report to", "reports_to", "person", "person")
_relation(
    "wrote|created|built|founded|designed|developed",
    "created",
    None,
    None,
    passive="was written by|was created by|was built by|was founded by|was designed by|"
    "was developed by|is written by|is developed by|were written by|were created by|"
    "were built by|were designed by|were developed by",
)
_relation(
    "replaced|replaces|is replacing",
    "replaced",
    None,
    None,
    passive="was replaced by|is replaced by|is being replaced by",
)
_relation("calls|call", "calls", None, None)
_relation("connects to|connect to|talks to|talk to", "connects_to", None, None)
_relation("reads from|read from", "reads_from", None, None)
_relation("writes to|write to", "writes_to", None, None)
_relation(
    "knows|know|is married to|am married to|is friends with|am friends with",
    "knows",
    "person",
    "person",
)
_relation(
    # Not "like": "looks like", "feels like" compare, they do not prefer.
    "prefers|prefer|likes|liked|loves|love|loved|enjoys|enjoy|enjoyed|am into|is into|are into",
    "prefers",
    "person",
    None,
)
# What people say they did and do, as in conversations: the places they went, what they
# took part in, took up, have, and mean to do.
_relation(
    "went to|goes to|visited|visits|traveled to|travelled to|been to|flew to|drove to|"
    "went back to|came back from|got back from",
    "visited",
    "person",
    "place",
)
_relation(
    "attended|attends|attend|signed up for|took part in|takes part in|participated in|"
    "volunteered at|volunteer at|volunteers at|went camping in",
    "attends",
    "person",
    None,
)
_relation(
    "started|took up|practices|practises|practice|plays|play|played|paints|painted|"
    "am learning|is learning|learned|learnt|studies|studied|study|am studying|is studying",
    "does",
    "person",
    "concept",
)
_relation("adopted|bought|got a|got an|has a|has an|have a|have an", "has", None, None)
_relation(
    "want to|wants to|plan to|plans to|am planning to|is planning to|hope to|hopes to|"
    "am hoping to|is hoping to|am going to|is going to|are going to",
    "plans",
    "person",
    "concept",
)
_relation("hates|hate|dislikes|dislike", "dislikes", "person", None)
_relation("is a|is an|are a|am a|am an|was a|was an|is our|is my|are our", "is_a", None, "concept")
# "Emacs is my favourite editor": the writer prefers Emacs.
_relation(
    "is my favourite|is my favorite|is our favourite|is our favorite|are my favourite|"
    "are my favorite",
    "prefers",
    None,
    None,
)
_FAVOURITE = frozenset(p for p, (r, _, _) in _RELATIONS.items() if "favo" in p)
_relation("is|are|was", "is", None, None)

_VERB = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in sorted(_RELATIONS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
# Phrases that take only a named object: "X is Acme" and "the office is in Warsaw", not
# "X is great" or "Ledgerd is in beta".
_NEEDS_NAMED_OBJECT = frozenset({"is", "are", "was", "is in", "are in", "runs in", "run in"})
# Relations whose ends may both be descriptive ("the search service calls the ranking
# service") when both are definite: what is owned, called or run by what.
_BETWEEN_THINGS = frozenset(
    """works_on located_in stored_in uses depends_on runs_on part_of manages owns maintains
    created replaced calls connects_to reads_from writes_to""".split()
)
_PEOPLE = (
    "manager|boss|colleague|coworker|co-worker|teammate|friend|wife|husband|partner|sister|"
    "brother|son|daughter|mother|father|mentor|cofounder|co-founder|team lead|tech lead|lead"
)
_IS_MY = re.compile(rf"^\s+is\s+my\s+(?P<who>{_PEOPLE})\b", re.IGNORECASE)
# "my colleague Lena", "My sister Eva": the named person is the writer's colleague.
_MY_ROLE = re.compile(rf"(?:^|\s)(?:my|our)\s+(?P<who>{_PEOPLE})\s+$", re.IGNORECASE)
_FILLER = re.compile(
    r"(?:\s+(?:also|now|still|currently|mostly|actually|really|already|usually|always|"
    r"mainly|primarily|just|only|finally|recently|both|all|each|used to|have|has|had|did|"
    r"do|does))*\s*$",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|didn't|won't|isn't|aren't|wasn't)\s*$", re.IGNORECASE
)
# What may be, will be or was once meant is not a fact of now.
_MODAL = re.compile(
    r"\b(?:might|may|could|should|would|can|will|must|shall|wants? to|plans? to)\s*$",
    re.IGNORECASE,
)
# Questions, conditions and guesses state nothing.
_HEDGED = re.compile(
    r"^(?:if|maybe|perhaps|unless|whether|should|shall|did|does|do|is|are|was|were|can|could|"
    r"would|will|what|which|who|where|why|how)\b",
    re.IGNORECASE,
)
_DETERMINER = r"the|our|my|their|his|her|its|this|that|these|those|a|an|some|your"
_DETERMINERS = frozenset(_DETERMINER.split("|"))
# Someone else's thing ("his wife", "their office"): whose is not said.
_UNRESOLVED_OWNER = frozenset({"his", "her", "their", "its", "your"})
_DEFINITE = frozenset({"the", "our", "my", "this", "that", "these", "those"})
_RIGHT_SKIP = re.compile(rf"^\s*(?:(?:{_DETERMINER})\s+)?", re.IGNORECASE)
_STOP = frozenset(
    """and or but for with because to in at on of from by as if when while which who that
    than then so since after before into about over under is are was were be been very
    too also it this these those every each daily weekly today yesterday tomorrow now
    always never sometimes often usually again there here last ago year years week weeks
    month months day days night weekend morning evening lot lots bit well together
    instead anymore already soon next via through across behind near within inside""".split()
)
# A phrase before one of these is the thing itself; after it, only what modifies it
# ("the Grafana cluster for Ledgerd": the cluster is the subject, not Ledgerd).
_PREPOSITIONS = frozenset(
    """for of in at from on with by about behind near under over inside within across to
    into via""".split()
)
_PHRASE_WORD = re.compile(r"[\w][\w'\u2019-]*")
_QUANTIFIERS = frozenset(
    "nobody everyone everybody someone somebody anyone anybody none nothing noone".split()
)
# "I" is the speaker; so is "we" (the speaker and those they did it with).
_PRONOUN_I = re.compile(r"(?:^|\s)(?:I|[Ww]e)$")
_CONTRACTIONS = (
    (re.compile(r"\bI['\u2019]m\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI['\u2019]ve\b", re.IGNORECASE), "I have"),
)
_SPECIFIC = ("person", "organisation", "project", "tool", "place")
# The kind of thing a phrase's last word says it is ("the payments team").
_HEAD_TYPES: dict[str, EntityType] = {
    **dict.fromkeys(
        "team teams group guild squad department company org organisation organization "
        "committee crew".split(),
        "organisation",
    ),
    **dict.fromkeys("office city country region datacenter".split(), "place"),
    "project": "project",
}
_GROUPS = frozenset(k for k, v in _HEAD_TYPES.items() if v == "organisation" and k != "company")
_TIME_NAMES = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december""".split()
)


@dataclass(frozen=True)
class _Argument:
    name: str
    type: EntityType | None
    named: bool  # an entity of the text (or the user), or a phrase with one in it
    end: int
    start: int = 0
    determiner: str = ""


def extract_triples(sources: str | Sequence[SourceText]) -> list[Triple]:
    """Triples stated by ``sources``, one list, each naming its source's id."""
    if isinstance(sources, str):
        sources = [SourceText(id=0, text=sources)]
    found: dict[tuple[str, str, str, int], Triple] = {}
    for source in sources:
        for sentence in sentences(source.text):
            for pattern, replacement in _CONTRACTIONS:
                sentence = pattern.sub(replacement, sentence)
            for triple in _sentence_triples(sentence, source.id):
                key = (
                    triple.subject.casefold(),
                    triple.relation,
                    triple.object.casefold(),
                    triple.source_id,
                )
                found.setdefault(key, triple)
    return _consistent_types(list(found.values()))


@dataclass(frozen=True)
class NamedThing:
    """A thing a text names, with the type its name alone gives (a well-known tool or
    company)."""

    name: str
    type: EntityType
    # The name's first word when its capital is only its place's (it opens a sentence, a
    # line or what follows a colon) and nothing else says it is a name: the name stands
    # where that word is written as a name elsewhere. If not, a single word names
    # nothing; of several, ``rest`` stands ("Argo" of "Deploys Argo") when the first is
    # an ``ordinary`` word or the rest is written as a name elsewhere ("Wow Caroline"),
    # and the whole run when neither ("Marta Kowalski").
    opener: str = ""
    rest: NamedThing | None = None
    ordinary: bool = False


# Words the rules know as ordinary ones: function words and the verbs of the relations.
_ORDINARY = frozenset(
    {word for phrase in _RELATIONS for word in phrase.split()} | _STOP | _DETERMINERS
)
_JOINING = re.compile(r"^(?:(?:of|&|de|van|von)\s+)+", re.IGNORECASE)


def _ordinary(word: str, lower_case: set[str]) -> bool:
    # Known to the rules, written in lower case in the same text, or shaped as a verb
    # ("Migrated", "Using"): the first word of "Migrated Atlas" is not part of the name.
    folded = word.casefold()
    return (
        folded in _ORDINARY
        or folded in lower_case
        or (len(folded) > 5 and folded.endswith(("ed", "ing")))
    )


def _named(name: str, kind: EntityType) -> NamedThing | None:
    if not name or name.casefold() in _TIME_NAMES | _QUANTIFIERS:
        return None
    return NamedThing(name, kind)


def named_things(text: str) -> list[NamedThing]:
    """The things ``text`` names (capitalised names and identifiers, not days or
    months), each once, with the type its name alone gives (a well-known tool or
    company), whether or not a relation is stated about them. A single capitalised word
    that opens a sentence (or a line, or what follows a colon) and is no well-known
    name carries it as ``opener``: whether it is a name is for what else its writer
    wrote to say; so does a run of capitalised words there ("Prefers Vim"), with the
    rest of the run as what may stand without it."""
    lower_case = {w.casefold() for w in _PHRASE_WORD.findall(text) if w.islower()}
    found: dict[str, NamedThing] = {}
    for sentence in sentences(text):
        for span in entities(sentence):
            name = span.text
            kind = _span_type(span) or "other"
            thing = _named(name, kind)
            if thing is None:
                continue
            if span.opens and known_type(name) is None:
                first, _, after = name.partition(" ")
                after = _JOINING.sub("", after)
                if not after:
                    thing = NamedThing(name, kind, opener=first)
                elif known_type(first) is None:
                    rest = _named(after, known_type(after) or "other")
                    ordinary = _ordinary(first, lower_case)
                    thing = NamedThing(name, kind, opener=first, rest=rest, ordinary=ordinary)
            known = found.get(name.casefold())
            if known is None or (known.opener and not thing.opener):
                found[name.casefold()] = thing
    return list(found.values())


def _consistent_types(triples: list[Triple]) -> list[Triple]:
    # An entity typed by one statement ("Alice works at Acme": a person) keeps that
    # type in the others ("Alice uses Vim").
    known: dict[str, EntityType] = {}
    for triple in triples:
        for name, kind in (
            (triple.subject, triple.subject_type),
            (triple.object, triple.object_type),
        ):
            if kind in _SPECIFIC:
                known.setdefault(name.casefold(), kind)
    return [
        triple.model_copy(
            update={
                "subject_type": known.get(triple.subject.casefold(), triple.subject_type),
                "object_type": known.get(triple.object.casefold(), triple.object_type),
            }
        )
        for triple in triples
    ]


def _sentence_triples(sentence: str, source_id: int) -> list[Triple]:
    if sentence.rstrip().endswith("?") or _HEDGED.match(sentence):
        return []
    spans = [s for s in entities(sentence) if s.text.casefold() not in _QUANTIFIERS]
    triples: list[Triple] = []
    previous: tuple[_Argument, int] | None = None  # last subject and where its object ended
    for span in spans:
        who = _IS_MY.match(sentence[span.end :]) or _MY_ROLE.search(sentence[: span.start])
        if who and span.kind == "name":
            role = who.group("who").lower().replace(" ", "_").replace("-", "")
            triples.append(
                Triple(
                    subject=span.text,
                    subject_type="person",
                    relation=f"{role}_of",
                    object="user",
                    object_type="person",
                    confidence=0.7,
                    source_id=source_id,
                )
            )
    for match in _VERB.finditer(sentence):
        phrase = " ".join(match.group().lower().split())
        relation = _RELATIONS[phrase][0]
        before = sentence[: match.start()]
        if _NEGATED.search(before):
            continue
        left_end = len(_FILLER.sub("", before))
        if _MODAL.search(sentence[:left_end]):
            continue
        subjects = _left(sentence, left_end, spans)
        if not subjects and previous is not None:
            gap = sentence[previous[1] : left_end].strip(" ,").lower()
            if gap in ("and", "but", "and also", ""):
                subjects = [previous[0]]
        if not subjects:
            continue
        objects = _right(sentence, match.end(), spans)
        if not objects:
            continue
        obj = objects[0]
        if phrase in _NEEDS_NAMED_OBJECT and not obj.named:
            continue
        if relation == "is" and _IS_MY.match(sentence[subjects[0].end :]):
            continue
        if (
            relation == "is_a"
            and phrase.endswith((" my", " our"))
            and re.match(rf"(?:{_PEOPLE})\b", obj.name, re.IGNORECASE)
        ):
            continue  # "Bob is my manager": a role, read above
        for subject in subjects:
            for obj in objects:
                triple = _triple(subject, phrase, obj, source_id)
                if triple is not None:
                    triples.append(triple)
        previous = (subjects[-1], objects[-1].end)
    return triples


def _triple(subject: _Argument, phrase: str, obj: _Argument, source_id: int) -> Triple | None:
    relation, subject_hint, object_hint = _RELATIONS[phrase]
    # Two descriptive phrases ("the search service calls the ranking service") only for
    # relations between things, and only when both say which one they mean.
    if not (subject.named or obj.named) and (
        relation not in _BETWEEN_THINGS
        or subject.determiner not in _DEFINITE
        or obj.determiner not in _DEFINITE
    ):
        return None
    if phrase in _FAVOURITE:
        # "Emacs is my favourite editor": the writer prefers Emacs.
        if not subject.named:
            return None
        subject, obj = _Argument("user", "person", True, 0), subject
        subject_hint = "person"
    if phrase in _PASSIVE:
        subject, obj = obj, subject
    subject_type, object_type = _type(subject, subject_hint), _type(obj, object_hint)
    if relation == "works_at" and _head(obj.name) in _GROUPS:
        relation = "part_of"  # "joined the security team": a member, not an employee
    return Triple(
        subject=subject.name,
        subject_type=subject_type,
        relation=relation,
        object=obj.name,
        object_type=object_type,
        confidence=0.6 if subject.named and obj.named else 0.45,
        source_id=source_id,
    )


def _head(name: str) -> str:
    return name.rsplit(None, 1)[-1].casefold() if name.strip() else ""


@dataclass(frozen=True)
class _Unit:
    text: str
    start: int
    end: int
    span: Span | None


def _units(sentence: str, spans: list[Span], start: int, end: int) -> list[_Unit]:
    """The names and words of ``sentence[start:end]`` in order."""
    units: list[_Unit] = []
    at = start
    inside = sorted((s for s in spans if s.start >= start and s.end <= end), key=lambda s: s.start)
    for span in [*inside, None]:
        stop = span.start if span is not None else end
        for word in _PHRASE_WORD.finditer(sentence, at, stop):
            units.append(_Unit(word.group(), word.start(), word.end(), None))
        if span is not None:
            units.append(_Unit(span.text, span.start, span.end, span))
            at = span.end
    return units


def _plain(unit: _Unit) -> bool:
    # A word that may be part of a descriptive phrase: not a function word or adverb.
    word = unit.text.lower()
    return (
        unit.span is None
        and word not in _STOP
        and word not in _DETERMINERS
        and not word.endswith("ly")
        and word not in ("i", "we", "you", "he", "she", "they", "it")
    )


def _phrase_before(sentence: str, end: int, spans: list[Span], depth: int = 0) -> _Argument | None:
    """The noun phrase ending at ``end``: a name, or words such as "the Atlas project",
    "Grafana dashboards", "the billing service" (a phrase without a name needs a
    determiner). A phrase after a preposition modifies the one before it, which is the
    phrase meant ("the Grafana cluster for Ledgerd": the cluster)."""
    units = _units(sentence, spans, 0, end)
    if not units or units[-1].end != end:
        return None
    taken: list[_Unit] = []
    determiner = ""
    for unit in reversed(units):
        if len(taken) >= 5:
            return None
        if unit.span is not None or _plain(unit):
            taken.insert(0, unit)
            continue
        if unit.text.lower() in _DETERMINERS:
            determiner = unit.text.lower()
        break
    if not taken or determiner in _UNRESOLVED_OWNER:
        return None
    if taken[-1].span is not None:
        # "my colleague Lena", "the new Ledgerd": the name is the thing.
        taken = taken[-1:]
        determiner = ""
    start = taken[0].start
    preceding = sentence[:start].rstrip()
    if determiner:
        preceding = preceding[: len(preceding) - len(determiner)].rstrip()
    last_word = preceding.rsplit(None, 1)[-1].lower() if preceding else ""
    if last_word in _PREPOSITIONS:
        if depth >= 2:
            return None
        head_end = len(preceding[: len(preceding) - len(last_word)].rstrip())
        return _phrase_before(sentence, head_end, spans, depth + 1)
    return _argument(taken, determiner)


def _argument(taken: list[_Unit], determiner: str) -> _Argument | None:
    if len(taken) == 1 and taken[0].span is not None:
        span = taken[0].span
        return _Argument(span.text, _span_type(span), True, span.end, span.start, determiner)
    named = any(u.span is not None for u in taken)
    if not named and (not determiner or determiner in ("a", "an", "some")):
        return None
    words = [u.text if u.span is not None else u.text.lower() for u in taken]
    kind = _HEAD_TYPES.get(words[-1].lower(), "concept")
    return _Argument(" ".join(words), kind, named, taken[-1].end, taken[0].start, determiner)


def _left(sentence: str, end: int, spans: list[Span]) -> list[_Argument]:
    """The subjects ending at ``end``: the writer ("I", "we"), a phrase, or names joined
    by "and" ("Chen and Priya")."""
    text = sentence[:end]
    if not any(span.end == end for span in spans) and _PRONOUN_I.search(text):
        return [_Argument("user", "person", True, end, end - 1)]
    subject = _phrase_before(sentence, end, spans)
    if subject is None:
        return []
    subjects = [subject]
    if subject.named and subject.start and " " not in subject.name.strip():
        # Further names before it: "Chen and Priya", "Chen, Ana and Priya".
        at = subject.start
        while True:
            joined = re.search(r"(?:,\s*(?:and\s+)?|\s+and\s+)$", sentence[:at])
            if not joined:
                break
            other = next((s for s in spans if s.end == joined.start()), None)
            if other is None or " " in other.text:
                break
            subjects.insert(
                0, _Argument(other.text, _span_type(other), True, other.end, other.start)
            )
            at = other.start
    return subjects


def _right(sentence: str, start: int, spans: list[Span]) -> list[_Argument]:
    """The objects starting at ``start``: a phrase, then any names joined to it by
    commas and "and" ("Postgres, Kafka and Vault")."""
    first = _phrase_after(sentence, start, spans)
    if first is None:
        return []
    found = [first]
    at = first.end
    while True:
        joined = re.match(r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?:the\s+)?", sentence[at:])
        if not joined:
            break
        following = _phrase_after(sentence, at + joined.end(), spans, named_only=True)
        if following is None:
            break
        found.append(following)
        at = following.end
    return found


def _phrase_after(
    sentence: str, start: int, spans: list[Span], *, named_only: bool = False
) -> _Argument | None:
    skipped = _RIGHT_SKIP.match(sentence[start:])
    at = start + (skipped.end() if skipped else 0)
    determiner = sentence[start:at].strip().lower()
    units = _units(sentence, spans, at, len(sentence))
    if not units or units[0].start != at:
        return None
    if units[0].span is not None:
        taken = [units[0]]
        for unit in units[1:4]:
            # "the EU cluster", "S3 lifecycle rules", "the FX rates API"
            gap = sentence[taken[-1].end : unit.start]
            if gap != " " or not (unit.span is not None or _plain(unit)):
                break
            if unit.span is not None and len(taken) == 1:
                break  # two names side by side are two things
            taken.append(unit)
        return _argument(taken, determiner or "the")
    if named_only:
        return None
    words: list[str] = []
    end = at
    for unit in units[:4]:
        if unit.text.lower() in _STOP or sentence[end : unit.start].strip():
            break
        words.append(unit.text)
        end = unit.end
    if not words:
        return None
    text = " ".join(words)
    return _Argument(text.lower(), "concept", False, end, at, determiner)


def _span_type(span: Span) -> EntityType | None:
    known = known_type(span.text)
    if known:
        return known
    words = span.text.lower().split()
    if len(words) > 1 and "project" in (words[0], words[-1]):
        return "project"  # "Project Atlas", "Atlas Project"
    return "organisation" if span.looks_like_organisation else None


def _type(argument: _Argument, hint: EntityType | None) -> EntityType:
    # What the words say (the user, a well-known tool, "Acme Corp", "the payments
    # team") over what the verb implies, over the default of a descriptive phrase.
    if argument.type in ("person", "organisation", "tool", "place", "project"):
        return argument.type
    return hint or argument.type or "other"
