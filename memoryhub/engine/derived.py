"""What other apps build out of facts, kept in step by the fact store's writes.

The fact store calls these; it does not import the apps that read it, and neither does
the engine: an app that builds rows out of facts registers its followers when it loads
(``AppConfig.ready``). New or changed facts are handed to each follower inside the
writing transaction, which queues its work for after the commit; after facts are
deleted (their derived rows cascade away with their foreign keys) each follower drops
what only they held up, inside the deleting transaction.
"""

from collections.abc import Callable, Sequence

FactsWritten = Callable[[list[int]], None]
FactsDeleted = Callable[[], None]

_written: list[FactsWritten] = []
_deleted: list[FactsDeleted] = []


def facts_derived_follow(*, written: FactsWritten, deleted: FactsDeleted) -> None:
    """Register an app's followers: ``written(fact_ids)`` when facts were written or
    changed (it queues its work with ``enqueue_on_commit``), ``deleted()`` when facts
    were deleted; both inside the writing transaction."""
    if written not in _written:
        _written.append(written)
    if deleted not in _deleted:
        _deleted.append(deleted)


def facts_derived_queue(*, fact_ids: Sequence[int]) -> None:
    """Hand these new or changed facts to every follower (one call per batch), which
    queues its work for once the transaction commits."""
    if not fact_ids:
        return
    for follower in _written:
        follower(list(fact_ids))


def facts_derived_prune() -> None:
    """Drop what was built out of facts just deleted (inside the deleting transaction)."""
    for follower in _deleted:
        follower()
