"""Django's SQLite backend, tuned for a server and with sqlite-vec on every connection.

- WAL journal so readers never block the writer, ``synchronous=NORMAL`` (safe in WAL);
- a busy timeout so concurrent writers (web + worker) wait instead of failing;
- ``BEGIN IMMEDIATE`` transactions so a write transaction takes the lock up front and
  never fails half-way with "database is locked" on lock upgrade;
- reads through a memory map and a larger page cache per connection;
- sqlite-vec loaded even where Python's sqlite3 lacks ``enable_load_extension``.
"""

from typing import Any

from django.db.backends.sqlite3 import base

from memoryhub.engine.db import vec

BUSY_TIMEOUT_MS = 10_000
# Upper bound of the file mapped for reading, and each connection's page cache.
MMAP_BYTES = 1 << 30
CACHE_KIB = 32_768


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        options = self.settings_dict.setdefault("OPTIONS", {})
        options.setdefault("transaction_mode", "IMMEDIATE")
        options.setdefault("timeout", BUSY_TIMEOUT_MS / 1000)
        return super().get_connection_params()

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        vec.prepare_process()
        connection = super().get_new_connection(conn_params)
        vec.load_into(connection)
        is_memory = self.is_in_memory_db()
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not is_memory:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            # Read the file through a memory map: pages are shared by every connection
            # of the machine instead of copied into each connection's own cache.
            connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        # Deleted content is overwritten in the file, not left on free pages: what is
        # forgotten is gone from the database file and from any copy made later.
        connection.execute("PRAGMA secure_delete = ON")
        return connection
