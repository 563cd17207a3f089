"""Full-text indexes keyed by the indexed row's id: FTS5 on SQLite, ``tsvector`` on
PostgreSQL (see ``memoryhub.engine.search.postgres``)."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

from memoryhub.engine.search import postgres as pg
from memoryhub.engine.search.remembered import Remembered
from memoryhub.engine.search.text import in_columns, match_any, match_pairs, query_terms

Within = tuple[str, tuple]

# From this many rows on, a search of many words ranks only the rows sharing two of them
# when there are enough (see ``FtsIndex.search_words``).
TWO_WORDS_ROWS = 20_000
TWO_WORDS_ENOUGH = 10
# The uncommon words of a question are held together by at most this share of the rows:
# see ``FtsIndex.search_words``.
COMMON_SHARE = 0.02
MAX_PAIRED_WORDS = 8
# Counts for choosing how to search, where a slightly old figure does no harm: a
# table's rows, kept ROW_COUNT_TTL seconds, and a word's rows, kept DOC_COUNT_TTL.
ROW_COUNT_TTL = 10.0
DOC_COUNT_TTL = 300.0
_row_counts: Remembered[int] = Remembered(ROW_COUNT_TTL)
_doc_counts: Remembered[int] = Remembered(DOC_COUNT_TTL)


def _remembered_count(counts: Remembered[int], sql: str, params: Sequence = ()) -> int:
    """The count ``sql`` returns, read at most once per ``counts``' lifetime."""

    def read() -> int:
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return cursor.fetchone()[0]

    return counts.get(read, sql, *params)


def on_postgres() -> bool:
    return connection.vendor == "postgresql"


def cached_row_count(table: str) -> int:
    """``count(*)`` of ``table``, read at most every ROW_COUNT_TTL seconds."""
    return _remembered_count(_row_counts, f"SELECT count(*) FROM {table}")


# A filtered search first looks at this many unfiltered best matches per wanted row.
OVERFETCH_FACTOR = 4
OVERFETCH_MIN = 100


def compile_within(within: "QuerySet | Within") -> Within:
    """SQL and params selecting the ids of ``within``; compile once and pass the result
    to run many searches over the same rows without re-compiling the queryset."""
    if isinstance(within, tuple):
        return within
    try:
        # No ORDER BY: a filter set needs no order, and sorting it costs.
        sql, params = within.order_by().values("pk").query.sql_with_params()
    except EmptyResultSet:  # e.g. ``.none()`` or ``pk__in=[]``: matches nothing
        return "SELECT CAST(NULL AS bigint) AS pk WHERE 1 = 0", ()
    return sql, tuple(params)


def ids_within(ids: list[int], within: Within) -> set[int]:
    """Which of ``ids`` the compiled filter admits (one indexed lookup per id)."""
    if not ids:
        return set()
    inner_sql, inner_params = within
    if on_postgres():  # one array, not a placeholder per id (see memoryhub.engine.db.lookups)
        wanted, values = "= ANY(%s)", [list(ids)]
    else:
        wanted, values = f"IN ({', '.join(['%s'] * len(ids))})", ids
    sql = f"SELECT pk FROM ({inner_sql}) AS admitted WHERE admitted.pk {wanted}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*inner_params, *values])
        return {row[0] for row in cursor.fetchall()}


