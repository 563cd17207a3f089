"""Bulk writes of plain value tuples, for the hot write paths.

``bulk_create`` and ``bulk_update`` build and compile every value of every row through
the model layer (and ``bulk_update`` writes a CASE per field and row), which costs more
than the database work when a request writes hundreds of rows. These helpers take rows
as tuples in a given field order, convert only the values that need it (JSON, dates and
times) and send one statement per chunk. They skip model signals and ``save()``.

On PostgreSQL an insert sends one array per column and unnests them into rows: one short
statement whatever the number of rows, which the server plans once, instead of a
statement with a placeholder per value that the driver and the server parse afresh.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence

from django.db import connection, models

# Values per statement stay well under SQLite's bound variable limit (32,766).
MAX_PARAMS = 30_000

Convert = Callable[[object], object] | None


def _converters(model: type[models.Model], fields: Sequence[str]) -> list[Convert]:
    """Per field, the conversion to a database value, or None when it is the value."""
    converters: list[Convert] = []
    for name in fields:
        field = model._meta.get_field(name)
        if isinstance(field, models.JSONField):
            converters.append(functools.partial(field.get_db_prep_save, connection=connection))
        elif isinstance(field, models.DateTimeField | models.DateField):
            converters.append(_remembering(field))
        else:
            converters.append(None)
    return converters


def _remembering(field: models.Field) -> Callable[[object], object]:
    """A date or time conversion that reuses its last result: the rows of one write
    mostly share one timestamp object."""
    last: list[object] = [object(), None]

    def convert(value: object) -> object:
        if value is not last[0]:
            last[0], last[1] = value, field.get_db_prep_save(value, connection)
        return last[1]

    return convert


def _prepared(
    converters: list[Convert], rows: Sequence[Sequence[object]]
) -> Sequence[Sequence[object]]:
    if not any(converters):
        return rows
    return [
        tuple(value if c is None else c(value) for c, value in zip(converters, row, strict=True))
        for row in rows
    ]


def _columns(model: type[models.Model], fields: Sequence[str]) -> str:
    quote = connection.ops.quote_name
    return ", ".join(quote(model._meta.get_field(name).column) for name in fields)


# Rows per INSERT statement of ``insert_rows``, at most, and the shorter statements that
# take the rest: statements of a few fixed lengths are prepared once, while Django
# rewrites every placeholder of a statement each time it runs.
ROWS_PER_INSERT = 50
INSERT_LENGTHS = (10, 1)


class BinaryCursor:
    """A psycopg cursor that sends parameters apart from the statement (``binary_cursor``)."""

    def __init__(self, cursor) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[object]) -> None:
        # Not prepared: a named statement would not survive a transaction-pooling
        # PgBouncer between the web processes and the server.
        self._cursor.execute(sql, params, prepare=False)

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall()


@contextlib.contextmanager
def binary_cursor(db=None) -> Iterator[BinaryCursor]:
    """PostgreSQL: a cursor on the connection of ``db`` (default: this thread's) that
    sends its parameters apart from the statement, those written ``%b`` in binary.
    Django's cursor quotes every parameter into the statement's text, in Python, value by
    value: for the columns of a bulk write that cost this process more than the server's
    work (4.1 against 1.4 ms for 100 facts), and the server parses the text back.
    Errors are raised as Django's; the statements are not in Django's query log."""
    import psycopg

    db = db or connection
    db.ensure_connection()
    with db.wrap_database_errors, psycopg.Cursor(db.connection) as cursor:
        yield BinaryCursor(cursor)


# Rows per statement of an unnest insert (PostgreSQL).
ROWS_PER_UNNEST = 5_000


def _unnest_insert(
    model: type[models.Model],
    fields: Sequence[str],
    values: Sequence[Sequence[object]],
    *,
    returning: bool,
) -> list[int]:
    """PostgreSQL: insert ``values`` as one array per column, unnested into rows. New
    primary keys come back in row order (the rows are inserted in unnest order, as
    Django's own bulk insert relies on)."""
    # The element type without its size: a value too long fails on the column itself.
    types = [model._meta.get_field(name).db_type(connection).split("(")[0] for name in fields]
    arrays = ", ".join(f"%b::{kind}[]" for kind in types)
    sql = (
        f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} "
        f"({_columns(model, fields)}) SELECT * FROM unnest({arrays})"
    )
    if returning:
        sql += f" RETURNING {connection.ops.quote_name(model._meta.pk.column)}"
    ids: list[int] = []
    with binary_cursor() as cursor:
        for start in range(0, len(values), ROWS_PER_UNNEST):
            chunk = values[start : start + ROWS_PER_UNNEST]
            cursor.execute(sql, [list(column) for column in zip(*chunk, strict=True)])
            if returning:
                ids.extend(row[0] for row in cursor.fetchall())
    return ids


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[object]]
) -> None:
    """Insert ``rows`` (values in ``fields`` order; every column without a database
    default given), many rows per statement, when their new keys are not needed."""
    if not rows:
        return
    values = _prepared(_converters(model, fields), rows)
    if connection.vendor == "postgresql":
        _unnest_insert(model, fields, values, returning=False)
        return
    insert_values(model._meta.db_table, _columns(model, fields), values)


