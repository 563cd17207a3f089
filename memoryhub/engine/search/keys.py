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
from dataclasses import dataclass, field

from django.db import connection

from memoryhub.engine.db.bulk import binary_cursor, insert_values, rows_by_ids

# Owners per statement when keys are written or removed.
CHUNK = 2000


def _lists(cursor=None) -> bool:
    return (cursor.db if cursor is not None else connection).vendor == "postgresql"


@dataclass
class Sharing:
    """What one lookup of ``KeyIndex.sharing`` found."""

    owners: list[tuple[int, int, int]] = field(default_factory=list)
    cut: set[int] = field(default_factory=set)  # keys held by more owners than were read
    read: int = 0  # (key, owner) entries read and counted


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

    def sharing(self, key_lists: Sequence[Sequence[int]], best: int, per_key: int) -> list[Sharing]:
        """For each list of keys, the ``best`` owners sharing the most of them: (owner
        id, whole keys shared, keys shared), the most whole keys first, then the most
        keys, then the newest (highest id). One statement for all the lists.

        A key held by more than ``per_key`` owners gives only its newest ``per_key`` and
        is *cut* (named in ``Sharing.cut``); the others are *whole*. So a lookup reads at
        most ``per_key`` owners per key however many hold it, and an older owner found
        through a rare key is not pushed out of the best by newer ones found through
        keys that every fact of a kind shares."""
        found = [Sharing() for _ in key_lists]
        pairs = [(n, key) for n, keys in enumerate(key_lists) for key in dict.fromkeys(keys)]
        if not pairs:
            return found
        if _lists():
            self._sharing_lists(pairs, best, per_key, found)
            return found
        owner, table = self.owner_column, self.rows_table
        rare: list[Counter[int]] = [Counter() for _ in key_lists]
        every: list[Counter[int]] = [Counter() for _ in key_lists]
        with connection.cursor() as cursor:
            # Per key, its newest holders and one more (which tells a cut key), read
            # from the end of its run in the (key, owner) index and joined into one text.
            cursor.execute(
                f"WITH q(n, key) AS (VALUES {', '.join(['(%s, %s)'] * len(pairs))}) "
                f"SELECT q.n, q.key, (SELECT group_concat({owner}) FROM ("
                f" SELECT i.{owner} FROM {table} i WHERE i.key = q.key"
                f" ORDER BY i.{owner} DESC LIMIT %s)) FROM q",
                [*(value for pair in pairs for value in pair), per_key + 1],
            )
            for n, key, ids in cursor.fetchall():
                if ids is None:
                    continue
                holders = list(map(int, ids.split(",")))
                if len(holders) > per_key:
                    holders.remove(min(holders))
                    found[n].cut.add(key)
                else:
                    rare[n].update(holders)
                found[n].read += len(holders)
                every[n].update(holders)
        for n, counts in enumerate(every):
            ranked = sorted(counts, key=lambda o, n=n: (-rare[n][o], -counts[o], -o))[:best]
            found[n].owners = [(o, rare[n][o], counts[o]) for o in ranked]
        return found

    def _sharing_lists(
        self, pairs: list[tuple[int, int]], best: int, per_key: int, found: list[Sharing]
    ) -> None:
        """``sharing`` on PostgreSQL: each key is a lookup of its own, so that its
        owners can be counted and cut on the server, which sends back only what is
        kept, and the keys it cut."""
        with binary_cursor() as cursor:
            cursor.execute(
                "WITH m AS MATERIALIZED ("
                " SELECT m.lookup AS p, m.owner, count(*) OVER (PARTITION BY m.lookup) AS holders,"
                "  row_number() OVER (PARTITION BY m.lookup ORDER BY m.owner DESC) AS place"
                f" FROM {self.matching_function}(%b::int[], %b::bigint[]) AS m(lookup, owner)), "
                "q AS (SELECT p::int - 1 AS p, n"
                " FROM unnest(%b::int[]) WITH ORDINALITY AS u(n, p)), "
                "kept AS (SELECT q.n, m.owner, m.holders <= %b AS whole"
                " FROM m JOIN q ON q.p = m.p WHERE m.place <= %b) "
                "SELECT n, owner, rare, shared FROM ("
                " SELECT n, owner, count(*) FILTER (WHERE whole) AS rare, count(*) AS shared,"
                "  row_number() OVER (PARTITION BY n ORDER BY count(*) FILTER (WHERE whole) DESC,"
                "   count(*) DESC, owner DESC) AS place"
                " FROM kept GROUP BY n, owner) AS ranked WHERE place <= %b "
                "UNION ALL SELECT -1, p, 0, 0 FROM m WHERE place = 1 AND holders > %b "
                "UNION ALL SELECT -2, n, count(*), 0 FROM kept GROUP BY n "
                "ORDER BY 1, 3 DESC, 4 DESC, 2 DESC",
                [
                    list(range(len(pairs))),
                    [key for _, key in pairs],
                    [n for n, _ in pairs],
                    per_key,
                    per_key,
                    best,
                    per_key,
                ],
            )
            rows = cursor.fetchall()
        for n, owner_id, rare, shared in rows:
            if n == -2:
                found[owner_id].read = rare
            elif n == -1:
                n, key = pairs[owner_id]
                found[n].cut.add(key)
            else:
                found[n].owners.append((owner_id, rare, shared))

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
