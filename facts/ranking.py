"""How recall ranks its candidates: the signals of each fact and how they add up.

Everything here works on plain values (scores, words, neighbours), so each stage can be
tried and measured on its own; ``facts.recall`` gathers the values and applies the
stages. The stages, each a field of ``RecallTuning`` (0 switches a weight off):

- fusion of the full-text and vector retrievers, each score min-max normalised over the
  candidates so that each keeps its confidence ("minmax"); textbook Reciprocal Rank
  Fusion remains a choice ("rrf"). The vectors are searched and scored with the query
  less the names of the speakers it asks about: statements are embedded with who said
  them, so in "What did Caroline research?" the name would make every line of hers look
  alike, and the speaker prior already pulls what she said;
- soft AND: the share of the query's content words a fact holds, so that facts with more
  of them come first, whatever the retriever said;
- a window: the query's similarity to the fact together with its session neighbours;
- priors: facts said by a person the query names; facts that carry a time for a
  question about time; facts that happened on a day, in a month or a year the query
  names (these join the candidates too); facts of a session
  that matches the query as a whole, by score and by the share of the query's content
  words its candidates hold between them (soft AND over the session: "What novel does
  Tim read on the train?" answered by one turn about the novel and the next about the
  train); and a penalty for turns that say next to nothing ("ok", "thanks!");
- a neighbour boost: a fact next to a strong hit in its session takes a share of its
  score (relative to the best candidate's, so the share means the same whatever the
  weights' scale).
"""

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.search.text import STOPWORDS, content_stems, stem, words

FUSIONS = ("minmax", "rrf")


@dataclass(frozen=True)
class RecallTuning:
    """The settings of every ranking stage. The weights' defaults were fitted on three
    LoCoMo conversations (``bench/recall_quality.py --fit``: the weights that give the
    evidence the most of a softmax over each question's candidates) and checked on two
    more."""

    fusion: str = "minmax"
    # 1: the vector search and scores leave out the names of the speakers the query
    # names; 0: they take the query as it is.
    query_without_speakers: float = 1.0
    fts_candidates: int = 60
    vector_candidates: int = 40
    # bm25 weight of the neighbours' words in a fact's entry (content weighs 1).
    context_weight: float = 0.3
    weight_bm25: float = 0.6
    weight_vector: float = 0.55
    weight_coverage: float = 0.2
    weight_window: float = 0.35
    weight_speaker: float = 0.75
    weight_time: float = 0.5
    weight_date: float = 0.55
    weight_session: float = 0.05
    weight_session_coverage: float = 0.65
    weight_informative: float = 0.05
    weight_question: float = 0.15
    # Shares of the best-scored neighbour's score (as a share of the best candidate's).
    neighbour_share: float = 0.45
    answer_share: float = 0.4
    # Neighbours of this many of the best hits join the candidates.
    neighbour_candidates: int = 10
    # Facts that happened on a day or in a month the query names join the candidates,
    # up to this many.
    dated_candidates: int = 40

    @classmethod
    def from_settings(cls, overrides: Mapping[str, Any] | None) -> "RecallTuning":
        """The defaults with the stored overrides; a stored value of a setting that no
        longer exists is ignored."""
        known = {f.name: f for f in fields(cls)}
        values = {k: v for k, v in (overrides or {}).items() if k in known}
        return replace(cls(), **values)

    @classmethod
    def clean(cls, overrides: Any) -> dict[str, Any]:
        """Validated overrides (from the API or the settings page)."""
        if not isinstance(overrides, Mapping):
            raise InvalidInput("Recall tuning is an object of setting: value.")
        known = {f.name: f for f in fields(cls)}
        cleaned: dict[str, Any] = {}
        for name, value in overrides.items():
            if name not in known:
                raise InvalidInput(
                    f"Unknown recall setting '{str(name)[:40]}': use {', '.join(known)}."
                )
            if name == "fusion":
                if value not in FUSIONS:
                    raise InvalidInput(f"fusion is one of {', '.join(FUSIONS)}.")
            elif name.endswith("_candidates"):
                if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 200:
                    raise InvalidInput(f"{name} is a whole number from 0 to 200.")
            elif (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0 <= value <= 10
            ):
                raise InvalidInput(f"{name} is a number from 0 to 10.")
            cleaned[name] = value
        return cleaned

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def min_max(scores: Mapping[int, float], ids: Iterable[int]) -> dict[int, float]:
    """Each of ``ids`` scored 0..1 by where its score lies between the lowest and the
    highest of ``scores`` (an id without a score gets 0; equal scores all get 1)."""
    if not scores:
        return dict.fromkeys(ids, 0.0)
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {i: ((scores[i] - low) / span if span > 0 else 1.0) if i in scores else 0.0 for i in ids}


