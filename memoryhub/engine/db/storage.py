"""The database file itself, after a forget: nothing of what was deleted may stay in
it or beside it.

Deleted rows are overwritten in place (the engine runs with ``secure_delete``), but a
write-ahead log keeps the frames of recent transactions, the deleted text among them,
until it is checkpointed: ``storage_scrub`` copies it into the database and empties it.
"""

from django.db import connection, transaction


def storage_scrub() -> None:
    """Checkpoint and empty the write-ahead log (SQLite), once the current transaction
    (if any) has committed: a log holds only committed transactions' frames, and cannot
    be checkpointed from inside one."""
    if connection.vendor == "sqlite":
        transaction.on_commit(_checkpoint)


def _checkpoint() -> None:
    with connection.cursor() as cursor:
        # Readers still on an older snapshot keep the log from being emptied at once;
        # the busy timeout lets them finish.
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
