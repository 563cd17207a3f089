"""The search core on PostgreSQL: full-text with ``tsvector`` and GIN, vectors with
pgvector (HNSW, cosine), behind the same ``FtsIndex`` and ``VectorIndex`` as SQLite.

Full-text: an index is a table of the indexed columns, keyed by the row's id, with a
generated ``document`` column (each column's words under its own weight class, A to D)
and a GIN index on it. The search expressions ``memoryhub.engine.search.text`` builds for FTS5
(quoted words joined by AND / OR, a trailing ``*`` for a prefix) are translated into a
``tsquery`` here, each word passed through the index's text search configuration, so
whatever the user typed stays a plain word. Rank is bm25-like: per query word,
``ts_rank`` with the column weights times the word's inverse document frequency, summed,
and reported negated so that, as with bm25, lower is better.

Vectors: one table of ``vector(dim)`` with an HNSW index for cosine distance. The index
is approximate in which rows it visits, never in the distances it reports; a filtered
search uses pgvector's iterative scan, so a filter that admits few of the nearest rows
still gets ``k`` of its own (or the planner scans the admitted rows exactly).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
from django.db import connection

from memoryhub.engine.db.bulk import binary_cursor
from memoryhub.engine.search.remembered import MISSING, Remembered

if TYPE_CHECKING:
    from memoryhub.engine.search.fts import FtsIndex, Within
    from memoryhub.engine.search.vectors import VectorHit, VectorIndex

# Text search configurations the migrations create: English stemming, or words as they
# are (identifiers), both with accents removed (FTS5's ``remove_diacritics``).
STEMMED_CONFIG = "memoryhub_english"
PLAIN_CONFIG = "memoryhub_simple"
WEIGHT_CLASSES = "ABCD"
# Nodes an HNSW search keeps in its candidate list; more find more of the true nearest
# rows, for more time. EF_SEARCH up to EF_SEARCH_ROWS rows in the table, then growing as
# (rows / EF_SEARCH_ROWS) ** EF_SEARCH_GROWTH: about 150 at 100k rows and 570 at a
# million, where 100 finds 0.85 of the exact ten nearest and 570 about 0.96. Never more
# than pgvector's 1000, never fewer than the rows asked for. The rows are the planner's
# estimate (pg_class), read in the statement that sets the search.
EF_SEARCH = 100
EF_SEARCH_ROWS = 50_000
EF_SEARCH_GROWTH = 0.58
# The HNSW graph a vector index is built with: neighbours per node and the candidate
# list while inserting. Twice pgvector's defaults (16, 64): at a million rows the graph
# finds 0.85 of the exact ten nearest at ef_search 100 instead of 0.79, for a build 1.6
# times as long. An index keeps the graph it was built with until it is built again.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 128
# Rows an iterative filtered scan may visit before it gives up (pgvector's default is
# 20,000).
MAX_SCAN_TUPLES = 40_000
IDS_PER_STATEMENT = 1000
# Rows per statement of an index upsert.
UPSERT_ROWS = 5000

_QUOTED = re.compile(r'"((?:[^"]|"")*)"(\*?)')
# Past this many distinct words a query is ranked by ts_rank alone.
MAX_RANKED_WORDS = 12
_COLUMN_FILTER = re.compile(r"\{([^}]*)\}\s*:\s*")
_TOKEN = re.compile(r'"((?:[^"]|"")*)"(\*?)|\bAND\b|\bOR\b|\bNOT\b|\(|\)|[^\s()"]+')


def search_configs_sql() -> list[str]:
    """The text search configurations every index uses (idempotent). Like FTS5, they
    keep stopwords: "who" is a word a row may hold or not."""
    statements = [
        "CREATE EXTENSION IF NOT EXISTS unaccent",
        "DO $$ BEGIN "
        "IF NOT EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = 'memoryhub_english_stem') "
        "THEN CREATE TEXT SEARCH DICTIONARY memoryhub_english_stem "
        "(TEMPLATE = snowball, LANGUAGE = english); "
        "END IF; END $$",
    ]
    for name, base, words in (
        (STEMMED_CONFIG, "english", "unaccent, memoryhub_english_stem"),
        (PLAIN_CONFIG, "simple", "unaccent, simple"),
    ):
        statements.append(
            "DO $$ BEGIN "
            f"IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '{name}') THEN "
            f"CREATE TEXT SEARCH CONFIGURATION {name} (COPY = {base}); "
            f"ALTER TEXT SEARCH CONFIGURATION {name} ALTER MAPPING FOR "
            "hword, hword_part, word, asciiword, asciihword, hword_asciipart "
            f"WITH {words}; "
            "END IF; END $$"
        )
    return statements


def fts_config(index: FtsIndex) -> str:
    return STEMMED_CONFIG if "porter" in index.tokenize else PLAIN_CONFIG


def fts_create_sql(index: FtsIndex) -> list[str]:
    if len(index.columns) > len(WEIGHT_CLASSES):
        raise ValueError(f"{index.table}: PostgreSQL weighs at most four columns")
    config = fts_config(index)
    document = " || ".join(
        f"setweight(to_tsvector('{config}'::regconfig, coalesce({column}, '')), '{klass}')"
        for column, klass in zip(index.columns, WEIGHT_CLASSES, strict=False)
    )
    columns = ", ".join(f"{column} text NOT NULL DEFAULT ''" for column in index.columns)
    return [
        *search_configs_sql(),
        f"CREATE TABLE IF NOT EXISTS {index.table} (id bigint PRIMARY KEY, {columns}, "
        f"document tsvector GENERATED ALWAYS AS ({document}) STORED)",
        f"CREATE INDEX IF NOT EXISTS {index.table}_document ON {index.table} USING gin (document)",
    ]


def fts_drop_sql(index: FtsIndex) -> list[str]:
    return [f"DROP TABLE IF EXISTS {index.table}"]


def _lexeme(word: str) -> str:
    """``word`` quoted as one tsquery operand."""
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def _column_classes(index: FtsIndex | None, match: str) -> tuple[str, str]:
    """The weight classes of the columns an FTS5 column filter (``{a b} : (...)``, see
    ``memoryhub.engine.search.text.in_columns``) names, and the expression without it."""
    found = _COLUMN_FILTER.match(match)
    if found is None:
        return "", match
    if index is None:
        raise ValueError("A column filter needs the index it applies to.")
    wanted = found.group(1).split()
    classes = "".join(
        klass
        for column, klass in zip(index.columns, WEIGHT_CLASSES, strict=False)
        if column in wanted
    )
    return classes, match[found.end() :]


def tsquery_text(match: str, index: FtsIndex | None = None) -> str:
    """The tsquery text (for ``to_tsquery``) of an FTS5 expression as built by
    ``memoryhub.engine.search.text``: quoted words (``*`` after one: a prefix), AND, OR, NOT
    and parentheses, under an optional column filter of ``index``'s columns (each word
    then matches only in their weight classes). Anything else is taken as a plain word."""
    classes, match = _column_classes(index, match)
    parts: list[str] = []
    for token in _TOKEN.finditer(match):
        text = token.group(0)
        if token.group(1) is not None:
            word = token.group(1).replace('""', '"')
            label = ("*" if token.group(2) else "") + classes
            parts.append(_lexeme(word) + (f":{label}" if label else ""))
        elif text == "AND":
            parts.append("&")
        elif text == "OR":
            parts.append("|")
        elif text == "NOT":
            parts.append("& !")
        elif text in "()":
            parts.append(text)
        else:
            parts.append(_lexeme(text) + (f":{classes}" if classes else ""))
    # Adjacent operands (FTS5 reads them as AND) get an explicit &.
    operators = ("&", "|", "& !")
    joined: list[str] = []
    for part in parts:
        opens = part not in (*operators, ")")
        if opens and joined and joined[-1] not in (*operators, "("):
            joined.append("&")
        joined.append(part)
    return " ".join(joined)


def _weights(index: FtsIndex) -> str:
    """ts_rank's weight array, {D, C, B, A}: the column weights scaled into (0, 1]."""
    given = list(index.weights) or [1.0] * len(index.columns)
    given += [given[-1]] * (len(WEIGHT_CLASSES) - len(given))
    top = max(given) or 1.0
    scaled = [max(w / top, 0.0) for w in given[: len(WEIGHT_CLASSES)]]
    return "{" + ", ".join(f"{w:.6g}" for w in reversed(scaled)) + "}"


