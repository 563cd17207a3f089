"""Hybrid recall: the facts an agent should see for a message, as a prompt block.

1. candidates from FTS5 bm25 (each fact's entry also holds its session neighbours'
   words) and from vector KNN, each over the caller's visible, recallable facts of the
   requested project (plus personal ones), and the session neighbours of the best;
2. ranked by ``facts.ranking``: normalised fusion, soft AND, the session window,
   priors (speaker, time, session, informativeness, questions) and the neighbour and
   answer boosts;
3. re-scored by importance, recency and access frequency;
4. bounded by max items, a character budget and optional per-category budgets;
5. access counts updated, the recall counted for the day; reads of other people's facts
   audited.
"""

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from facts.models import Fact, recency_score, use_score
from facts.ranking import (
    Candidate,
    RecallTuning,
    named_moments,
    named_speakers,
    rank,
    without_names,
)
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.access import fact_touch, recall_day_count
from facts.sessions import neighbours_in_sessions
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.db.durability import commit_unflushed
from memoryhub.engine.embeddings.configured import QueryEmbedding
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.search import Within, compile_within, ids_within, rrf
from memoryhub.engine.search.readahead import search_beside
from teams.services import Actor, audit_log

# Candidates per list, by default (see ``RecallTuning``).
FTS_CANDIDATES = RecallTuning.fts_candidates
VECTOR_CANDIDATES = RecallTuning.vector_candidates
# Vector-only candidates less similar than this are noise, not memories.
MIN_VECTOR_SIMILARITY = 0.2
MAX_QUERY_LENGTH = 4000
BLOCK_HEADER = "## Recalled Facts"
# What scoring and the result need of each candidate (attribute names, in model order):
# loading whole model rows for ~70 candidates costs more than the searches' bookkeeping.
LOADED_FIELDS = (
    "id",
    "owner_id",
    "visibility",
    "project",
    "content",
    "category",
    "importance",
    "tags",
    "access_count",
    "last_accessed_at",
    "session_id",
    "occurred_at",
    "speaker",
    "created_at",
)
CONTENT, CATEGORY = LOADED_FIELDS.index("content"), LOADED_FIELDS.index("category")
OWNER, SPEAKER = LOADED_FIELDS.index("owner_id"), LOADED_FIELDS.index("speaker")
OCCURRED, SESSION = LOADED_FIELDS.index("occurred_at"), LOADED_FIELDS.index("session_id")


@dataclass
class RecallItem:
    row: tuple  # the fact's LOADED_FIELDS
    score: float
    bm25_rank: int | None
    vector_rank: int | None
    bm25: float | None
    similarity: float | None
    fused: float
    boosts: dict[str, float]
    signals: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> int:
        return self.row[0]

    @property
    def category(self) -> str:
        return self.row[CATEGORY]

    @property
    def content(self) -> str:
        return self.row[CONTENT]

    @functools.cached_property
    def fact(self) -> Fact:
        """The fact, with LOADED_FIELDS only: built for the items recalled, not for
        every candidate scored."""
        return Fact.from_db(connection.alias, LOADED_FIELDS, self.row)

    def line(self) -> str:
        """The fact as the block shows it; a statement someone made says who and when
        ("Caroline, 2023-05-08: I went to the support group yesterday"), since without
        them "yesterday" and "I" mean nothing to the reader."""
        speaker = self.row[SPEAKER]
        said = f"{speaker}, {self.row[OCCURRED]:%Y-%m-%d}: " if speaker else ""
        return f"- [{self.category}] {said}{self.row[CONTENT]}"

    def as_dict(self) -> dict[str, Any]:
        fact = self.fact
        return {
            "id": fact.pk,
            "content": fact.content,
            "category": fact.category,
            "score": round(self.score, 6),
            "bm25_rank": self.bm25_rank,
            "vector_rank": self.vector_rank,
            "bm25": None if self.bm25 is None else round(self.bm25, 4),
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "fused": round(self.fused, 6),
            "boosts": {k: round(v, 6) for k, v in self.boosts.items()},
            "signals": {k: round(v, 6) for k, v in self.signals.items()},
            "importance": fact.importance,
            "visibility": fact.visibility,
            "project": fact.project,
            "tags": fact.tags,
        }


@dataclass
class RecallResult:
    block: str
    items: list[RecallItem]
    mode: str  # hybrid, keyword, disabled
    notes: list[str] = field(default_factory=list)


def recall_scope(*, user: Any, project: str | None) -> QuerySet:
    """The facts recall may consider: visible, recallable, in the project or personal."""
    facts = Fact.objects.visible_to(user).recallable()
    if project:
        return facts.filter(Q(project=project) | Q(project=""))
    return facts.filter(project="")


