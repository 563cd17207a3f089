"""Bulk writes of plain value tuples, for the hot write paths.

``bulk_create`` and ``bulk_update`` build and compile every value of every row through
the model layer (and ``bulk_update`` writes a CASE per field and row), which costs more
than the database work when a request writes hundreds of rows. These helpers take rows
as tuples in a given field order, convert only the values that need it (JSON, dates and
times) and send one statement per chunk. They skip model signals and ``save()``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Sequence

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


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[object]]
) -> None:
    """Insert ``rows`` (values in ``fields`` order; every column without a database
    default given), many rows per statement, when their new keys are not needed."""
    if not rows:
        return
    values = _prepared(_converters(model, fields), rows)
    max_params = connection.features.max_query_params or len(fields) * ROWS_PER_INSERT
    longest = max(1, min(ROWS_PER_INSERT, max_params // len(fields)))
    row_marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
    head = (
        f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} "
        f"({_columns(model, fields)}) VALUES "
    )
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
    select: str, key: str, ids: Iterable[int], *, also: str = "", params: Sequence[object] = ()
) -> list[tuple]:
    """What ``select`` (a SELECT ... FROM ... without WHERE) returns for the rows whose
    ``key`` is one of ``ids``, IDS_PER_SELECT ids a statement. ``also`` adds conditions,
    with their ``params``."""
    ids = [int(i) for i in ids]
    extra = f" AND {also}" if also else ""
    found: list[tuple] = []
    with connection.cursor() as cursor:
        for start in range(0, len(ids), IDS_PER_SELECT):
            chunk = ids[start : start + IDS_PER_SELECT]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(f"{select} WHERE {key} IN ({marks}){extra}", [*chunk, *params])
            found.extend(cursor.fetchall())
    return found