def _headline(index: FtsIndex, column: int) -> str:
    """SQL of the snippet of ``column`` (-1: the first column that matches) for the
    row ``f`` and the query ``q``, matches marked ``[[``/``]]``."""
    config = fts_config(index)
    options = "'StartSel=[[, StopSel=]], MaxWords=16, MinWords=6, ShortWord=1, HighlightAll=false'"

    def one(name: str) -> str:
        return f"ts_headline('{config}'::regconfig, f.{name}, q.query, {options})"

    if column >= 0:
        return one(index.columns[column])
    cases = " ".join(
        f"WHEN to_tsvector('{config}'::regconfig, f.{name}) @@ q.query THEN {one(name)}"
        for name in index.columns
    )
    return f"CASE {cases} ELSE '' END"


# The planner's statistics of a full-text table are read at most this often.
STATISTICS_TTL = 300.0
_common_shares: Remembered[dict[str, float]] = Remembered(STATISTICS_TTL)
# How a word is indexed changes only with the configuration, which is in the key.
_stems: Remembered[tuple[str, ...]] = Remembered(None)


def _common_lexemes(index: FtsIndex) -> dict[str, float]:
    """The share of rows holding each of the index's most common lexemes, from the
    statistics ANALYZE keeps of its ``document`` column (empty before the first)."""

    def read() -> dict[str, float]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
                "WHERE schemaname = current_schema() AND tablename = %s AND attname = 'document'",
                [index.table],
            )
            row = cursor.fetchone()
        # The frequencies list one share per lexeme, then the least, the most and the
        # share of empty documents.
        return dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}

    return _common_shares.get(read, index.table)