def _rarest(terms: Sequence[str], holding: dict[str, int], *, budget: float) -> list[str]:
    """The rarest of ``terms``, as many as hold at most ``budget`` rows together (none
    when even the rarest holds more): pairs anchored on them rank a bounded number of
    rows however large the index (1M facts: a question's p95 from 48 to 23 ms)."""
    chosen: list[str] = []
    total = 0
    for term in sorted(terms, key=lambda t: holding[t]):
        total += holding[term]
        if total > budget:
            break
        chosen.append(term)
    return chosen


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
    # The columns holding the row's own words. A search that decides *which* rows are
    # meant (exact search, a search box, forgetting) reads only these; the others (words
    # borrowed from related rows, who said it) only add to a row's rank where a caller
    # searches every column (recall). Empty: every column is the row's own.
    own: tuple[str, ...] = ()

    def create_sql(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.table} "
            f"USING fts5({cols}, tokenize='{self.tokenize}')"
        )

    def drop_sql(self) -> str:
        return f"DROP TABLE IF EXISTS {self.table}"

    def create_statements(self) -> list[str]:
        """What creates the index on this connection's engine (idempotent)."""
        return pg.fts_create_sql(self) if on_postgres() else [self.create_sql()]

    def drop_statements(self) -> list[str]:
        return pg.fts_drop_sql(self) if on_postgres() else [self.drop_sql()]

    def upsert(self, rows: Iterable[tuple[int, Sequence[str]]], *, new: bool = False) -> None:
        """Index (or re-index) rows given as ``(id, (column values...))``. With
        ``new=True`` the rows are new and are only inserted; an entry already under one
        of their ids (left by a row deleted without its index, such as by a cascade, and
        its id given out again after a migration rebuilt the table) is replaced."""
        rows = list(rows)
        if not rows:
            return
        if on_postgres():
            pg.fts_upsert(self, rows)
            return
        placeholders = ", ".join(["%s"] * (len(self.columns) + 1))
        cols = ", ".join(("rowid", *self.columns))
        with connection.cursor() as cursor:
            if not new:
                self._delete(cursor, [row_id for row_id, _ in rows])
            cursor.executemany(
                f"INSERT OR REPLACE INTO {self.table}({cols}) VALUES ({placeholders})",
                [(row_id, *values) for row_id, values in rows],
            )

    def delete(self, ids: Iterable[int]) -> None:
        if on_postgres():
            pg.delete_ids(self.table, [int(i) for i in ids])
            return
        with connection.cursor() as cursor:
            self._delete(cursor, list(ids))

    def _delete(self, cursor, ids: list[int]) -> None:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(f"DELETE FROM {self.table} WHERE rowid IN ({marks})", chunk)

    def purge(self) -> None:
        """Rewrite the index without the entries of deleted rows: FTS5 only marks them
        deleted, and their words would stay in its pages until a merge. (PostgreSQL
        reclaims the space of deleted rows by its own vacuum.)"""
        if on_postgres():
            return
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {self.table}({self.table}) VALUES ('optimize')")

    def _rank(self) -> str:
        return "bm25(" + ", ".join([self.table, *map(str, self.weights)]) + ")"

    def _query(
        self, select: str, match: str, limit: int, within: Within | None, snippet: int | None
    ) -> list[tuple]:
        if on_postgres():
            return pg.fts_query(self, match, limit, within, snippet)
        rank = self._rank()
        sql = f"SELECT {select} FROM {self.table} WHERE {self.table} MATCH %s"
        params: list = [match]
        if within is not None:
            inner_sql, inner_params = within
            # "+rowid" keeps the filter out of FTS5's own planning: given "rowid IN
            # (...)" SQLite re-runs the MATCH once per listed id, which is far slower
            # than matching once and filtering the matches.
            sql += f" AND +rowid IN ({inner_sql})"
            params.extend(inner_params)
        sql += f" ORDER BY {rank} LIMIT %s"
        params.append(limit)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def _ranked(
        self,
        select: str,
        match: str,
        limit: int,
        within: "QuerySet | Within | None",
        snippet: int | None,
    ) -> list[tuple]:
        """Rows best first, first column the id. With a filter, the best matches are
        taken unfiltered (cheap) and filtered by id; only when too few of them pass
        does the filtered query run (it builds the whole filter set, which costs
        more the more rows the filter admits)."""
        if within is None:
            return self._query(select, match, limit, None, snippet)
        compiled = compile_within(within)
        wanted = max(limit * OVERFETCH_FACTOR, OVERFETCH_MIN)
        if on_postgres():  # both steps in one statement
            rows = pg.fts_query(self, match, limit, compiled, snippet, overfetch=wanted)
            return (
                rows if rows is not None else self._query(select, match, limit, compiled, snippet)
            )
        rows = self._query(select, match, wanted, None, snippet)
        allowed = ids_within([row[0] for row in rows], compiled)
        passed = [row for row in rows if row[0] in allowed]
        if len(passed) >= limit or len(rows) < wanted:
            return passed[:limit]
        return self._query(select, match, limit, compiled, snippet)

    def search(
        self,
        match: str,
        *,
        limit: int,
        within: "QuerySet | Within | None" = None,
        snippet_column: int | None = None,
        columns: Sequence[str] | None = None,
    ) -> list[FtsHit]:
        """Best ``limit`` rows for an FTS5 ``match`` expression (build it with
        ``memoryhub.engine.search.text``), restricted to ids of ``within`` when given
        and to rows holding the words in ``columns`` when given."""
        if not match:
            return []
        match = in_columns(match, columns)
        select = f"rowid, {self._rank()}"
        if snippet_column is not None:
            select += f", snippet({self.table}, {snippet_column}, '[[', ']]', '…', 16)"
        rows = self._ranked(select, match, limit, within, snippet_column)
        return [
            FtsHit(id=row[0], score=row[1], snippet=row[2] if snippet_column is not None else "")
            for row in rows
        ]

    def search_words(
        self,
        text: str,
        *,
        limit: int,
        within: "QuerySet | Within | None" = None,
        snippet_column: int | None = None,
        columns: Sequence[str] | None = None,
    ) -> list[FtsHit]:
        """The best ``limit`` rows for any of the words of ``text`` in ``columns`` (all
        when None) (with snippets of
        ``snippet_column``, as ``search`` gives them).

        Scoring every row that shares one common word ("runs", "tests") is what makes a
        search of a big index slow, and such rows seldom beat rows sharing two words.
        So on a large index, while enough rows are found (``limit``, or TWO_WORDS_ENOUGH
        if fewer), only these are ranked, in turn: rows sharing two of the words one of
        which is uncommon (the rarest words, held together by at most COMMON_SHARE of
        the rows: names, not the verbs of every other fact); rows sharing any two of the
        words; then every row sharing a word."""
        terms = query_terms(text)
        rows = self.row_count()
        if rows >= TWO_WORDS_ROWS and 2 <= len(terms) <= MAX_PAIRED_WORDS:
            enough = min(limit, TWO_WORDS_ENOUGH)
            holding = self.doc_counts(terms)
            uncommon = _rarest(terms, holding, budget=COMMON_SHARE * rows)
            stages = (
                [match_pairs(terms, anchors=uncommon)] if 0 < len(uncommon) < len(terms) else []
            )
            for match in [*stages, match_pairs(terms)]:
                hits = self.search(
                    match,
                    limit=limit,
                    within=within,
                    snippet_column=snippet_column,
                    columns=columns,
                )
                if len(hits) >= enough:
                    return hits
        return self.search(
            match_any(text),
            limit=limit,
            within=within,
            snippet_column=snippet_column,
            columns=columns,
        )

    def doc_count(self, word: str) -> int:
        """How many rows hold ``word``, read at most every DOC_COUNT_TTL seconds (a
        common word's count costs a walk of its whole row list)."""
        match = match_any(word, drop_stopwords=False)
        if on_postgres():
            sql, match = pg.fts_doc_count_sql(self), pg.tsquery_text(match)
        else:
            sql = f"SELECT count(*) FROM {self.table} WHERE {self.table} MATCH %s"
        return _remembered_count(_doc_counts, sql, [match])

    def doc_counts(self, words: Sequence[str]) -> dict[str, int]:
        """``doc_count`` of each of ``words`` (on PostgreSQL a common word's count is
        estimated from the table's statistics)."""
        if on_postgres():
            return pg.fts_doc_counts(self, words)
        return {word: self.doc_count(word) for word in words}

    def row_count(self) -> int:
        """How many rows the index holds, read at most every ROW_COUNT_TTL seconds."""
        return cached_row_count(self.table if on_postgres() else f"{self.table}_docsize")

    def ids(self) -> set[int]:
        key = "id" if on_postgres() else "rowid"
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {key} FROM {self.table}")
            return {row[0] for row in cursor.fetchall()}

    def content_of(self, row_id: int) -> tuple[str, ...] | None:
        with connection.cursor() as cursor:
            key = "id" if on_postgres() else "rowid"
            cursor.execute(
                f"SELECT {', '.join(self.columns)} FROM {self.table} WHERE {key} = %s", [row_id]
            )
            row = cursor.fetchone()
        return tuple(row) if row else None
