"""Where the near-duplicate keys of active facts are kept (see ``facts.dedupe``).

SQLite keeps a ``FactKey`` row per key, found through a covering (key, fact) index.
PostgreSQL keeps each fact's keys in one ``FactKeyList`` row, found through a GIN index
on the array (its migration says why): a row per key there wrote most of the
write-ahead log of a bulk load. Both answer the same questions, in the same shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection

from facts.models import FactKey, FactKeyList
from memoryhub.db.bulk import insert_rows, rows_by_ids

# Facts per statement when keys are written or removed.
CHUNK = 2000


def _lists() -> bool:
    return connection.vendor == "postgresql"


def keys_table() -> str:
    """The table the keys are in on this database, for its planner statistics."""
    return (FactKeyList if _lists() else FactKey)._meta.db_table


def keys_add(rows: Iterable[tuple[int, Sequence[int]]]) -> None:
    """Store the keys of facts that have none stored."""
    if _lists():
        rows = list(rows)
        # Each list as text, parsed by the server: arrays of arrays must be rectangular.
        with connection.cursor() as cursor:
            for start in range(0, len(rows), CHUNK):
                chunk = rows[start : start + CHUNK]
                cursor.execute(
                    f"INSERT INTO {FactKeyList._meta.db_table} (fact_id, keys) "
                    "SELECT f, string_to_array(k, ',')::bigint[] "
                    "FROM unnest(%s::bigint[], %s::text[]) AS u(f, k)",
                    [[i for i, _ in chunk], [",".join(map(str, keys)) for _, keys in chunk]],
                )
        return
    # In key order: the keys are hashes, and inserted as they come each one would land
    # on another page of the key index.
    insert_rows(FactKey, ("key", "fact"), sorted((key, i) for i, keys in rows for key in keys))


def keys_remove(fact_ids: Sequence[int]) -> None:
    model = FactKeyList if _lists() else FactKey
    for start in range(0, len(fact_ids), CHUNK):
        model.objects.filter(fact_id__in=fact_ids[start : start + CHUNK]).delete()


def keys_clear() -> None:
    (FactKeyList if _lists() else FactKey).objects.all().delete()


def keys_of(fact_ids: Iterable[int]) -> dict[int, set[int]]:
    """The stored keys of each of these facts that has any."""
    found: dict[int, set[int]] = {}
    if _lists():
        for fact_id, keys in rows_by_ids(
            f"SELECT fact_id, keys FROM {FactKeyList._meta.db_table}", "fact_id", fact_ids
        ):
            found[fact_id] = set(keys)
        return found
    for key, fact_id in rows_by_ids(
        f"SELECT key, fact_id FROM {FactKey._meta.db_table}", "fact_id", fact_ids
    ):
        found.setdefault(fact_id, set()).add(key)
    return found


def keys_counted(pairs: Sequence[tuple[int, int]], best: int) -> list[tuple[int, int, int]]:
    """PostgreSQL: for lookups given as (lookup number, key) pairs, the ``best`` facts
    of each lookup by keys shared (most first, then the newest), as (lookup number,
    fact id, keys shared). Counted by the server, which sends back only what is kept."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n, fact_id, shared FROM ("
            " SELECT q.n, l.fact_id, count(*) AS shared, row_number() OVER ("
            "  PARTITION BY q.n ORDER BY count(*) DESC, l.fact_id DESC) AS place"
            " FROM facts_keys_sharing(%s::bigint[]) AS l"
            " CROSS JOIN LATERAL unnest(l.keys) AS k(key)"
            " JOIN unnest(%s::int[], %s::bigint[]) AS q(n, key) ON q.key = k.key"
            " GROUP BY q.n, l.fact_id) AS ranked "
            "WHERE place <= %s ORDER BY n, place",
            [
                list({key for _, key in pairs}),
                [n for n, _ in pairs],
                [key for _, key in pairs],
                best,
            ],
        )
        return cursor.fetchall()


def keys_into_lists(cursor) -> None:
    """PostgreSQL: move keys stored a row per key (as copied from SQLite) into the
    lists, on the database of ``cursor``."""
    lists, rows = FactKeyList._meta.db_table, FactKey._meta.db_table
    cursor.execute(
        f"INSERT INTO {lists} (fact_id, keys) "
        f"SELECT fact_id, array_agg(key ORDER BY key) FROM {rows} GROUP BY fact_id"
    )
    cursor.execute(f"DELETE FROM {rows}")


def keys_count(cursor=None) -> int:
    """How many keys are stored, all facts together (on the database of ``cursor``,
    else this one)."""
    if cursor is None:
        with connection.cursor() as cursor:
            return keys_count(cursor)
    if cursor.db.vendor == "postgresql":
        cursor.execute(
            f"SELECT coalesce(sum(cardinality(keys)), 0) FROM {FactKeyList._meta.db_table}"
        )
    else:
        cursor.execute(f"SELECT count(*) FROM {FactKey._meta.db_table}")
    return int(cursor.fetchone()[0])
