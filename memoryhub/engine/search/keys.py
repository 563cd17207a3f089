"""Hashed keys of rows, looked up by key: an index an app declares (``KeyIndex``) for
finding the stored rows that share the most keys with a new one (near-duplicates).

SQLite keeps a row per (key, owner) in ``rows_table``, found through a covering
(key, owner) index. PostgreSQL keeps each owner's keys as one ``bigint[]`` in
``lists_table``, found through a GIN index on it: a row per key there wrote most of a
bulk load's write-ahead log. The app's migration makes both tables, the GIN index
(``fastupdate = off``: lookups run before every write and would scan a pending list each
time) and ``matching_function``, which takes lookups as (lookup number, key) pairs and
returns a (lookup number, owner) row for every owner holding the key: one probe of that
index per key, whatever the planner estimates (it has no statistics for keys that occur
once, and its guess made a scan of the whole table look cheaper).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection

from memoryhub.engine.db.bulk import binary_cursor, insert_values, rows_by_ids

# Owners per statement when keys are written or removed.
CHUNK = 2000


def _lists(cursor=None) -> bool:
    return (cursor.db if cursor is not None else connection).vendor == "postgresql"


@dataclass(frozen=True)
class KeyIndex:
    rows_table: str  # SQLite: (key, <owner_column>) rows
    lists_table: str  # PostgreSQL: (<owner_column>, keys bigint[]) rows
    owner_column: str
    matching_function: str

    @property
    def table(self) -> str:
        """The table the keys are in on this database (for its planner statistics)."""
        return self.lists_table if _lists() else self.rows_table

    def add(self, rows: Iterable[tuple[int, Sequence[int]]]) -> None:
        """Store the keys of owners that have none stored."""
        rows = list(rows)
        owner = self.owner_column
        if not _lists():
            # In key order: the keys are hashes, and inserted as they come each one
            # would land on another page of the key index.
            keyed = sorted((key, i) for i, keys in rows for key in keys)
            insert_values(self.rows_table, f"key, {owner}", keyed)
            return
        # Each list as text, parsed by the server: arrays of arrays must be rectangular.
        with binary_cursor() as cursor:
            for start in range(0, len(rows), CHUNK):
                chunk = rows[start : start + CHUNK]
                cursor.execute(
                    f"INSERT INTO {self.lists_table} ({owner}, keys) "
                    "SELECT o, string_to_array(k, ',')::bigint[] "
                    "FROM unnest(%b::bigint[], %b::text[]) AS u(o, k)",
                    [[i for i, _ in chunk], [",".join(map(str, keys)) for _, keys in chunk]],
                )

    def remove(self, owner_ids: Sequence[int]) -> None:
        table = self.lists_table if _lists() else self.rows_table
        ids = [int(i) for i in owner_ids]
        with connection.cursor() as cursor:
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                if _lists():
                    cursor.execute(
                        f"DELETE FROM {table} WHERE {self.owner_column} = ANY(%s::bigint[])",
                        [chunk],
                    )
                else:
                    marks = ", ".join(["%s"] * len(chunk))
                    cursor.execute(
                        f"DELETE FROM {table} WHERE {self.owner_column} IN ({marks})", chunk
                    )

    def clear(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {self.table}")

    def keys_of(self, owner_ids: Iterable[int]) -> dict[int, set[int]]:
        """The stored keys of each of these owners that has any."""
        owner = self.owner_column
        found: dict[int, set[int]] = {}
        if _lists():
            select = f"SELECT {owner}, keys FROM {self.lists_table}"
            for owner_id, keys in rows_by_ids(select, owner, owner_ids):
                found[owner_id] = set(keys)
            return found
        select = f"SELECT key, {owner} FROM {self.rows_table}"
        for key, owner_id in rows_by_ids(select, owner, owner_ids):
            found.setdefault(owner_id, set()).add(key)
        return found

    def sharing(self, key_lists: Sequence[Sequence[int]], best: int) -> list[list[tuple]]:
        """For each list of keys, the ``best`` owners sharing the most of them, most
        first, then the newest (highest id): (owner id, keys shared). One statement for
        all the lists."""
        found: list[list[tuple[int, int]]] = [[] for _ in key_lists]
        pairs = [(n, key) for n, keys in enumerate(key_lists) for key in dict.fromkeys(keys)]
        if not pairs:
            return found
        if _lists():
            # Counted and cut by the server, which sends back only what is kept.
            with binary_cursor() as cursor:
                cursor.execute(
                    "SELECT n, owner, shared FROM ("
                    " SELECT m.n, m.owner, count(*) AS shared, row_number() OVER ("
                    "  PARTITION BY m.n ORDER BY count(*) DESC, m.owner DESC) AS place"
                    f" FROM {self.matching_function}(%b::int[], %b::bigint[]) AS m(n, owner)"
                    " GROUP BY m.n, m.owner) AS ranked "
                    "WHERE place <= %b ORDER BY n, place",
                    [[n for n, _ in pairs], [key for _, key in pairs], best],
                )
                rows = cursor.fetchall()
            for n, owner_id, shared in rows:
                found[n].append((owner_id, shared))
            return found
        with connection.cursor() as cursor:
            # Each list's matching owners come back joined into one text value.
            cursor.execute(
                f"WITH q(n, key) AS (VALUES {', '.join(['(%s, %s)'] * len(pairs))}) "
                f"SELECT q.n, group_concat(k.{self.owner_column}) FROM q "
                f"JOIN {self.rows_table} k ON k.key = q.key GROUP BY q.n",
                [value for pair in pairs for value in pair],
            )
            for n, ids in cursor.fetchall():
                counts = Counter(map(int, ids.split(",")))
                found[n] = sorted(counts.items(), key=lambda c: (-c[1], -c[0]))[:best]
        return found

    def into_lists(self, cursor) -> None:
        """PostgreSQL: move keys stored a row per key (as copied from SQLite) into the
        lists, on the database of ``cursor``."""
        owner = self.owner_column
        cursor.execute(
            f"INSERT INTO {self.lists_table} ({owner}, keys) "
            f"SELECT {owner}, array_agg(key ORDER BY key) FROM {self.rows_table} "
            f"GROUP BY {owner}"
        )
        cursor.execute(f"DELETE FROM {self.rows_table}")

    def count(self, cursor) -> int:
        """How many keys are stored, all owners together, on the database of
        ``cursor``."""
        if _lists(cursor):
            cursor.execute(f"SELECT coalesce(sum(cardinality(keys)), 0) FROM {self.lists_table}")
        else:
            cursor.execute(f"SELECT count(*) FROM {self.rows_table}")
        return int(cursor.fetchone()[0])
