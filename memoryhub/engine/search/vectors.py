"""Vector indexes keyed by the indexed row's id: sqlite-vec on SQLite, as below; pgvector
on PostgreSQL (see ``memoryhub.engine.search.postgres``).

Each index is two vec0 tables: exact float32 vectors (tagged with the embedding model)
and their sign bits, a plain table of the vectors for fetching by id, and a change log.
Small indexes are searched exactly. Large ones first take the nearest candidates by
Hamming distance over the bits (48 bytes a row instead of 1,536), then re-rank those
candidates by cosine similarity: outside transactions first on an in-memory copy of
the vectors in int8 (384 bytes a row), and exactly, with the stored float vectors, for
the best few of those. Outside transactions every scan runs on in-memory copies kept
current through the change log (see ``memoryhub.engine.search.mirror``).
"""

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import QuerySet

from memoryhub.engine.db.bulk import rows_by_ids
from memoryhub.engine.search import postgres as pg
from memoryhub.engine.search.fts import (
    Within,
    cached_row_count,
    compile_within,
    ids_within,
    on_postgres,
)
from memoryhub.engine.search.mirror import IndexCopy, int8_matrix, refresh, sign_bits

logger = logging.getLogger(__name__)

# Up to this many rows an exact scan is cheap enough.
EXACT_SCAN_LIMIT = 20_000
# Candidates taken from the bit index per wanted result, and at least this many. Sign
# bits tell near from far less well the more rows there are, so a large index also
# takes COARSE_PER_MILLION candidates per million rows (re-ranked exactly): measured
# with MiniLM questions, 160 of a million rows hold 75% of the true top 10, 1,280 hold
# 97%.
COARSE_FACTOR = 4
COARSE_MIN = 64
COARSE_PER_MILLION = 1280


