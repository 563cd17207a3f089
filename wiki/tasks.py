"""Background work of the wiki: thin entry points over the services."""

from celery import shared_task

from wiki import services


@shared_task(name="wiki.rescan", acks_late=True)
def wiki_pages_rescan() -> int:
    """Give every page scanned by an older scanner the current scanner's verdict."""
    return services.wiki_pages_rescan()