def _knn(vector: Any, scope: QuerySet, compiled: Within, k: int) -> list:
    if vector is None or k <= 0:
        return []
    return FACT_VECTORS.knn(vector, k=k, within=scope, compiled=compiled)


def _fts_for(tuning: RecallTuning):
    weights = (*FACT_FTS.weights[:2], tuning.context_weight, *FACT_FTS.weights[3:])
    return FACT_FTS if weights == FACT_FTS.weights else replace(FACT_FTS, weights=weights)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def _loaded_rows(ids: set[int]) -> dict[int, tuple]:
    rows = Fact.objects.filter(pk__any_of=list(ids)).order_by().values_list(*LOADED_FIELDS)
    return {row[0]: row for row in rows}


def _neighbours(rows: dict[int, tuple]) -> dict[int, tuple[int | None, int | None]]:
    in_sessions = [fact_id for fact_id, row in rows.items() if row[SESSION]]
    return neighbours_in_sessions(in_sessions) if in_sessions else {}


def _similarities(
    vector: Any, ids: set[int], around: dict[int, tuple[int | None, int | None]]
) -> tuple[dict[int, float], dict[int, float]]:
    """Each candidate's cosine with the query, and its window's: the query's cosine
    with the sum of the fact's and its neighbours' vectors."""
    if vector is None:
        return {}, {}
    wanted = set(ids) | {n for i in ids for n in around.get(i, ()) if n is not None}
    stored = {i: _unit(v) for i, v in FACT_VECTORS.vectors(wanted).items()}
    query = _unit(np.asarray(vector, dtype="<f4"))
    own = {i: float(stored[i] @ query) for i in ids if i in stored}
    window: dict[int, float] = {}
    for i in ids:
        if i not in stored:
            continue
        parts = [stored[i], *(stored[n] for n in around.get(i, ()) if n in stored)]
        window[i] = float(_unit(np.sum(parts, axis=0)) @ query) if len(parts) > 1 else own[i]
    return own, window


def _boosts(row: tuple, *, config: MemoryConfig, now: Any) -> dict[str, float]:
    fact = dict(zip(LOADED_FIELDS, row, strict=True))
    recency = recency_score(
        fact["last_accessed_at"],
        fact["created_at"],
        now=now,
        half_life_days=config.recency_half_life_days,
    )
    return {
        "importance": config.weight_importance * fact["importance"],
        "recency": config.weight_recency * recency,
        "access": config.weight_access * use_score(fact["access_count"], saturation=100),
    }


@dataclass
class Gathered:
    """What recall ranks: its candidates with their signals, their rows, and where each
    retriever placed them."""

    mode: str
    candidates: list[Candidate] = field(default_factory=list)
    rows: dict[int, tuple] = field(default_factory=dict)
    bm25_rank: dict[int, int] = field(default_factory=dict)
    bm25_score: dict[int, float] = field(default_factory=dict)
    vec_rank: dict[int, int] = field(default_factory=dict)


