"""Updating a row that another request may change or delete at the same moment.

Django's ``save()`` inserts the row again when its UPDATE matches nothing, so a row
deleted by one request could come back through another's edit. Every update service
re-reads its row here, inside its transaction, under a row lock (SQLite's write
transactions already hold the database lock from their first statement), and writes
only the fields it changed."""

from django.db import models, transaction

from memoryhub.engine.errors import NotFound, PreconditionFailed


def row_for_update[M: models.Model](
    instance: M, *, missing: str, expected_version: str | None = None
) -> M:
    """The current state of ``instance``'s row, locked until the transaction ends.
    NotFound(``missing``) when another request deleted it; PreconditionFailed when the
    caller names the version it read (``expected_version``) and the row has moved on."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("row_for_update needs a transaction to hold the lock")
    found = (
        type(instance)
        ._default_manager.select_for_update(of=("self",))
        .filter(pk=instance.pk)
        .first()
    )
    if found is None:
        raise NotFound(missing)
    if expected_version is not None and found.version != expected_version:
        raise PreconditionFailed(
            "This row changed since you read it: read it again, then retry your change.",
            extra={"version": found.version},
        )
    return found


def writes_serialise(space: str, key: int) -> None:
    """Hold, until the transaction ends, the lock of ``key`` in ``space`` (for example
    the facts of one owner), so that writers of the same rows run one after another.

    A writer that reads before it decides (does a near-duplicate of this fact exist?)
    must not decide on what a concurrent writer has not committed yet. SQLite's write
    transactions already run one at a time; on PostgreSQL this takes a transaction-level
    advisory lock, which other keys never wait for."""
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        raise RuntimeError("writes_serialise needs a transaction to hold the lock")
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock("
            "(hashtext(%s)::bigint << 32) | (%s::bigint & 4294967295))",
            [space, int(key)],
        )
