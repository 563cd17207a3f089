"""Embedding facts (with the configured embedder): queueing after commit, embedding in chunks,
the sweep of facts still waiting, and the backfill."""

import contextlib
from collections.abc import Sequence
from typing import Any

from django.core.cache import cache
from django.db import transaction

from facts.models import Fact, Status
from facts.search import FACT_VECTORS
from memoryhub.engine.cache import CacheUnavailable
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.derived import facts_derived_queue
from memoryhub.engine.embeddings.configured import embedder_get, embedder_model_id
from memoryhub.engine.embeddings.pipeline import embed_chunks
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.tasks import enqueue_on_commit

EMBED_BATCH = 64
# Facts one embedding task takes along besides its own, and how long a sweep may hold
# the lock that keeps a second one from embedding the same facts (it is let go at the
# end; the timeout only frees it after a worker died mid-sweep).
EMBED_SWEEP = 1024
EMBED_SWEEP_LOCK = "facts:embed-sweep"
EMBED_SWEEP_LOCK_SECONDS = 300


def queue_embedding(fact_ids: list[int], config: MemoryConfig) -> None:
    """Embed these facts once the transaction commits. With embeddings off nothing is
    queued: switching them on starts the backfill, which embeds every fact without a
    vector."""
    from facts.tasks import facts_embed

    if fact_ids and config.embeddings_enabled:
        enqueue_on_commit(facts_embed, fact_ids)
    # What they say changed: the concept graph reads them again.
    facts_derived_queue(fact_ids=fact_ids)


def facts_embed(*, fact_ids: Sequence[int]) -> int:
    """Embed these facts with the configured model and store their vectors. Facts that
    changed or vanished meanwhile, and facts that already have a vector from this model
    (a task delivered again after its worker died), are skipped; returns how many were
    embedded. Embedder errors propagate (the task retries; the facts stay as they are)."""
    config = memory_config_get()
    if not config.embeddings_enabled:
        return 0
    embedder = embedder_get(config)
    ids = list(fact_ids)

    def chunks():
        for start in range(0, len(ids), EMBED_BATCH):
            rows = list(
                Fact.objects.filter(pk__in=ids[start : start + EMBED_BATCH])
                .exclude(embedding_model=embedder.model_id)
                .values_list("pk", "content", "speaker")
            )
            if rows:
                yield (
                    [(pk, content) for pk, content, _ in rows],
                    [embedded_text(content, speaker) for _, content, speaker in rows],
                )

    # Each chunk is embedded while the one before it is stored.
    return sum(
        _vectors_store(rows, vectors, embedder)
        for (rows, _), vectors in embed_chunks(embedder, chunks(), lambda chunk: chunk[1])
    )


def embedded_text(content: str, speaker: str) -> str:
    """What a fact's vector is made of: what it says, and who said it ("Caroline: I
    went to the support group"), since questions name the person."""
    return f"{speaker}: {content}" if speaker else content


def _vectors_store(rows: list[tuple[int, str]], vectors: Any, embedder: Any) -> int:
    """Store the vectors of the facts in ``rows`` (id, content embedded) whose content is
    still what was embedded; how many were stored."""
    FACT_VECTORS.ensure_dim(embedder.dim)
    with transaction.atomic():
        # The facts' rows are locked before their vectors, in the order a delete or an
        # edit locks them (fact, then vector): the other order deadlocks on PostgreSQL.
        current = dict(
            Fact.objects.filter(pk__in=[pk for pk, _ in rows])
            .order_by("pk")
            .select_for_update(of=("self",))
            .values_list("pk", "content")
        )
        fresh = [
            (pk, vec)
            for (pk, content), vec in zip(rows, vectors, strict=True)
            if current.get(pk) == content
        ]
        FACT_VECTORS.upsert(fresh, model=embedder.model_id)
        Fact.objects.filter(pk__in=[pk for pk, _ in fresh]).update(
            embedding_model=embedder.model_id
        )
    return len(fresh)


def facts_embed_waiting(*, limit: int = EMBED_SWEEP) -> int:
    """Embed up to ``limit`` active facts still waiting for a vector, oldest first; how many
    were embedded. Every write queues a small task of its own; whichever runs first
    takes the facts waiting behind it along in full batches, and the facts of writes
    whose task was never queued (the broker was down) with them. One sweep at a time:
    two would embed the same facts twice. Without the shared cache (Redis down) no sweep
    can hold that lock, and the backfill embeds them later."""
    try:
        if not cache.add(EMBED_SWEEP_LOCK, True, timeout=EMBED_SWEEP_LOCK_SECONDS):
            return 0
    except CacheUnavailable:
        return 0
    try:
        config = memory_config_get()
        if not config.embeddings_enabled:
            return 0
        # Active facts: what recall reads (archived ones wait for the backfill).
        waiting = list(
            facts_needing_embedding(config)
            .filter(status=Status.ACTIVE)
            .order_by("pk")
            .values_list("pk", flat=True)[:limit]
        )
        return facts_embed(fact_ids=waiting) if waiting else 0
    finally:
        # Should Redis have gone since, the lock lapses after its timeout.
        with contextlib.suppress(CacheUnavailable):
            cache.delete(EMBED_SWEEP_LOCK)


def facts_needing_embedding(config: MemoryConfig | None = None):
    """Facts without a vector from the configured model."""
    config = config or memory_config_get()
    return Fact.objects.exclude(embedding_model=embedder_model_id(config))


def facts_backfill(*, batch_size: int = 256) -> int:
    """Embed every fact that has no vector or one from another model."""
    config = memory_config_get()
    if not config.embeddings_enabled:
        return 0
    total = 0
    last_id = 0
    while True:
        ids = list(
            facts_needing_embedding(config)
            .filter(pk__gt=last_id)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            return total
        total += facts_embed(fact_ids=ids)
        last_id = ids[-1]