def coarse_candidates(k: int, rows: int) -> int:
    """How many rows the bit pass keeps for a search of ``k`` over ``rows``."""
    return max(k * COARSE_FACTOR, COARSE_MIN, -(-rows * COARSE_PER_MILLION // 1_000_000))


# The int8 re-rank hands this many candidates per wanted result (and at least
# RERANK_EXACT_MIN) to the exact re-rank with the stored float vectors: fetching 1,280
# float vectors from SQLite took 55 ms of a 1M-row search, 40 take about 2 ms, and int8
# similarities differ from the exact ones by about 0.01.
RERANK_EXACT_FACTOR = 4
RERANK_EXACT_MIN = 32

# Past this many visible rows, filtering after the coarse pass is reliable enough that a
# fallback scan over the visible rows is not worth it.
VISIBLE_SCAN_LIMIT = 30_000
# Entries of the change log kept for in-memory copies to catch up from; a copy further
# behind reloads in full.
CHANGES_KEPT = 100_000

_copies: dict[tuple, IndexCopy] = {}
_copies_lock = threading.Lock()


@dataclass(frozen=True)
class VectorHit:
    id: int
    similarity: float  # cosine similarity in [-1, 1]


# Rows normalised together in one piece of a full load.
LOAD_PIECE = 16_384


def _unit_rows(
    rows: list[tuple[int, bytes]], encode: Callable[[np.ndarray], np.ndarray]
) -> list[tuple[int, bytes]]:
    """(id, ``encode`` of the stored vector scaled to unit length) of these rows. Rows of
    one width are scaled and encoded together, a piece at a time: a full load of 1M rows
    one by one took most of a minute, and as one matrix its temporaries cost as much
    again."""
    out: list[tuple[int, bytes]] = []
    for start in range(0, len(rows), LOAD_PIECE):
        piece = rows[start : start + LOAD_PIECE]
        if len({len(blob) for _, blob in piece}) == 1:
            matrix = np.frombuffer(b"".join(blob for _, blob in piece), dtype="<f4")
            matrices = [matrix.reshape(len(piece), -1)]
        else:  # vectors of two models' widths: one by one
            matrices = [np.frombuffer(blob, dtype="<f4").reshape(1, -1) for _, blob in piece]
        encoded = []
        for matrix in matrices:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            encoded.extend(row.tobytes() for row in encode(matrix / norms))
        out.extend(zip((row_id for row_id, _ in piece), encoded, strict=True))
    return out


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


@dataclass(frozen=True)
class VectorIndex:
    table: str
    dim: int = 384

    @property
    def bits_table(self) -> str:
        return f"{self.table}_bits"

    @property
    def raw_table(self) -> str:
        # Plain rows for fetching vectors by id: a vec0 lookup by rowid reads the whole
        # chunk (about 1.5 MB) holding the row.
        return f"{self.table}_raw"

    @property
    def changes_table(self) -> str:
        # The ids each write touched, in order: how in-memory copies of the sign bits
        # (``memoryhub.engine.search.mirror``) catch up.
        return f"{self.table}_changes"

    def create_sql(self, dim: int | None = None) -> list[str]:
        dim = dim or self.dim
        return [
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.table} USING vec0("
            f"embedding float[{dim}] distance_metric=cosine, +model text)",
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.bits_table} USING vec0("
            f"embedding bit[{dim}])",
            f"CREATE TABLE IF NOT EXISTS {self.raw_table} ("
            f"id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {self.changes_table} ("
            f"seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER NOT NULL)",
        ]

    def create_statements(self, dim: int | None = None) -> list[str]:
        """What creates the index on this connection's engine (idempotent)."""
        if on_postgres():
            return pg.vector_create_sql(self, dim or self.dim)
        return self.create_sql(dim)

    def drop_statements(self) -> list[str]:
        return pg.vector_drop_sql(self) if on_postgres() else self.drop_sql()

    def drop_sql(self) -> list[str]:
        return [
            f"DROP TABLE IF EXISTS {self.table}",
            f"DROP TABLE IF EXISTS {self.bits_table}",
            f"DROP TABLE IF EXISTS {self.raw_table}",
            f"DROP TABLE IF EXISTS {self.changes_table}",
        ]

    def raw_backfill_sql(self) -> str:
        """Copy vectors stored before the plain table existed into it."""
        return (
            f"INSERT OR IGNORE INTO {self.raw_table}(id, embedding) "
            f"SELECT rowid, embedding FROM {self.table}"
        )

    def current_dim(self) -> int | None:
        if on_postgres():
            return pg.vector_current_dim(self)
        with connection.cursor() as cursor:
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [self.table])
            row = cursor.fetchone()
        if row is None:
            return None
        marker = "float["
        sql = row[0]
        start = sql.index(marker) + len(marker)
        return int(sql[start : sql.index("]", start)])

    def ensure_dim(self, dim: int) -> bool:
        """Make the tables hold ``dim``-wide vectors; recreating them (and so dropping
        every stored vector) when the width changes. Returns True if recreated."""
        current = self.current_dim()
        if current == dim:
            return False
        with connection.cursor() as cursor:
            for sql in self.drop_statements() + self.create_statements(dim):
                cursor.execute(sql)
        return current is not None

    def upsert(self, items: Iterable[tuple[int, np.ndarray]], *, model: str) -> None:
        """Store (replace) the vectors of rows ``(id, vector)``."""
        if on_postgres():
            items = [(int(row_id), vector) for row_id, vector in items]
            if items:
                pg.vector_upsert(self, [(i, v, model) for i, v in items])
            return
        items = [(int(row_id), _blob(vector)) for row_id, vector in items]
        if not items:
            return
        with connection.cursor() as cursor:
            self._delete(cursor, [row_id for row_id, _ in items])
            cursor.executemany(
                f"INSERT INTO {self.table}(rowid, embedding, model) VALUES (%s, %s, %s)",
                [(row_id, blob, model) for row_id, blob in items],
            )
            cursor.executemany(
                f"INSERT INTO {self.bits_table}(rowid, embedding) "
                f"VALUES (%s, vec_quantize_binary(%s))",
                items,
            )
            cursor.executemany(
                f"INSERT INTO {self.raw_table}(id, embedding) VALUES (%s, %s)", items
            )
            self._log(cursor, [row_id for row_id, _ in items])

    def delete(self, ids: Iterable[int]) -> None:
        ids = [int(i) for i in ids]
        if on_postgres():
            pg.delete_ids(self.table, ids)
            return
        with connection.cursor() as cursor:
            self._delete(cursor, ids)
            self._log(cursor, ids)

    def _log(self, cursor, ids: list[int]) -> None:
        if not ids:
            return
        cursor.executemany(f"INSERT INTO {self.changes_table}(id) VALUES (%s)", [(i,) for i in ids])
        cursor.execute(
            f"DELETE FROM {self.changes_table} "
            f"WHERE seq <= (SELECT max(seq) FROM {self.changes_table}) - %s",
            [CHANGES_KEPT],
        )

    def _delete(self, cursor, ids: list[int]) -> None:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(f"DELETE FROM {self.table} WHERE rowid IN ({marks})", chunk)
            cursor.execute(f"DELETE FROM {self.bits_table} WHERE rowid IN ({marks})", chunk)
            cursor.execute(f"DELETE FROM {self.raw_table} WHERE id IN ({marks})", chunk)

    def count(self) -> int:
        table = self.table if on_postgres() else f"{self.table}_rowids"
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {table}")
            return cursor.fetchone()[0]

    def models(self) -> dict[int, str]:
        """Model id per stored row."""
        key = "id" if on_postgres() else "rowid"
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {key}, model FROM {self.table}")
            return dict(cursor.fetchall())

    def vectors(self, ids: Iterable[int]) -> dict[int, np.ndarray]:
        if on_postgres():
            return pg.vector_rows(self, ids)
        rows = self._rows_by_id(f"SELECT id, embedding FROM {self.raw_table}", "id", ids)
        return {row_id: np.frombuffer(blob, dtype="<f4") for row_id, blob in rows}

    def _rows_by_id(
        self, select: str, key: str, ids: Iterable[int] | None
    ) -> list[tuple[int, bytes]]:
        """The rows of ``select`` whose ``key`` is one of ``ids`` (all rows for None)."""
        if ids is not None:
            return rows_by_ids(select, key, ids)
        with connection.cursor() as cursor:
            cursor.execute(select)
            return cursor.fetchall()

    def knn(
        self,
        vector: np.ndarray,
        *,
        k: int,
        within: QuerySet | None = None,
        compiled: Within | None = None,
    ) -> list[VectorHit]:
        """The ``k`` rows most similar to ``vector`` (unit length), best first, among the
        ids of ``within`` when given (``compiled``: ``within`` already compiled by
        ``compile_within``, to share one compilation between searches)."""
        query = np.asarray(vector, dtype="<f4")
        if k <= 0:
            return []
        stored = self.current_dim()
        if stored is not None and stored != len(query):
            # Vectors of another embedder (a model change the backfill has not caught up
            # with): nothing here compares with this one, so nothing is near it.
            logger.warning(
                "%s holds %d-dimensional vectors; a %d-dimensional query finds none of them.",
                self.table,
                stored,
                len(query),
            )
            return []
        if on_postgres():
            if within is not None:
                compiled = compiled or compile_within(within)
            return pg.vector_knn(self, query, k, compiled if within is not None else None)
        # How to search depends on the size: a figure a few seconds old will do, but
        # an empty index is checked afresh (its first rows must be found at once).
        total = cached_row_count(f"{self.table}_rowids") or self.count()
        if total == 0:
            return []
        wanted = coarse_candidates(k, total)
        if total <= EXACT_SCAN_LIMIT:
            hits = self._exact_all(query, k=wanted if within is not None else k)
            candidates = [hit.id for hit in hits]
        else:
            self._copy_drop(len(query), np.float32)  # the index outgrew exact scans
            candidates = self._coarse(query, wanted)
        if within is not None:
            compiled = compiled or compile_within(within)
            allowed = ids_within(candidates, compiled)
            passed = [c for c in candidates if c in allowed]
            if len(passed) < k and len(candidates) >= wanted:
                # Most near neighbours are not the caller's: search the caller's rows.
                if total <= EXACT_SCAN_LIMIT:
                    return self._exact(query, k=k, within=compiled)
                visible = within.count()
                if visible <= VISIBLE_SCAN_LIMIT:
                    return self._rerank(query, list(within.values_list("pk", flat=True)), k)
                return self._exact(query, k=k, within=compiled)
            candidates = passed
        if total <= EXACT_SCAN_LIMIT:
            by_id = {hit.id: hit for hit in hits}
            return [by_id[c] for c in candidates[:k]]
        return self._rerank(query, candidates, k)

    def warm(self) -> int:
        """Build this process's in-memory copies of the index, as its first searches
        would, so that a process just started does not spend the first recall's time on
        them; the rows the index holds. PostgreSQL keeps none (pgvector searches)."""
        if on_postgres() or connection.in_atomic_block:
            return 0
        dim = self.current_dim()
        if dim is None:
            return 0
        total = self.count()
        if total <= EXACT_SCAN_LIMIT:
            copies = [(dim, np.float32, self._unit_vectors_of)]
        else:
            copies = [(dim // 64, np.uint64, self._bits_of), (dim, np.int8, self._int8_vectors_of)]
            if dim % 64:
                copies = copies[1:]  # no bit copy: such vectors are searched in SQLite
        for width, dtype, rows_of in copies:
            with self._current_copy(width, dtype, rows_of):
                pass
        return total

    def _coarse(self, query: np.ndarray, wanted: int) -> list[int]:
        """The ``wanted`` rows nearest to ``query`` by Hamming distance of sign bits:
        from this process's in-memory copy outside transactions (only committed rows
        may enter it), else from SQLite."""
        if not connection.in_atomic_block and len(query) % 64 == 0:
            with self._current_copy(len(query) // 64, np.uint64, self._bits_of) as copy:
                return copy.nearest(sign_bits(query), wanted)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT rowid FROM {self.bits_table} "
                f"WHERE embedding MATCH vec_quantize_binary(%s) AND k = %s",
                [_blob(query), wanted],
            )
            return [row[0] for row in cursor.fetchall()]

    def _exact_all(self, query: np.ndarray, *, k: int) -> list[VectorHit]:
        """The ``k`` rows most similar to ``query`` among all rows, exactly: from this
        process's in-memory copy of the vectors outside transactions, else in SQLite."""
        if connection.in_atomic_block:
            return self._exact(query, k=k, within=None)
        norm = float(np.linalg.norm(query))
        unit = query / norm if norm else query
        with self._current_copy(len(query), np.float32, self._unit_vectors_of) as copy:
            return [VectorHit(id=i, similarity=s) for i, s in copy.most_similar(unit, k)]

    def _copy_key(self, width: int, dtype: type) -> tuple:
        name = str(connection.settings_dict["NAME"])
        return (connection.alias, name, self.table, width, np.dtype(dtype).name)

    @contextmanager
    def _current_copy(
        self, width: int, dtype: type, rows_of: Callable[[list[int] | None], list]
    ) -> Iterator[IndexCopy]:
        """This process's in-memory copy of ``width`` values of ``dtype`` per row, brought
        up to date from the change log, held locked for the caller."""
        key = self._copy_key(width, dtype)
        with _copies_lock:
            copy = _copies.get(key)
            if copy is None:
                copy = _copies[key] = IndexCopy(width=width, dtype=dtype)
        with copy.lock:
            refresh(
                copy,
                log_bounds=self._log_bounds,
                changed_since=self._changed_since,
                rows_of=rows_of,
            )
            yield copy

    def _copy_drop(self, width: int, dtype: type) -> None:
        with _copies_lock:
            _copies.pop(self._copy_key(width, dtype), None)

    def _unit_vectors_of(self, ids: list[int] | None) -> list[tuple[int, bytes]]:
        """(id, the vector scaled to unit length) of these rows, or of every row."""
        rows = self._rows_by_id(f"SELECT id, embedding FROM {self.raw_table}", "id", ids)
        return _unit_rows(rows, lambda units: units.astype("<f4"))

    def _log_bounds(self) -> tuple[int, int]:
        with connection.cursor() as cursor:
            # Two subqueries: SQLite answers a lone min() or max() from the key at once,
            # but scans the whole table for both in one SELECT.
            table = self.changes_table
            cursor.execute(f"SELECT (SELECT min(seq) FROM {table}), (SELECT max(seq) FROM {table})")
            first, last = cursor.fetchone()
        return first or 0, last or 0

    def _changed_since(self, after: int, upto: int) -> list[int]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT DISTINCT id FROM {self.changes_table} WHERE seq > %s AND seq <= %s",
                [after, upto],
            )
            return [row[0] for row in cursor.fetchall()]

    def _bits_of(self, ids: list[int] | None) -> list[tuple[int, bytes]]:
        """(id, sign bits) of these rows, or of every row."""
        return self._rows_by_id(f"SELECT rowid, embedding FROM {self.bits_table}", "rowid", ids)

    def _exact(
        self, query: np.ndarray, *, k: int, within: QuerySet | Within | None
    ) -> list[VectorHit]:
        sql = f"SELECT rowid, distance FROM {self.table} WHERE embedding MATCH %s AND k = %s"
        params: list = [_blob(query), k]
        if within is not None:
            inner_sql, inner_params = compile_within(within)
            sql += f" AND rowid IN ({inner_sql})"
            params.extend(inner_params)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        return [VectorHit(id=row_id, similarity=1.0 - distance) for row_id, distance in rows]

    def _rerank(self, query: np.ndarray, ids: list[int], k: int) -> list[VectorHit]:
        """The ``k`` of ``ids`` most similar to ``query``: outside transactions the int8
        copy picks the best few, which are then scored exactly."""
        if not connection.in_atomic_block and len(ids) > k:
            norm = float(np.linalg.norm(query))
            unit = query / norm if norm else query
            with self._current_copy(len(query), np.int8, self._int8_vectors_of) as copy:
                scored = copy.dot_of(ids, unit)
            if len(scored) == len(ids):  # rows of another width would be missing
                scored.sort(key=lambda item: -item[1])
                keep = max(k * RERANK_EXACT_FACTOR, RERANK_EXACT_MIN)
                ids = [row_id for row_id, _ in scored[:keep]]
        vectors = self.vectors(ids)
        if not vectors:
            return []
        order = list(vectors)
        matrix = np.vstack([vectors[i] for i in order])
        scores = matrix @ query
        best = np.argsort(-scores)[:k]
        return [VectorHit(id=order[i], similarity=float(scores[i])) for i in best]

    def _int8_vectors_of(self, ids: list[int] | None) -> list[tuple[int, bytes]]:
        """(id, the unit vector in int8) of these rows, or of every row."""
        rows = self._rows_by_id(f"SELECT id, embedding FROM {self.raw_table}", "id", ids)
        return _unit_rows(rows, int8_matrix)
