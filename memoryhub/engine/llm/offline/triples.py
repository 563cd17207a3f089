"""Pattern triples: named things (and "I", the user) joined by a known verb phrase."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..schemas import EntityType, SourceText, Triple
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
    "are located in|moved to",
    "located_in",
    None,
    "place",
)
_relation(
    "uses|use|used|is using|am using|are using|relies on|rely on|switched to",
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
    "manages|manage|leads|lead|heads",
    "manages",
    "person",
    None,
    passive="is managed by|is led by|was managed by|was led by",
)
_relation("owns|own", "owns", None, None, passive="is owned by|are owned by|was owned by")
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
    "was developed by|is written by|is developed by",
)
_relation(
    "replaced|replaces|is replacing",
    "replaced",
    None,
    None,
    passive="was replaced by|is replaced by|is being replaced by",
)
_relation("calls|call", "calls", None, None)
_relation("connects to|talks to", "connects_to", None, None)
_relation("reads from", "reads_from", None, None)
_relation("writes to", "writes_to", None, None)
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
_relation("is a|is an|are a|am a|am an|was a|was an", "is_a", None, "concept")
_relation("is|are|was", "is", None, None)

_VERB = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in sorted(_RELATIONS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_PEOPLE = (
    "manager|boss|colleague|coworker|co-worker|teammate|friend|wife|husband|partner|sister|"
    "brother|son|daughter|mother|father|mentor|cofounder|co-founder|team lead|tech lead|lead"
)
_IS_MY = re.compile(rf"^\s+is\s+my\s+(?P<who>{_PEOPLE})\b", re.IGNORECASE)
_FILLER = re.compile(
    r"(?:\s+(?:also|now|still|currently|mostly|actually|really|already|usually|always|"
    r"mainly|primarily|just|only|finally|recently|have|has|had|will|would|did|do|does))*\s*$",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|didn't|won't|isn't|aren't|wasn't)\s*$", re.IGNORECASE
)
_DETERMINER = r"the|our|my|their|his|her|its|this|that|these|those|a|an|some"
_LEFT_PHRASE = re.compile(
    rf"(?:^|\b)(?P<det>{_DETERMINER})\s+(?P<words>(?:[\w-]+\s+){{0,3}}[\w-]+)$", re.IGNORECASE
)
_RIGHT_SKIP = re.compile(rf"^\s*(?:(?:{_DETERMINER})\s+)?", re.IGNORECASE)
_RIGHT_PHRASE = re.compile(r"^(?P<words>[\w-]+(?:\s+[\w-]+){0,3})")
_STOP = frozenset(
    """and or but for with because to in at on of from by as if when while which who that
    than then so since after before into about over under is are was were be been very
    too also it this these those every each daily weekly today yesterday tomorrow now
    always never sometimes often usually again there here last ago year years week weeks
    month months day days night weekend morning evening lot lots bit""".split()
)
# "I" is the speaker; so is "we" (the speaker and those they did it with).
_PRONOUN_I = re.compile(r"(?:^|\s)(?:I|[Ww]e)$")
_CONTRACTIONS = (
    (re.compile(r"\bI['\u2019]m\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI['\u2019]ve\b", re.IGNORECASE), "I have"),
)
_SPECIFIC = ("person", "organisation", "project", "tool", "place")


@dataclass(frozen=True)
class _Argument:
    name: str
    type: EntityType | None
    named: bool  # an entity of the text (or the user), not a descriptive phrase
    end: int


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
    spans = entities(sentence)
    triples: list[Triple] = []
    previous: tuple[_Argument, int] | None = None  # last subject and where its object ended
    for span in spans:
        who = _IS_MY.match(sentence[span.end :])
        if who:
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
        relation, subject_hint, object_hint = _RELATIONS[phrase]
        before = sentence[: match.start()]
        if _NEGATED.search(before):
            continue
        left_end = len(_FILLER.sub("", before))
        subject = _left(sentence, left_end, spans)
        if subject is None and previous is not None:
            gap = sentence[previous[1] : left_end].strip(" ,").lower()
            if gap in ("and", "but", "and also", ""):
                subject = previous[0]
        if subject is None:
            continue
        obj = _right(sentence, match.end(), spans)
        if obj is None or (relation == "is" and not obj.named):
            continue
        if relation == "is" and _IS_MY.match(sentence[subject.end :]):
            continue
        if not (subject.named or obj.named):
            continue
        subject_type, object_type = _type(subject, subject_hint), _type(obj, object_hint)
        if phrase in _PASSIVE:
            subject, obj = obj, subject
            subject_type, object_type = _type(subject, subject_hint), _type(obj, object_hint)
        triples.append(
            Triple(
                subject=subject.name,
                subject_type=subject_type,
                relation=relation,
                object=obj.name,
                object_type=object_type,
                confidence=0.6 if subject.named and obj.named else 0.45,
                source_id=source_id,
            )
        )
        previous = (subject, obj.end)
    return triples


def _left(sentence: str, end: int, spans: list[Span]) -> _Argument | None:
    text = sentence[:end]
    for span in spans:
        if span.end == end:
            return _Argument(span.text, _span_type(span), True, span.end)
    if _PRONOUN_I.search(text):
        return _Argument("user", "person", True, end)
    phrase = _LEFT_PHRASE.search(text)
    if phrase:
        words = phrase.group("words").split()
        # "the deploy script" but not "the script that Bob": stop at function words.
        while words and words[0].lower() in _STOP:
            words = words[1:]
        if words and not any(w.lower() in _STOP for w in words):
            return _Argument(" ".join(words).lower(), "concept", False, end)
    return None


def _right(sentence: str, start: int, spans: list[Span]) -> _Argument | None:
    skipped = _RIGHT_SKIP.match(sentence[start:])
    at = start + (skipped.end() if skipped else 0)
    for span in spans:
        if span.start == at:
            return _Argument(span.text, _span_type(span), True, span.end)
    phrase = _RIGHT_PHRASE.match(sentence[at:])
    if not phrase:
        return None
    words: list[str] = []
    for word in phrase.group("words").split():
        if word.lower() in _STOP:
            break
        words.append(word)
    if not words:
        return None
    text = " ".join(words)
    return _Argument(text.lower(), "concept", False, at + len(text))


def _span_type(span: Span) -> EntityType | None:
    return "organisation" if span.looks_like_organisation else None


def _type(argument: _Argument, hint: EntityType | None) -> EntityType:
    # What the words say (the user, "Acme Corp") over what the verb implies, over the
    # default of a descriptive phrase.
    if argument.type in ("person", "organisation"):
        return argument.type
    return hint or argument.type or "other"