def _lexemes_of(index: FtsIndex, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The lexemes each of ``words`` is indexed as (none for a token the parser drops,
    such as a lone symbol: the configurations keep stopwords)."""
    config = fts_config(index)
    found = {word: _stems.peek(config, word) for word in words}
    missing = [word for word, lexemes in found.items() if lexemes is MISSING]
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT w, tsvector_to_array(to_tsvector('{config}'::regconfig, w)) "
                "FROM unnest(%s::text[]) AS w",
                [missing],
            )
            for word, lexemes in cursor.fetchall():
                found[word] = _stems.put(tuple(lexemes), config, word)
    return found  # type: ignore[return-value]


def fts_doc_counts(index: FtsIndex, words: Sequence[str]) -> dict[str, int]:
    """How many rows hold each of ``words``. Counting a common word's rows walks a long
    list of them (100k facts: 5 ms for a word of one row in ten), so a word whose one
    lexeme the table's statistics list as common is estimated from its share of the
    sampled rows; the others, rarer than any listed, are counted."""
    words = list(dict.fromkeys(words))
    shares = _common_lexemes(index)
    lexemes = _lexemes_of(index, words) if shares else {}
    counts: dict[str, int] = {}
    for word in words:
        found = lexemes.get(word)
        if found is not None and not found:
            counts[word] = 0  # indexed as nothing: no row holds it
        elif found is not None and len(found) == 1 and found[0] in shares:
            counts[word] = round(shares[found[0]] * index.row_count())
        else:
            counts[word] = index.doc_count(word)
    return counts


def _idf(rows: int, holding: int) -> float:
    """bm25's inverse document frequency of a word held by ``holding`` of ``rows``."""
    holding = min(holding, rows)
    return math.log((rows - holding + 0.5) / (holding + 0.5) + 1.0)


def _rank_sql(index: FtsIndex, match: str) -> tuple[str, list]:
    """SQL (and its params) of a row's score for ``match``, higher is better: per word
    of the query, ``ts_rank`` of the row for that word (column weights, length
    normalised) times the word's inverse document frequency, summed, as bm25 weighs a
    rare word above a common one (``ts_rank`` alone counts every word alike)."""
    words = list(dict.fromkeys(w.replace('""', '"') for w, _ in _QUOTED.findall(match)))
    config, weights = fts_config(index), _weights(index)
    if not words or len(words) > MAX_RANKED_WORDS:
        return f"ts_rank('{weights}'::real[], f.document, q.query, 1)", []
    terms, params = [], []
    rows, holding = index.row_count(), fts_doc_counts(index, words)
    for word in words:
        terms.append(
            f"%s * ts_rank('{weights}'::real[], f.document, "
            f"to_tsquery('{config}'::regconfig, %s), 1)"
        )
        params.extend([_idf(rows, holding[word]), _lexeme(word)])
    return " + ".join(terms), params


def fts_query(
    index: FtsIndex,
    match: str,
    limit: int,
    within: Within | None,
    snippet_column: int | None,
    *,
    overfetch: int | None = None,
) -> list[tuple] | None:
    """(id, -rank[, snippet]) of the best ``limit`` rows for ``match``.

    With ``overfetch``, the best ``overfetch`` rows of the whole index are ranked and
    only then filtered by ``within``, in one statement: ranking the admitted rows alone
    builds the whole admitted set first, which costs more than the ranking when the
    filter admits most rows. None when fewer than ``limit`` of those are admitted while
    more rows match: then only the filtered search finds the best."""
    config = fts_config(index)
    rank, rank_params = _rank_sql(index, match)
    params: list = [*rank_params, tsquery_text(match, index)]
    # The GIN index answers the whole query, pairs of words included: it reads every
    # word's list of rows, and the table only for the rows that match. (Looking rows up
    # by the rarest word of each pair and checking the pairs on those reads the table
    # for every row holding one: 1M facts, 20k rows of the table for 1k matches, and a
    # p50 of 64 ms against 21.)
    query = f"(SELECT to_tsquery('{config}'::regconfig, %s) AS query) q"
    where = "f.document @@ q.query"
    select = f"SELECT f.id, -({rank}) AS score"
    head = ""
    if within is not None and overfetch is not None:
        # ``matched`` counts every matching row (the window sees them all before the
        # limit); the last row of the answer carries it, admitted or not.
        inner_sql, inner_params = within
        head = (
            f"WITH best AS MATERIALIZED ({select}, count(*) OVER () AS matched "
            f"FROM {index.table} f, {query} WHERE {where} ORDER BY score, f.id LIMIT %s) "
        )
        ranked = (
            f"SELECT best.id, best.score FROM best WHERE best.id IN ({inner_sql}) "
            "ORDER BY best.score, best.id LIMIT %s"
        )
        params.extend([overfetch, *inner_params, limit])
    else:
        if within is not None:
            inner_sql, inner_params = within
            where += f" AND f.id IN ({inner_sql})"
            params.extend(inner_params)
        ranked = (
            f"{select} FROM {index.table} f, {query} WHERE {where} ORDER BY score, f.id LIMIT %s"
        )
        params.append(limit)
    if snippet_column is None:
        sql = ranked
    else:
        sql = (
            f"SELECT r.id, r.score, {_headline(index, snippet_column)} "
            f"FROM ({ranked}) r JOIN {index.table} f ON f.id = r.id, "
            f"(SELECT to_tsquery('{config}'::regconfig, %s) AS query) q "
            "ORDER BY r.score, r.id"
        )
        params.append(tsquery_text(match, index))
    if head:
        blank = "" if snippet_column is None else ", NULL"
        sql = f"{head}({sql}) UNION ALL (SELECT NULL, max(matched){blank} FROM best)"
    with connection.cursor() as cursor:
        # The planner prices matching a tsvector far too cheaply and scans the whole
        # table where the GIN index answers in a third of the time (100k facts: 14 ms
        # against 5 for a word of 5% of the rows); the index is the way for this one
        # statement. (Within a transaction that then fails, its rollback undoes the SET.)
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        except Exception:
            if not connection.in_atomic_block:
                cursor.execute("RESET enable_seqscan")
            raise
        cursor.execute("RESET enable_seqscan")
    if not head:
        return rows
    matched = next((row[1] for row in rows if row[0] is None), None) or 0
    rows = sorted((row for row in rows if row[0] is not None), key=lambda row: (row[1], row[0]))
    if len(rows) < limit and matched > overfetch:
        return None
    return rows


def fts_doc_count_sql(index: FtsIndex) -> str:
    return (
        f"SELECT count(*) FROM {index.table} "
        f"WHERE document @@ to_tsquery('{fts_config(index)}'::regconfig, %s)"
    )


def fts_upsert(index: FtsIndex, rows: Sequence[tuple[int, Sequence[str]]], *, cursor=None) -> None:
    """Index (or re-index) ``(id, (column values...))`` rows, on the connection of
    ``cursor`` (default: this thread's). One statement: a column of values per array,
    sent in binary and unnested into rows (a row listed twice keeps its last values)."""
    latest = {row_id: values for row_id, values in rows}
    if not latest:
        return
    columns = ", ".join(("id", *index.columns))
    arrays = ", ".join(["%b::bigint[]", *["%b::text[]"] * len(index.columns)])
    updates = ", ".join(f"{column} = EXCLUDED.{column}" for column in index.columns)
    ids = list(latest)
    values = [list(column) for column in zip(*latest.values(), strict=True)]
    with binary_cursor(cursor.db if cursor is not None else None) as out:
        for start in range(0, len(ids), UPSERT_ROWS):
            out.execute(
                f"INSERT INTO {index.table} ({columns}) SELECT * FROM unnest({arrays}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                [ids[start : start + UPSERT_ROWS]]
                + [column[start : start + UPSERT_ROWS] for column in values],
            )


@contextmanager
def _cursor(cursor=None):
    """``cursor`` itself, or a new cursor of this thread's connection, closed after."""
    if cursor is not None:
        yield cursor
        return
    with connection.cursor() as own:
        yield own


def delete_ids(table: str, ids: list[int]) -> None:
    with connection.cursor() as cursor:
        for start in range(0, len(ids), IDS_PER_STATEMENT):
            cursor.execute(
                f"DELETE FROM {table} WHERE id = ANY(%s)", [ids[start : start + IDS_PER_STATEMENT]]
            )


# --- vectors ---------------------------------------------------------------------------


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def vector_create_sql(index: VectorIndex, dim: int) -> list[str]:
    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"CREATE TABLE IF NOT EXISTS {index.table} (id bigint PRIMARY KEY, "
        f"embedding vector({dim}) NOT NULL, model text NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {index.table}_hnsw ON {index.table} "
        "USING hnsw (embedding vector_cosine_ops) "
        f"WITH (m = {int(HNSW_M)}, ef_construction = {int(HNSW_EF_CONSTRUCTION)})",
    ]


