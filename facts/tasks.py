"""Background work of the fact store: thin entry points over the services."""

from celery import shared_task

from facts import services
from memoryhub.embeddings import EmbeddingError


@shared_task(
    name="facts.embed",
    acks_late=True,
    autoretry_for=(EmbeddingError,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=5,
)
def facts_embed(fact_ids: list[int]) -> int:
    """Embed these facts; retried with backoff while the embedder fails."""
    return services.facts_embed(fact_ids=fact_ids)


@shared_task(name="facts.backfill_embeddings", acks_late=True)
def facts_backfill_embeddings() -> int:
    """Embed every fact lacking a vector from the configured model."""
    return services.facts_backfill()
