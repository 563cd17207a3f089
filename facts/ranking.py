"""How recall ranks its candidates: the signals of each fact and how they add up.

Everything here works on plain values (scores, words, neighbours), so each stage can be
tried and measured on its own; ``facts.recall`` gathers the values and applies the
stages. The stages, each a field of ``RecallTuning`` (0 switches a weight off):

- fusion of the full-text and vector retrievers, each score min-max normalised over the
  candidates so that each keeps its confidence ("minmax"); textbook Reciprocal Rank
  Fusion remains a choice ("rrf");
- soft AND: the share of the query's content words a fact holds, so that facts with more
  of them come first, whatever the retriever said;
- a window: the query's similarity to the fact together with its session neighbours;
- priors: facts said by a person the query names; facts that carry a time (or happened
  in a month or year the query names) for a question about time; facts of a session
  that matches the query as a whole; and a penalty for turns that say next to nothing
  ("ok", "thanks!");
- a neighbour boost: a fact next to a strong hit in its session takes a share of its
  score.
"""

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any

from memoryhub.errors import InvalidInput
from memoryhub.search.text import STOPWORDS, content_stems, stem, words

FUSIONS = ("minmax", "rrf")


@dataclass(frozen=True)
class RecallTuning:
    """The settings of every ranking stage, with the defaults measured on the recall
    benchmark (``bench/recall_quality.py``)."""

    fusion: str = "minmax"
    fts_candidates: int = 60
    vector_candidates: int = 40
    # bm25 weight of the neighbours' words in a fact's entry (content weighs 1).
    context_weight: float = 0.3
    weight_bm25: float = 0.5
    weight_vector: float = 0.5
    weight_coverage: float = 0.3
    weight_window: float = 0.2
    weight_speaker: float = 0.15
    weight_time: float = 0.1
    weight_session: float = 0.1
    weight_informative: float = 0.1
    neighbour_share: float = 0.15
    # Neighbours of this many of the best hits join the candidates.
    neighbour_candidates: int = 10

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


def coverage(query_stems: set[str], text: str) -> float:
    """The share of the query's content words that ``text`` holds (soft AND)."""
    if not query_stems:
        return 0.0
    return len(query_stems & content_stems(text)) / len(query_stems)


def informativeness(text: str) -> float:
    """1 for a statement of six content words or more, down to 0 for one of none: an
    "ok, thanks!" tells recall next to nothing."""
    return min(1.0, sum(1 for w in words(text) if w not in STOPWORDS) / 6)


def named_speakers(query: str, speakers: Iterable[str]) -> set[str]:
    """The speakers the query names, by any word of their name of three letters or
    more ("Caroline" names "Caroline Smith")."""
    asked = set(words(query))
    named = set()
    for speaker in speakers:
        if speaker and any(len(part) >= 3 and part in asked for part in words(speaker)):
            named.add(speaker)
    return named


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
    + "|".join(_MONTHS)
    + r"|(19|20)\d\d|\d+ (days?|weeks?|months?|years?))\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(19|20)\d\d\b")


def is_time_question(query: str) -> bool:
    return bool(_TIME_QUESTION.search(query))


def carries_time(text: str) -> bool:
    return bool(_TIME_WORDS.search(text))


def moments_named(query: str) -> tuple[set[int], set[int]]:
    """The years and months (1-12) the query names."""
    years = {int(m.group(0)) for m in _YEAR.finditer(query)}
    months = {i + 1 for i, name in enumerate(_MONTHS) if name in set(words(query))}
    return years, months


def happened_then(when: datetime | None, years: set[int], months: set[int]) -> bool:
    if when is None or not (years or months):
        return False
    return (not years or when.year in years) and (not months or when.month in months)


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
    years, months = moments_named(query)
    sessions: dict[tuple, float] = {}
    for c in candidates:
        if c.session is not None:
            sessions[c.session] = sessions.get(c.session, 0.0) + fused[c.id]
    best_session = max(sessions.values(), default=0.0)
    for c in candidates:
        share = parts[c.id]
        if tuning.weight_coverage:
            share["coverage"] = tuning.weight_coverage * coverage(query_stems, c.content)
        if named and tuning.weight_speaker:
            share["speaker"] = tuning.weight_speaker * (c.speaker in named)
        if tuning.weight_time and (time_question or years or months):
            timely = (time_question and carries_time(c.content)) or happened_then(
                c.occurred_at, years, months
            )
            share["time"] = tuning.weight_time * timely
        if c.session is not None and best_session > 0 and tuning.weight_session:
            share["session"] = tuning.weight_session * sessions[c.session] / best_session
        if tuning.weight_informative:
            share["informative"] = -tuning.weight_informative * (1 - informativeness(c.content))
    before = {c.id: sum(parts[c.id].values()) for c in candidates}
    for c in candidates:
        if tuning.neighbour_share:
            around = [before[n] for n in c.neighbours if n is not None and n in by_id]
            if around:
                parts[c.id]["neighbour"] = tuning.neighbour_share * max(0.0, max(around))
        c.parts = parts[c.id]
        c.score = sum(c.parts.values())
    return sorted(candidates, key=lambda c: (-c.score, -c.id))
