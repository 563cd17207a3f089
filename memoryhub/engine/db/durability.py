"""How durable a transaction's commit must be."""

from django.db import connection


def commit_unflushed() -> None:
    """Let the current transaction commit without waiting for its write-ahead log to
    reach the disk (PostgreSQL's ``synchronous_commit = off``, for this transaction
    alone): a crash may lose it, never apply half of it. For bookkeeping such as access
    counts, which SQLite (WAL with ``synchronous = NORMAL``) already commits that way.
    Only the outermost transaction is relaxed: inside another, the writes around the
    call decide."""
    if connection.vendor != "postgresql" or len(connection.atomic_blocks) != 1:
        return
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit = off")