def recall_candidates(
    *,
    actor: Actor,
    query: str,
    project: str | None,
    config: MemoryConfig,
    tuning: RecallTuning,
    notes: list[str],
) -> Gathered:
    """The facts recall considers for ``query``, each with its signals (see
    ``facts.ranking``), among those the acting user may recall."""
    # The query is embedded while the caller's scope is built and searched by words;
    # outside a transaction the nearest vectors are searched beside the words, on a
    # connection of their own. An embedder that fails or is too slow leaves the words
    # (the answer says so).
    embedding = QueryEmbedding(query, config)
    scope = recall_scope(user=actor.user, project=project)
    compiled = compile_within(scope)  # once, for every search

    def nearest() -> tuple[Any, list]:
        vector = embedding.vector()
        return vector, _knn(vector, scope, compiled, tuning.vector_candidates)

    beside = search_beside(nearest)
    fts_hits = (
        _fts_for(tuning).search_words(query, limit=tuning.fts_candidates, within=compiled)
        if tuning.fts_candidates
        else []
    )
    vector, vec_hits = nearest() if beside is None else beside.result()
    if embedding.failure:
        notes.append(f"{embedding.failure}; keyword recall only")
    vec_hits = [h for h in vec_hits if h.similarity >= MIN_VECTOR_SIMILARITY]
    mode = "hybrid" if vector is not None else "keyword"
    scoring = vector
    by_id: dict[int, tuple] = {}
    if vector is not None and tuning.query_without_speakers and (fts_hits or vec_hits):
        # A question about someone the hits were said by ("What did Caroline research?")
        # is searched and scored again without the name: statements are embedded with
        # who said them, so the name makes every line of hers look alike.
        by_id = _loaded_rows({h.id for h in fts_hits} | {h.id for h in vec_hits})
        named = named_speakers(query, {row[SPEAKER] for row in by_id.values()})
        bare = without_names(query, named)
        if bare != query and (bare_vector := embedding.of(bare)) is not None:
            scoring = bare_vector
            vec_hits = [
                h
                for h in _knn(bare_vector, scope, compiled, tuning.vector_candidates)
                if h.similarity >= MIN_VECTOR_SIMILARITY
            ]

    bm25_rank = {h.id: i for i, h in enumerate(fts_hits, start=1)}
    bm25_score = {h.id: h.score for h in fts_hits}
    vec_rank = {h.id: i for i, h in enumerate(vec_hits, start=1)}
    fused = rrf([[h.id for h in fts_hits], [h.id for h in vec_hits]], k=config.rrf_k)
    if not fused:
        return Gathered(mode=mode)

    # The session neighbours of the best hits are candidates too (those the caller may
    # recall): the turn after a question often holds its answer.
    ids = set(fused)
    # Facts that happened on a day (or in a month) the query names.
    moments = named_moments(query)
    if moments.spans and tuning.weight_date and tuning.dated_candidates:
        when = Q()
        for start, end in moments.spans:
            when |= Q(occurred_at__gte=start, occurred_at__lt=end)
        ids |= set(
            scope.filter(when).order_by().values_list("pk", flat=True)[: tuning.dated_candidates]
        )
    # The rows are read first: they tell which facts are in a session.
    unread = ids - by_id.keys()
    by_id = {i: by_id[i] for i in ids if i in by_id} | (_loaded_rows(unread) if unread else {})
    around = _neighbours(by_id)
    best = sorted(fused, key=lambda i: -fused[i])[: tuning.neighbour_candidates]
    extra = {n for i in best for n in around.get(i, ()) if n is not None} - ids
    extra = ids_within(sorted(extra), compiled) if extra else set()
    if extra:
        extra_rows = _loaded_rows(extra)
        around.update(_neighbours(extra_rows))
        by_id.update(extra_rows)
        ids |= extra
    similarity, window = _similarities(scoring, ids, around)
    candidates = [
        Candidate(
            id=fact_id,
            content=row[CONTENT],
            speaker=row[SPEAKER],
            session=(row[OWNER], row[SESSION]) if row[SESSION] else None,
            occurred_at=row[OCCURRED],
            bm25=-bm25_score[fact_id] if fact_id in bm25_score else None,
            similarity=similarity.get(fact_id),
            window=window.get(fact_id),
            rrf=fused.get(fact_id, 0.0),
            neighbours=around.get(fact_id, (None, None)),
        )
        for fact_id, row in by_id.items()
    ]
    return Gathered(
        mode=mode,
        candidates=candidates,
        rows=by_id,
        bm25_rank=bm25_rank,
        bm25_score=bm25_score,
        vec_rank=vec_rank,
    )


