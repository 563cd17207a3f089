"""Background work of the wiki: thin entry points over the services."""

from celery import shared_task

from memoryhub.engine.embeddings import EmbeddingError
from memoryhub.engine.tasks import retried_while_failing
from wiki import services


@shared_task(name="wiki.rescan", acks_late=True)
def wiki_pages_rescan() -> int:
    """Give every page scanned by an older scanner the current scanner's verdict."""
    return services.wiki_pages_rescan()


@shared_task(
    name="wiki.embed",
    acks_late=True,
    **retried_while_failing(EmbeddingError),
)
def wiki_pages_embed(page_ids: list[int]) -> int:
    """Embed these pages' passages, and those of pages waiting behind them; retried with
    backoff while the embedder fails."""
    return services.wiki_pages_embed(page_ids=page_ids) + services.wiki_pages_embed_waiting()


@shared_task(name="wiki.embed_waiting", acks_late=True)
def wiki_pages_embed_waiting() -> int:
    """Embed the pages still waiting for vectors (their task was lost, or the model
    changed)."""
    return services.wiki_pages_embed_waiting()