def vector_drop_sql(index: VectorIndex) -> list[str]:
    return [f"DROP TABLE IF EXISTS {index.table}"]


def vector_current_dim(index: VectorIndex, *, cursor=None) -> int | None:
    with _cursor(cursor) as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute "
            "WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
            [index.table],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def vector_upsert(
    index: VectorIndex, items: Sequence[tuple[int, np.ndarray, str]], *, cursor=None
) -> None:
    """Store (replace) ``(id, vector, model)`` rows, on ``cursor`` (default: a cursor of
    this thread's connection)."""
    with _cursor(cursor) as out:
        out.executemany(
            f"INSERT INTO {index.table} (id, embedding, model) VALUES (%s, %s::vector, %s) "
            "ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding, "
            "model = EXCLUDED.model",
            [(row_id, vector_literal(vector), model) for row_id, vector, model in items],
        )


def vector_rows(index: VectorIndex, ids: Iterable[int] | None) -> dict[int, np.ndarray]:
    # pgvector's binary form (int16 dimensions, int16 unused, big-endian float4s): a
    # vector printed as text costs the server and the driver ten times as much.
    select = f"SELECT id, vector_send(embedding) FROM {index.table}"
    found: dict[int, np.ndarray] = {}
    with connection.cursor() as cursor:
        if ids is None:
            cursor.execute(select)
            rows = cursor.fetchall()
        else:
            ids = [int(i) for i in ids]
            rows = []
            for start in range(0, len(ids), IDS_PER_STATEMENT):
                cursor.execute(
                    f"{select} WHERE id = ANY(%s)", [ids[start : start + IDS_PER_STATEMENT]]
                )
                rows.extend(cursor.fetchall())
    for row_id, data in rows:
        found[row_id] = np.frombuffer(data, dtype=">f4", offset=4).astype("<f4")
    return found