def informativeness(text: str) -> float:
    """1 for a statement of six content words or more, down to 0 for one of none: an
    "ok, thanks!" tells recall next to nothing."""
    return min(1.0, sum(1 for w in words(text) if w not in STOPWORDS) / 6)


# A note closing a statement, such as an attachment's caption ("... [shares a photo: ...]").
_TRAILING_NOTE = re.compile(r"\s*\[[^\[\]]*\]\s*$")


def asks(text: str) -> bool:
    """Whether the statement ends by asking something: its answer, if any, is the next
    turn."""
    return _TRAILING_NOTE.sub("", text).rstrip().endswith("?")


def without_names(query: str, speakers: Iterable[str]) -> str:
    """``query`` less the words that name ``speakers`` (as ``named_speakers`` finds them,
    with a possessive "'s"); the query as it is when nothing else would be left."""
    parts = sorted({p for s in speakers for p in words(s) if len(p) >= 3}, key=len, reverse=True)
    if not parts:
        return query
    naming = re.compile(
        r"\b(?:" + "|".join(map(re.escape, parts)) + ")(?:['\u2019]s)?\\b", re.IGNORECASE
    )
    bare = " ".join(naming.sub(" ", query).split())
    return bare if any(w not in STOPWORDS for w in words(bare)) else query


def named_speakers(query: str, speakers: Iterable[str]) -> dict[str, float]:
    """The speakers the query names, by any word of their name of three letters or
    more ("Caroline" names "Caroline Smith"), with their weight: 1 for the one named
    first (the subject of "What did Jon tell Gina?"), a half for the others."""
    asked = words(query)
    first: dict[str, int] = {}
    for speaker in speakers:
        places = [asked.index(p) for p in words(speaker) if len(p) >= 3 and p in asked]
        if speaker and places:
            first[speaker] = min(places)
    ordered = sorted(first, key=first.get)
    return {speaker: 1.0 if i == 0 else 0.5 for i, speaker in enumerate(ordered)}


_TIME_QUESTION = re.compile(
    r"\b(when|how long|what (year|month|day|date|time|week)|which (year|month|day|week)|"
    r"what date|how many (days|weeks|months|years)|since|ago|last (year|month|week))\b",
    re.IGNORECASE,
)
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|weekend|ago|last (night|week|month|year|weekend|"
    r"summer|winter|spring|fall)|next (week|month|year|weekend)|this (week|month|year|"
    r"weekend|morning|evening)|(mon|tues|wednes|thurs|fri|satur|sun)day|"
    + r"(19|20)\d\d|\d+ (days?|weeks?|months?|years?))\b",
    re.IGNORECASE,
)
_MONTH = "(" + "|".join(_MONTHS) + ")"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_ORDINAL} {_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH} {_ORDINAL},? (\d{{4}})\b", re.IGNORECASE)
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH},? (\d{{4}})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(19|20)\d\d\b")


def is_time_question(query: str) -> bool:
    return bool(_TIME_QUESTION.search(query))


# A month named by itself, capitalised ("May", not "may").
_MONTH_WORD = re.compile(r"\b(" + "|".join(m.capitalize() for m in _MONTHS) + r")\b")


def carries_time(text: str) -> bool:
    return bool(_TIME_WORDS.search(text) or _MONTH_WORD.search(text))


@dataclass(frozen=True)
class Moments:
    """The times a query names: spans of days or months ("on 1 February, 2023", "in
    May 2023"), bare years, and months named without a year."""

    spans: tuple[tuple[datetime, datetime], ...] = ()
    years: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.spans or self.years or self.months)

    def holds(self, when: datetime | None) -> bool:
        if when is None:
            return False
        if any(start <= when < end for start, end in self.spans):
            return True
        return when.year in self.years or when.month in self.months


def _day(year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
    if not 1 <= year <= 9998:
        return None
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:  # "31 February"
        return None
    return start, start + timedelta(days=1)


def _month_span(year: int, month: int) -> tuple[datetime, datetime] | None:
    if not 1 <= year <= 9998:
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    return start, datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)


_MONTH_OF = {name: i + 1 for i, name in enumerate(_MONTHS)}


def named_moments(query: str) -> Moments:
    """The days, months and years ``query`` names (dates in the usual English forms
    and ISO 8601), each taken once: a date's month and year are not named again."""
    spans: list[tuple[datetime, datetime] | None] = []
    rest = query
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        for match in pattern.finditer(rest):
            parts = dict(zip(order, match.groups(), strict=True))
            spans.append(_day(int(parts["y"]), _MONTH_OF[parts["m"].lower()], int(parts["d"])))
        rest = pattern.sub(" ", rest)
    spans += [_day(*(int(g) for g in m.groups())) for m in _ISO_DAY.finditer(rest)]
    rest = _ISO_DAY.sub(" ", rest)
    spans += [
        _month_span(int(m.group(2)), _MONTH_OF[m.group(1).lower()])
        for m in _MONTH_YEAR.finditer(rest)
    ]
    rest = _MONTH_YEAR.sub(" ", rest)
    return Moments(
        spans=tuple(span for span in spans if span is not None),
        years=frozenset(int(m.group(0)) for m in _YEAR.finditer(rest)),
        months=frozenset(_MONTH_OF[m.lower()] for m in _MONTH_WORD.findall(rest)),
    )


