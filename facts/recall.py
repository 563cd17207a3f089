"""Hybrid recall: the facts an agent should see for a message, as a prompt block.

1. candidates from FTS5 bm25 and from vector KNN, each over the caller's visible,
   recallable facts of the requested project (plus personal ones);
2. Reciprocal Rank Fusion;
3. re-scored by importance, recency and access frequency;
4. bounded by max items, a character budget and optional per-category budgets;
5. access counts updated; reads of other people's facts audited.
"""

import functools
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.db import close_old_connections, connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from facts.models import Fact, MemoryConfig, recency_score, use_score
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services import current_embedder, fact_touch, memory_config_get
from memoryhub.errors import InvalidInput
from memoryhub.search import Within, compile_within, rrf
from teams.services import Actor, audit_log

logger = logging.getLogger(__name__)

# Candidates per list. Fusion only needs the head of each list; the vector list is
# shorter because each vector candidate costs a Hamming-scan slot on large stores.
FTS_CANDIDATES = 50
VECTOR_CANDIDATES = 20
# Two pools: a vector search waits for its query's embedding, which must never queue
# behind it.
_query_embedding_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-embed")
_vector_search_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-vectors")
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
    "created_at",
)
CONTENT, CATEGORY = LOADED_FIELDS.index("content"), LOADED_FIELDS.index("category")


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

    @property
    def id(self) -> int:
        return self.row[0]

    @property
    def category(self) -> str:
        return self.row[CATEGORY]

    @functools.cached_property
    def fact(self) -> Fact:
        """The fact, with LOADED_FIELDS only: built for the items recalled, not for
        every candidate scored."""
        return Fact.from_db(connection.alias, LOADED_FIELDS, self.row)

    def line(self) -> str:
        return f"- [{self.category}] {self.row[CONTENT]}"

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


def _embed_query(query: str, config: MemoryConfig, notes: list[str]):
    if not config.embeddings_enabled:
        return None
    try:
        return current_embedder(config).embed([query])[0]
    except Exception as exc:  # the embedder is an edge we do not own: degrade, don't fail
        logger.warning("Query embedding failed, recalling by keywords only: %s", exc)
        notes.append(f"embedder unavailable ({exc.__class__.__name__}); keyword recall only")
        return None


def _knn(vector: Any, scope: QuerySet, compiled: Within) -> list:
    if vector is None:
        return []
    return FACT_VECTORS.knn(vector, k=VECTOR_CANDIDATES, within=scope, compiled=compiled)


def _vector_search(embedding: Future, scope: QuerySet, compiled: Within) -> tuple[Any, list]:
    """Search the vectors for the query's embedding once it is ready, on a pool thread's
    own connection."""
    close_old_connections()  # drop a connection that has gone stale or too old
    vector = embedding.result()
    return vector, _knn(vector, scope, compiled)


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