def insert_values(table: str, columns: str, values: Sequence[Sequence[object]]) -> None:
    """Insert rows of plain database values into ``table`` (``columns`` as SQL, quoted),
    many rows per statement."""
    width = len(values[0]) if values else 0
    if not width:
        return
    max_params = connection.features.max_query_params or width * ROWS_PER_INSERT
    longest = max(1, min(ROWS_PER_INSERT, max_params // width))
    row_marks = "(" + ", ".join(["%s"] * width) + ")"
    head = f"INSERT INTO {connection.ops.quote_name(table)} ({columns}) VALUES "
    flat = itertools.chain.from_iterable
    start = 0
    with connection.cursor() as cursor:
        for length in sorted({longest, *INSERT_LENGTHS}, reverse=True):
            if length > longest:
                continue
            stop = start + (len(values) - start) // length * length
            if stop > start:
                cursor.executemany(
                    head + ", ".join([row_marks] * length),
                    [tuple(flat(values[i : i + length])) for i in range(start, stop, length)],
                )
            start = stop


def insert_returning_ids(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[object]]
) -> list[int]:
    """Like ``insert_rows``, returning the rows' new primary keys, in order."""
    if not rows:
        return []
    values = _prepared(_converters(model, fields), rows)
    if connection.vendor == "postgresql":
        return _unnest_insert(model, fields, values, returning=True)
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(model._meta.pk.column)
    row_marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
    per_statement = max(1, MAX_PARAMS // len(fields))
    ids: list[int] = []
    with connection.cursor() as cursor:
        for start in range(0, len(values), per_statement):
            chunk = values[start : start + per_statement]
            cursor.execute(
                f"INSERT INTO {table} ({_columns(model, fields)}) VALUES "
                f"{', '.join([row_marks] * len(chunk))} RETURNING {pk}",
                [value for row in chunk for value in row],
            )
            # Rows come back in the order they were inserted (as bulk_create relies on).
            ids.extend(row[0] for row in cursor.fetchall())
    return ids


def update_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[object]]
) -> None:
    """Set ``fields`` of many rows, each given as (*values in ``fields`` order, pk)."""
    if not rows:
        return
    quote = connection.ops.quote_name
    converters = [*_converters(model, fields), None]
    sets = ", ".join(f"{quote(model._meta.get_field(name).column)} = %s" for name in fields)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {quote(model._meta.db_table)} SET {sets} "
            f"WHERE {quote(model._meta.pk.column)} = %s",
            _prepared(converters, rows),
        )


# Ids per statement of ``rows_by_ids``.
IDS_PER_SELECT = 500


def rows_by_ids(
    select: str,
    key: str,
    ids: Iterable[int],
    *,
    also: str = "",
    params: Sequence[object] = (),
    select_params: Sequence[object] = (),
) -> list[tuple]:
    """What ``select`` (a SELECT ... FROM ... without WHERE, with ``select_params``)
    returns for the rows whose ``key`` is one of ``ids``, IDS_PER_SELECT ids a
    statement. ``also`` adds conditions, with their ``params``."""
    ids = [int(i) for i in ids]
    extra = f" AND {also}" if also else ""
    found: list[tuple] = []
    with connection.cursor() as cursor:
        for start in range(0, len(ids), IDS_PER_SELECT):
            chunk = ids[start : start + IDS_PER_SELECT]
            if connection.vendor == "postgresql":
                cursor.execute(
                    f"{select} WHERE {key} = ANY(%s::bigint[]){extra}",
                    [*select_params, chunk, *params],
                )
            else:
                marks = ", ".join(["%s"] * len(chunk))
                cursor.execute(
                    f"{select} WHERE {key} IN ({marks}){extra}",
                    [*select_params, *chunk, *params],
                )
            found.extend(cursor.fetchall())
    return found


