"""The SQLite engine: sqlite-vec on Django's own connection, WAL, busy timeout,
IMMEDIATE transactions, FTS5."""

import sqlite3
import struct

import pytest
from django.db import connection

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_only("the SQLite engine itself")]


def test_sqlite_vec_is_loaded_on_djangos_connection():
    with connection.cursor() as cursor:
        cursor.execute("select vec_version()")
        (version,) = cursor.fetchone()
    assert version.startswith("v")


def test_vec0_tables_answer_knn_queries():
    with connection.cursor() as cursor:
        cursor.execute("create virtual table probe_vec using vec0(embedding float[3])")
        for rowid, vec in [(1, (1, 0, 0)), (2, (0, 1, 0)), (3, (0.9, 0.1, 0))]:
            cursor.execute(
                "insert into probe_vec(rowid, embedding) values (%s, %s)",
                [rowid, struct.pack("<3f", *vec)],
            )
        cursor.execute(
            "select rowid from probe_vec where embedding match %s and k = 2 order by distance",
            [struct.pack("<3f", 1, 0, 0)],
        )
        assert [row[0] for row in cursor.fetchall()] == [1, 3]


def test_fts5_is_available():
    with connection.cursor() as cursor:
        cursor.execute("create virtual table probe_fts using fts5(body)")
        cursor.execute("insert into probe_fts(body) values ('the quick brown fox')")
        cursor.execute("select count(*) from probe_fts where probe_fts match 'brown'")
        assert cursor.fetchone()[0] == 1


def test_connection_uses_wal_busy_timeout_and_immediate_transactions():
    with connection.cursor() as cursor:
        cursor.execute("pragma journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("pragma busy_timeout")
        assert cursor.fetchone()[0] >= 5000
    # Django opens each atomic block with BEGIN <transaction_mode>.
    assert connection.transaction_mode == "IMMEDIATE"


def test_this_python_may_lack_enable_load_extension_and_vec_still_loads():
    """The engine must not depend on enable_load_extension; whichever path this Python
    takes, a fresh raw connection in the process can use vec once the engine ran."""
    from memoryhub.engine.db import vec

    vec.prepare_process()
    raw = sqlite3.connect(":memory:")
    try:
        assert vec.load_into(raw).startswith("v")
    finally:
        raw.close()


def test_missing_vec_fails_with_a_message_that_says_what_to_do():
    from memoryhub.engine.db import vec

    class ConnectionWithoutVec:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("no such function: vec_version")

    with pytest.raises(vec.VecUnavailable, match="Install the pinned 'sqlite-vec' package"):
        vec.load_into(ConnectionWithoutVec())  # type: ignore[arg-type]