def vector_search_settings(index: VectorIndex, k: int) -> tuple[str, list]:
    """The statement (and its parameters) that sets a connection's HNSW search for ``k``
    rows of ``index``: ef_search by the table's size, an iterative scan for filters."""
    return (
        "SELECT set_config('hnsw.ef_search', least(1000, greatest(%s, round(%s * "
        "power(greatest(1.0, reltuples / %s), %s))))::int::text, false), "
        "set_config('hnsw.iterative_scan', 'relaxed_order', false), "
        "set_config('hnsw.max_scan_tuples', %s, false) "
        "FROM pg_class WHERE oid = %s::regclass",
        [k, EF_SEARCH, EF_SEARCH_ROWS, EF_SEARCH_GROWTH, str(MAX_SCAN_TUPLES), index.table],
    )


def vector_knn(
    index: VectorIndex, query: np.ndarray, k: int, within: Within | None
) -> list[VectorHit]:
    from memoryhub.engine.search.vectors import VectorHit

    literal = vector_literal(query)
    where, params = "", [literal]
    if within is not None:
        inner_sql, inner_params = within
        where = f"WHERE id IN ({inner_sql}) "
        params.extend(inner_params)
    params.append(k)
    with connection.cursor() as cursor:
        # Session settings of this connection, set afresh for every search.
        cursor.execute(*vector_search_settings(index, k))
        cursor.execute(
            f"SELECT id, embedding <=> %s::vector AS distance FROM {index.table} "
            f"{where}ORDER BY distance LIMIT %s",
            params,
        )
        rows = cursor.fetchall()
    # A relaxed iterative scan may return rows slightly out of order.
    hits = [VectorHit(id=row_id, similarity=1.0 - float(distance)) for row_id, distance in rows]
    hits.sort(key=lambda hit: (-hit.similarity, hit.id))
    return hits