def queryset_rows_by_ids(build: Callable[[], models.QuerySet], ids: Iterable[int]) -> list[tuple]:
    """``rows_by_ids`` for the rows of the queryset ``build`` returns (unfiltered,
    unordered; its model's primary key is the key), compiled once per process and
    database: a queryset of correlated subqueries costs more to build and compile than
    to run."""
    sql, select_params, key = _compiled_select(build, connection.alias, connection.vendor)
    return rows_by_ids(sql, key, ids, select_params=select_params)


@functools.lru_cache(maxsize=64)
def _compiled_select(
    build: Callable[[], models.QuerySet], alias: str, vendor: str
) -> tuple[str, tuple, str]:
    query = build().using(alias).query
    if query.where or query.order_by:
        raise ValueError("queryset_rows_by_ids takes a queryset without filters or order")
    compiler = query.get_compiler(alias)
    sql, params = compiler.as_sql()
    meta = query.model._meta
    quote = compiler.quote_name
    key = f"{quote(meta.db_table)}.{quote(meta.pk.column)}"
    return sql, tuple(params), key


# A table is analyzed after a bulk write once this many rows, plus this share of the
# rows it had when last analyzed, changed since (autovacuum's own threshold, which it
# only checks once a minute).
ANALYZE_BASE_ROWS = 50
ANALYZE_SHARE = 0.1


def analyze_when_grown(*tables: str) -> None:
    """PostgreSQL: refresh the planner statistics of those of ``tables`` that changed by
    more than a tenth since they were last analyzed. Called before a bulk write, outside
    any transaction (inside one it does nothing, so as not to hold the lock ANALYZE
    takes): a bulk load outgrows its statistics within seconds, and planned from the
    table as it was (nearly empty), the next batch's lookups scan whole tables. A table
    another process is analyzing (or vacuuming) is left to it: concurrent bulk writes
    would otherwise analyze it once each, one after the other."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.relid::regclass::text FROM pg_stat_user_tables s "
            "JOIN pg_class c ON c.oid = s.relid WHERE s.relid = ANY(%s::regclass[]) "
            "AND s.n_mod_since_analyze > %s + %s * greatest(c.reltuples, 0)",
            [list(tables), ANALYZE_BASE_ROWS, ANALYZE_SHARE],
        )
        for (table,) in cursor.fetchall():
            cursor.execute(f"ANALYZE (SKIP_LOCKED) {table}")


@contextlib.contextmanager
def pipelined() -> Iterator[None]:
    """PostgreSQL: send the block's statements without waiting for each one's answer,
    so that the server works through the writes while this process prepares the next
    ones. A statement whose rows are read waits for those sent before it; an error is
    raised, as Django's, at the next such wait or at the end of the block at the latest.
    Open it inside the transaction (``with transaction.atomic(), pipelined():``): a
    savepoint released in a pipeline does not wait for its answer either, so a block
    around a nested transaction would raise its error after that transaction had been
    left as if it succeeded. Elsewhere nothing changes."""
    if connection.vendor != "postgresql":
        yield
        return
    connection.ensure_connection()
    with connection.wrap_database_errors, connection.connection.pipeline():
        yield


def reserve_ids(model: type[models.Model], count: int) -> list[int] | None:
    """PostgreSQL: ``count`` new primary keys of ``model`` from its sequence, ascending,
    for rows inserted with their ids given (so that no answer is waited for). Keys
    reserved and not used are skipped, as those of a rolled-back insert are. None
    elsewhere: an insert that returns its keys costs no wait in process."""
    if connection.vendor != "postgresql":
        return None
    if count <= 0:
        return []
    table, pk = model._meta.db_table, model._meta.pk.column
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [table, pk, count],
        )
        return sorted(row[0] for row in cursor.fetchall())
