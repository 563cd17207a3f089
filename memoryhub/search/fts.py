"""FTS5 full-text indexes keyed by the indexed row's id (SQLite engine)."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

Within = tuple[str, tuple]


def compile_within(within: "QuerySet | Within") -> Within:
    """SQL and params selecting the ids of ``within``; compile once and pass the result
    to run many searches over the same rows without re-compiling the queryset."""
    if isinstance(within, tuple):
        return within
    try:
        sql, params = within.values("pk").query.sql_with_params()
    except EmptyResultSet:  # e.g. ``.none()`` or ``pk__in=[]``: matches nothing
        return "SELECT NULL WHERE 0", ()
    return sql, tuple(params)


@dataclass(frozen=True)
class FtsHit:
    id: int
    score: float  # bm25: lower is better, as SQLite reports it
    snippet: str = ""


@dataclass(frozen=True)
class FtsIndex:
    """An FTS5 table ``table`` over ``columns``, one row per indexed object (rowid = id).

    The write services keep it in step inside their own transactions; nothing here runs
    on signals.
    """

    table: str
    columns: tuple[str, ...]
    tokenize: str = "porter unicode61 remove_diacritics 2"
    weights: tuple[float, ...] = ()

    def create_sql(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.table} "
            f"USING fts5({cols}, tokenize='{self.tokenize}')"
        )

    def drop_sql(self) -> str:
        return f"DROP TABLE IF EXISTS {self.table}"

    def upsert(self, rows: Iterable[tuple[int, Sequence[str]]], *, new: bool = False) -> None:
        """Index (or re-index) rows given as ``(id, (column values...))``. With
        ``new=True`` the rows are known not to be indexed yet and are only inserted."""
        rows = list(rows)
        if not rows:
            return
        placeholders = ", ".join(["%s"] * (len(self.columns) + 1))
        cols = ", ".join(("rowid", *self.columns))
        with connection.cursor() as cursor:
            if not new:
                self._delete(cursor, [row_id for row_id, _ in rows])
            cursor.executemany(
                f"INSERT INTO {self.table}({cols}) VALUES ({placeholders})",
                [(row_id, *values) for row_id, values in rows],
            )

    def delete(self, ids: Iterable[int]) -> None:
        with connection.cursor() as cursor:
            self._delete(cursor, list(ids))

    def _delete(self, cursor, ids: list[int]) -> None:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(f"DELETE FROM {self.table} WHERE rowid IN ({marks})", chunk)

    def search(
        self,
        match: str,
        *,
        limit: int,
        within: "QuerySet | Within | None" = None,
        snippet_column: int | None = None,
    ) -> list[FtsHit]:
        """Best ``limit`` rows for an FTS5 ``match`` expression (build it with
        ``memoryhub.search.text``), restricted to ids of ``within`` when given."""
        if not match:
            return []
        rank = "bm25(" + ", ".join([self.table, *map(str, self.weights)]) + ")"
        select = f"rowid, {rank}"
        if snippet_column is not None:
            select += f", snippet({self.table}, {snippet_column}, '[[', ']]', '…', 16)"
        sql = f"SELECT {select} FROM {self.table} WHERE {self.table} MATCH %s"
        params: list = [match]
        if within is not None:
            inner_sql, inner_params = compile_within(within)
            # "+rowid" keeps the filter out of FTS5's own planning: given "rowid IN
            # (...)" SQLite re-runs the MATCH once per listed id, which is far slower
            # than matching once and filtering the matches.
            sql += f" AND +rowid IN ({inner_sql})"
            params.extend(inner_params)
        sql += f" ORDER BY {rank} LIMIT %s"
        params.append(limit)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return [
            FtsHit(id=row[0], score=row[1], snippet=row[2] if snippet_column is not None else "")
            for row in rows
        ]

    def search_rows(
        self, match: str, *, limit: int, within: "QuerySet | Within | None" = None
    ) -> list[tuple]:
        """Like ``search`` but returns ``(id, *indexed column values)`` tuples straight
        from the index, best first: no model rows loaded."""
        if not match:
            return []
        rank = "bm25(" + ", ".join([self.table, *map(str, self.weights)]) + ")"
        sql = (
            f"SELECT rowid, {', '.join(self.columns)} FROM {self.table} WHERE {self.table} MATCH %s"
        )
        params: list = [match]
        if within is not None:
            inner_sql, inner_params = compile_within(within)
            sql += f" AND +rowid IN ({inner_sql})"
            params.extend(inner_params)
        sql += f" ORDER BY {rank} LIMIT %s"
        params.append(limit)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def ids(self) -> set[int]:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT rowid FROM {self.table}")
            return {row[0] for row in cursor.fetchall()}

    def content_of(self, row_id: int) -> tuple[str, ...] | None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(self.columns)} FROM {self.table} WHERE rowid = %s", [row_id]
            )
            row = cursor.fetchone()
        return tuple(row) if row else None