def fact_recall(
    *,
    actor: Actor,
    query: str,
    project: str | None = None,
    max_items: int | None = None,
    char_budget: int | None = None,
    category_budget: dict[str, int] | None = None,
    touch: bool = True,
) -> RecallResult:
    """Recall the facts relevant to ``query`` for the acting user."""
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

    notes: list[str] = []
    # The query is embedded while the caller's scope is built and searched.
    embedding = _query_embedding_pool.submit(_embed_query, query, config, notes)
    scope = recall_scope(user=actor.user, project=project)
    compiled = compile_within(scope)  # once, for both searches
    if connection.in_atomic_block:
        # Inside a transaction another connection would not see its writes: search in
        # this thread, overlapping only the query embedding with the full-text search.
        fts_hits = FACT_FTS.search_words(query, limit=FTS_CANDIDATES, within=compiled)
        vector = embedding.result()
        vec_hits = _knn(vector, scope, compiled)
    else:
        # The vector search on a pool thread (its own connection) once the embedding is
        # ready, while this thread runs the full-text search: SQLite, numpy and
        # onnxruntime release the GIL.
        pending = _vector_search_pool.submit(_vector_search, embedding, scope, compiled)
        fts_hits = FACT_FTS.search_words(query, limit=FTS_CANDIDATES, within=compiled)
        vector, vec_hits = pending.result()
    vec_hits = [h for h in vec_hits if h.similarity >= MIN_VECTOR_SIMILARITY]
    mode = "hybrid" if vector is not None else "keyword"

    bm25_rank = {h.id: i for i, h in enumerate(fts_hits, start=1)}
    bm25_score = {h.id: h.score for h in fts_hits}
    vec_rank = {h.id: i for i, h in enumerate(vec_hits, start=1)}
    similarity = {h.id: h.similarity for h in vec_hits}
    fused = rrf([[h.id for h in fts_hits], [h.id for h in vec_hits]], k=config.rrf_k)
    if not fused:
        return RecallResult(block="", items=[], mode=mode, notes=notes)

    # Both candidate lists were drawn from ``scope`` already.
    rows = Fact.objects.filter(pk__in=list(fused)).order_by().values_list(*LOADED_FIELDS)
    by_id = {row[0]: row for row in rows}
    now = timezone.now()
    # Fused scores are at most 2 / (k + 1); normalise so boosts weigh the same whatever k.
    top = 2.0 / (config.rrf_k + 1)
    scored: list[RecallItem] = []
    for fact_id, fused_score in fused.items():
        row = by_id.get(fact_id)
        if row is None:
            continue
        boosts = _boosts(row, config=config, now=now)
        scored.append(
            RecallItem(
                row=row,
                score=fused_score / top + sum(boosts.values()),
                bm25_rank=bm25_rank.get(fact_id),
                vector_rank=vec_rank.get(fact_id),
                bm25=bm25_score.get(fact_id),
                similarity=similarity.get(fact_id),
                fused=fused_score,
                boosts=boosts,
            )
        )
    scored.sort(key=lambda item: (-item.score, -item.id))

    chosen: list[RecallItem] = []
    used_chars = 0
    per_category: dict[str, int] = {}
    for item in scored:
        if len(chosen) >= max_items:
            break
        length = len(item.line()) + 1
        if used_chars + length > char_budget:
            continue
        limit = budgets.get(item.category)
        if limit is not None and per_category.get(item.category, 0) >= limit:
            continue
        chosen.append(item)
        used_chars += length
        per_category[item.category] = per_category.get(item.category, 0) + 1

    block = "\n".join([BLOCK_HEADER, *(item.line() for item in chosen)]) if chosen else ""
    if touch and chosen:
        used = [item.fact.pk for item in chosen]
        others = [item.fact.pk for item in chosen if item.fact.owner_id != actor.user.pk]
        if connection.in_atomic_block:
            _record_use(actor, used, others, project)
        else:
            _record_use_later(actor, used, others, project)
    return RecallResult(block=block, items=chosen, mode=mode, notes=notes)


# Outside transactions the access counts and cross-scope audit events of recalls are
# written after the answers, on one thread with its own connection, gathered for
# USE_FLUSH_SECONDS into one write: a write transaction per recall (and now and then a
# WAL checkpoint) would otherwise sit in the latency of the recalls around it. Counts
# wait at most that long; a process that stops cleanly writes them before it exits.
USE_FLUSH_SECONDS = 1.0
_use_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-use")
_uses: list[tuple[Actor, list[int], list[int], str | None]] = []
_uses_lock = threading.Lock()
_flush_now = threading.Event()


def recall_uses_flush() -> None:
    """Write the access counts and audit events of recent recalls now, and wait for
    them (the test suite does between tests). A process that exits waits for them
    anyway: the pool's thread finishes its work first."""
    _flush_now.set()
    _use_pool.submit(_flush_now.clear).result()


def _record_use(actor: Actor, used: list[int], others: list[int], project: str | None) -> None:
    fact_touch(fact_ids=used)
    _audit_cross_scope(actor, others, project)


def _audit_cross_scope(actor: Actor, others: list[int], project: str | None) -> None:
    if others:
        audit_log(
            actor=actor,
            action="recall.cross_scope",
            target_type="fact",
            target_id=others[0],
            details={"ids": others, "project": project or ""},
        )


def _record_use_later(
    actor: Actor, used: list[int], others: list[int], project: str | None
) -> None:
    with _uses_lock:
        _uses.append((actor, used, others, project))
        first = len(_uses) == 1
    if first:
        _use_pool.submit(_uses_write, USE_FLUSH_SECONDS)


def _uses_write(delay: float) -> None:
    """Write the uses gathered so far, after ``delay`` seconds for more to join (or
    at once when ``recall_uses_flush`` asks)."""
    _flush_now.wait(delay)
    _flush_now.clear()
    with _uses_lock:
        uses = list(_uses)
        _uses.clear()
    close_old_connections()  # drop a connection that has gone stale or too old
    try:
        with transaction.atomic():
            fact_touch(fact_ids=[i for _, used, _, _ in uses for i in used])
            for actor, _, others, project in uses:
                _audit_cross_scope(actor, others, project)
    except Exception:  # bookkeeping: never worth more than a log line
        logger.exception("Recording the use of recalled facts failed")