@dataclass
class Candidate:
    """One fact recall considers, with its signals."""

    id: int
    content: str
    speaker: str = ""
    session: tuple | None = None  # (owner, session id): facts of one session
    occurred_at: datetime | None = None
    bm25: float | None = None  # -bm25 of the full-text match: higher is better
    similarity: float | None = None  # cosine with the query
    window: float | None = None  # cosine with the fact and its neighbours
    rrf: float = 0.0
    neighbours: tuple[int | None, int | None] = (None, None)
    parts: dict[str, float] | None = None
    score: float = 0.0


def rank(
    candidates: Sequence[Candidate],
    *,
    query: str,
    tuning: RecallTuning,
    rrf_top: float = 1.0,
) -> list[Candidate]:
    """Score every candidate (``score``, and each stage's share in ``parts``), best
    first."""
    ids = [c.id for c in candidates]
    by_id = {c.id: c for c in candidates}
    query_stems = {stem(w) for w in words(query) if w not in STOPWORDS}
    if tuning.fusion == "rrf":
        fused = {c.id: c.rrf / rrf_top for c in candidates}
        parts = {c.id: {"rrf": fused[c.id]} for c in candidates}
    else:
        lexical = min_max({c.id: c.bm25 for c in candidates if c.bm25 is not None}, ids)
        dense = min_max({c.id: c.similarity for c in candidates if c.similarity is not None}, ids)
        window = min_max({c.id: c.window for c in candidates if c.window is not None}, ids)
        parts = {
            i: {
                "bm25": tuning.weight_bm25 * lexical[i],
                "vector": tuning.weight_vector * dense[i],
                "window": tuning.weight_window * window[i],
            }
            for i in ids
        }
        fused = {i: sum(p.values()) for i, p in parts.items()}
    # Priors.
    named = named_speakers(query, {c.speaker for c in candidates})
    time_question = is_time_question(query)
    moments = named_moments(query)
    sessions: dict[tuple, float] = {}
    # The query's content words each fact holds (with who said it).
    held = {
        c.id: query_stems & content_stems(f"{c.speaker} {c.content}" if c.speaker else c.content)
        for c in candidates
        if query_stems
    }
    covered: dict[tuple, set[str]] = {}
    for c in candidates:
        if c.session is not None:
            sessions[c.session] = sessions.get(c.session, 0.0) + fused[c.id]
            if held and tuning.weight_session_coverage:
                covered.setdefault(c.session, set()).update(held[c.id])
    best_session = max(sessions.values(), default=0.0)
    for c in candidates:
        share = parts[c.id]
        if tuning.weight_coverage:
            share["coverage"] = (
                tuning.weight_coverage * len(held[c.id]) / len(query_stems) if held else 0.0
            )
        if c.session in covered:
            share["session_coverage"] = (
                tuning.weight_session_coverage * len(covered[c.session]) / len(query_stems)
            )
        if named and tuning.weight_speaker:
            share["speaker"] = tuning.weight_speaker * named.get(c.speaker, 0.0)
        if tuning.weight_time and time_question:
            share["time"] = tuning.weight_time * carries_time(c.content)
        if tuning.weight_date and moments:
            share["date"] = tuning.weight_date * moments.holds(c.occurred_at)
        if c.session is not None and best_session > 0 and tuning.weight_session:
            share["session"] = tuning.weight_session * sessions[c.session] / best_session
        if tuning.weight_informative:
            share["informative"] = -tuning.weight_informative * (1 - informativeness(c.content))
        if tuning.weight_question and asks(c.content):
            share["question"] = -tuning.weight_question
    # Each fact's score so far, as a share of the best: a neighbour takes a share of
    # that, whatever the scale the weights give the scores.
    before = {c.id: sum(parts[c.id].values()) for c in candidates}
    top = max(before.values(), default=0.0)
    before = {i: max(0.0, score) / top if top > 0 else 0.0 for i, score in before.items()}
    for c in candidates:
        if tuning.neighbour_share:
            around = [before[n] for n in c.neighbours if n is not None and n in by_id]
            if around:
                parts[c.id]["neighbour"] = tuning.neighbour_share * max(around)
        previous = c.neighbours[0]
        if tuning.answer_share and previous in by_id and asks(by_id[previous].content):
            parts[c.id]["answer"] = tuning.answer_share * before[previous]
        c.parts = parts[c.id]
        c.score = sum(c.parts.values())
    return sorted(candidates, key=lambda c: (-c.score, -c.id))