def fact_recall(
    *,
    actor: Actor,
    query: str,
    project: str | None = None,
    max_items: int | None = None,
    char_budget: int | None = None,
    category_budget: dict[str, int] | None = None,
    touch: bool = True,
    count_later: bool = False,
    tuning: RecallTuning | None = None,
) -> RecallResult:
    """Recall the facts relevant to ``query`` for the acting user. ``touch``: record the
    use (the recall served, an access of each fact recalled, the audit of others' facts
    read); with ``count_later``, only the audit, the caller counting the use with
    ``fact_recall_count`` once its answer is on its way."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("The query must not be empty.")
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidInput(f"The query is at most {MAX_QUERY_LENGTH} characters.")
    config = memory_config_get()
    max_items = config.recall_max_items if max_items is None else max_items
    char_budget = config.recall_char_budget if char_budget is None else char_budget
    if max_items < 1 or max_items > 100:
        raise InvalidInput("max_items must be between 1 and 100.")
    if char_budget < 1 or char_budget > 100_000:
        raise InvalidInput("char_budget must be between 1 and 100000.")
    budgets = dict(config.recall_category_budget or {})
    budgets.update(category_budget or {})
    if not config.memory_enabled:
        return RecallResult(
            block="",
            items=[],
            mode="disabled",
            notes=["memory is switched off in Settings -> Memory"],
        )

    tuning = RecallTuning.from_settings(config.recall_tuning) if tuning is None else tuning
    notes: list[str] = []
    gathered = recall_candidates(
        actor=actor, query=query, project=project, config=config, tuning=tuning, notes=notes
    )
    mode, by_id = gathered.mode, gathered.rows
    if not gathered.candidates:
        if touch:
            _record_use(actor, [], project, count=not count_later)
        return RecallResult(block="", items=[], mode=mode, notes=notes)
    bm25_rank, vec_rank = gathered.bm25_rank, gathered.vec_rank
    candidates = gathered.candidates
    # Fused scores are at most 2 / (k + 1); normalise so boosts weigh the same whatever k.
    ranked = rank(candidates, query=query, tuning=tuning, rrf_top=2.0 / (config.rrf_k + 1))
    now = timezone.now()
    # The keyword score a reader sees is 1 / its rank among their own keyword matches:
    # FTS5's bm25 weighs a word by how many rows of the whole table hold it and by their
    # average length, others' private rows included, so the raw figure (or any share of
    # it) would tell a reader about rows they cannot read.
    scored: list[RecallItem] = []
    for candidate in ranked:
        row = by_id[candidate.id]
        boosts = _boosts(row, config=config, now=now)
        scored.append(
            RecallItem(
                row=row,
                score=candidate.score + sum(boosts.values()),
                bm25_rank=bm25_rank.get(candidate.id),
                vector_rank=vec_rank.get(candidate.id),
                bm25=1.0 / bm25_rank[candidate.id] if candidate.id in bm25_rank else None,
                similarity=candidate.similarity,
                fused=candidate.score,
                boosts=boosts,
                signals=dict(candidate.parts or {}),
            )
        )
    scored.sort(key=lambda item: (-item.score, -item.id))

    restates = _restatements({item.id for item in scored})
    chosen: list[RecallItem] = []
    chosen_ids: set[int] = set()
    used_chars = 0
    per_category: dict[str, int] = {}
    for item in scored:
        if len(chosen) >= max_items:
            break
        if restates.get(item.id, set()) & chosen_ids:
            continue  # a summary of a chosen fact, or a fact a chosen summary states
        length = len(item.line()) + 1
        if used_chars + length > char_budget:
            continue
        limit = budgets.get(item.category)
        if limit is not None and per_category.get(item.category, 0) >= limit:
            continue
        chosen.append(item)
        chosen_ids.add(item.id)
        used_chars += length
        per_category[item.category] = per_category.get(item.category, 0) + 1

    block = "\n".join([BLOCK_HEADER, *(item.line() for item in chosen)]) if chosen else ""
    if touch:
        _record_use(actor, [item.fact for item in chosen], project, count=not count_later)
    return RecallResult(block=block, items=chosen, mode=mode, notes=notes)


def _restatements(ids: set[int]) -> dict[int, set[int]]:
    """Among the facts ``ids``, which restate which: a summary (or profile) and each
    source it was distilled from, both ways. A block holding one has no room for the
    other: whichever ranks higher stays."""
    pairs = Fact.derived_from.through.objects.filter(
        from_fact_id__in=ids, to_fact_id__in=ids
    ).values_list("from_fact_id", "to_fact_id")
    restates: dict[int, set[int]] = {}
    for derived, source in pairs:
        restates.setdefault(derived, set()).add(source)
        restates.setdefault(source, set()).add(derived)
    return restates


@transaction.atomic
def _record_use(
    actor: Actor, recalled: list[Fact], project: str | None, *, count: bool = True
) -> None:
    """Count the recall served and one more access of each recalled fact (unless
    ``count`` is off), and audit the reading of other people's facts, in the request: an
    audit event is written with the read it records, or the read fails."""
    others = [fact.pk for fact in recalled if fact.owner_id != actor.user.pk]
    if not others:
        # Counts alone are not worth a disk flush per recall; an audit event is.
        commit_unflushed()
    else:
        audit_log(
            actor=actor,
            action="recall.cross_scope",
            target_type="fact",
            target_id=others[0],
            details={"ids": others, "project": project or ""},
        )
    if count:
        fact_recall_count(user_id=actor.user.pk, fact_ids=[fact.pk for fact in recalled])


@transaction.atomic
def fact_recall_count(*, user_id: int, fact_ids: Sequence[int]) -> None:
    """Count a recall served to user ``user_id`` and one more access of each fact it
    held: bookkeeping, which a crash may lose (committed without a disk flush of its
    own, unless the transaction around it writes what needs one)."""
    commit_unflushed()
    recall_day_count(user_id=user_id)
    if fact_ids:
        fact_touch(fact_ids=fact_ids)
