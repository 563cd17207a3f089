"""Updating a row that another request may change or delete at the same moment.

Django's ``save()`` inserts the row again when its UPDATE matches nothing, so a row
deleted by one request could come back through another's edit. Every update service
re-reads its row here, inside its transaction, under a row lock (SQLite's write
transactions already hold the database lock from their first statement), and writes
only the fields it changed."""

from django.db import models, transaction

from memoryhub.errors import NotFound, PreconditionFailed


def row_for_update[M: models.Model](
    instance: M, *, missing: str, expected_version: str | None = None
) -> M:
    """The current state of ``instance``'s row, locked until the transaction ends.
    NotFound(``missing``) when another request deleted it; PreconditionFailed when the
    caller names the version it read (``expected_version``) and the row has moved on."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("row_for_update needs a transaction to hold the lock")
    found = type(instance)._default_manager.select_for_update().filter(pk=instance.pk).first()
    if found is None:
        raise NotFound(missing)
    if expected_version is not None and found.version != expected_version:
        raise PreconditionFailed(
            "This row changed since you read it: read it again, then retry your change.",
            extra={"version": found.version},
        )
    return found
