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
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from facts.models import Fact, MemoryConfig, recency_score, use_score
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services import current_embedder, fact_touch, memory_config_get
from memoryhub.embeddings.pipeline import embed_soon
from memoryhub.errors import InvalidInput
from memoryhub.search import Within, compile_within, rrf
from teams.services import Actor, audit_log

logger = logging.getLogger(__name__)

# Candidates per list. Fusion only needs the head of each list; the vector list is
# shorter because each vector candidate costs a Hamming-scan slot on large stores.
FTS_CANDIDATES = 50
VECTOR_CANDIDATES = 20
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

    @property
    def content(self) -> str:
        return self.row[CONTENT]

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


class QueryEmbedding:
    """The query's vector, embedded beside the full-text search; None when embeddings
    are off or the embedder fails (recall then goes on by keywords, and says so)."""

    def __init__(self, query: str, config: MemoryConfig, notes: list[str]) -> None:
        self.notes = notes
        self.pending = None
        if config.embeddings_enabled:
            try:
                self.pending = embed_soon(current_embedder(config), query)
            except Exception as exc:  # a remote embedder misconfigured, a model file gone
                self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        logger.warning("Query embedding failed, recalling by keywords only: %s", exc)
        self.notes.append(f"embedder unavailable ({exc.__class__.__name__}); keyword recall only")

    def vector(self) -> Any:
        if self.pending is None:
            return None
        try:
            return self.pending.result()
        except Exception as exc:  # the embedder is an edge we do not own: degrade, don't fail
            self._failed(exc)
            return None
        finally:
            self.pending = None


def _knn(vector: Any, scope: QuerySet, compiled: Within) -> list:
    if vector is None:
        return []
    return FACT_VECTORS.knn(vector, k=VECTOR_CANDIDATES, within=scope, compiled=compiled)


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
    # The query is embedded while the caller's scope is built and searched by words.
    embedding = QueryEmbedding(query, config, notes)
    scope = recall_scope(user=actor.user, project=project)
    compiled = compile_within(scope)  # once, for both searches
    fts_hits = FACT_FTS.search_words(query, limit=FTS_CANDIDATES, within=compiled)
    vector = embedding.vector()
    vec_hits = _knn(vector, scope, compiled)
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
        _record_use(actor, [item.fact for item in chosen], project)
    return RecallResult(block=block, items=chosen, mode=mode, notes=notes)


@transaction.atomic
def _record_use(actor: Actor, recalled: list[Fact], project: str | None) -> None:
    """Count one more access of each recalled fact and audit the reading of other
    people's facts, in the request: an audit event is written with the read it records,
    or the read fails."""
    fact_touch(fact_ids=[fact.pk for fact in recalled])
    others = [fact.pk for fact in recalled if fact.owner_id != actor.user.pk]
    if others:
        audit_log(
            actor=actor,
            action="recall.cross_scope",
            target_type="fact",
            target_id=others[0],
            details={"ids": others, "project": project or ""},
        )
