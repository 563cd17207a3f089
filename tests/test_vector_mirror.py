"""The in-memory copies of a vector index (sign bits, int8 and float vectors): the same
neighbours as a scan in SQLite, and up to date after every committed write, update,
delete and re-creation."""

import numpy as np
import pytest
from django.db import connection, transaction

from facts.search import FACT_VECTORS
from memoryhub.engine.search import fts, vectors
from memoryhub.engine.search.mirror import INT8_SCALE, IndexCopy, int8_matrix, sign_bits
from memoryhub.engine.search.remembered import Remembered

# PostgreSQL searches pgvector's own index; nothing is copied into memory.
pytestmark = pytest.mark.sqlite_only("in-memory copies of sqlite-vec indexes")

DIM = 384


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, DIM)).astype("<f4")
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def hamming_order(matrix: np.ndarray, ids: list[int], query: np.ndarray) -> list[int]:
    signs = matrix > 0
    distance = (signs != (query > 0)).sum(axis=1)
    return [ids[i] for i in np.argsort(distance, kind="stable")]


def test_nearest_matches_a_brute_force_hamming_scan():
    rng = np.random.default_rng(3)
    matrix = unit(rng, 500)
    ids = list(range(1000, 1500))
    mirror = IndexCopy(width=DIM // 64)
    mirror.load([(i, sign_bits(v)) for i, v in zip(ids, matrix, strict=True)], seq=1)
    query = matrix[42] + 0.05 * unit(rng, 1)[0]
    found = mirror.nearest(sign_bits(query), 30)
    expected = hamming_order(matrix, ids, query)
    distance = dict(zip(expected, range(500), strict=True))
    assert found[0] == 1042
    # Same distances as the brute-force scan's first 30 (ties may come in any order).
    signs = {i: (v > 0) for i, v in zip(ids, matrix, strict=True)}
    got = sorted(int((signs[i] != (query > 0)).sum()) for i in found)
    want = sorted(int((signs[i] != (query > 0)).sum()) for i in expected[:30])
    assert got == want and len(set(found)) == 30 and all(i in distance for i in found)


def test_apply_updates_deletes_inserts_and_compacts():
    rng = np.random.default_rng(4)
    matrix = unit(rng, 40)
    mirror = IndexCopy(width=DIM // 64)
    mirror.load([(i, sign_bits(matrix[i])) for i in range(40)], seq=5)
    moved = -matrix[7]  # row 7 now points the other way
    newcomer = unit(rng, 1)[0]
    gone = list(range(10, 30))
    rows = [(7, sign_bits(moved)), (99, sign_bits(newcomer))]
    mirror.apply([7, 99, *gone], rows, seq=9)
    assert mirror.seq == 9
    assert mirror.nearest(sign_bits(newcomer), 1) == [99]
    assert mirror.nearest(sign_bits(moved), 1) == [7]
    everything = mirror.nearest(sign_bits(newcomer), 100)
    assert sorted(everything) == sorted({*range(40), 99} - set(gone))
    assert len(mirror.ids) == 21  # half the rows were dead: the arrays were compacted


def test_int8_dot_products_are_close_to_the_exact_cosine_similarities():
    rng = np.random.default_rng(9)
    matrix = unit(rng, 300)
    mirror = IndexCopy(width=DIM, dtype=np.int8)
    mirror.load([(i, int8_matrix(v).tobytes()) for i, v in enumerate(matrix)], seq=1)
    query = unit(rng, 1)[0]
    wanted = [5, 17, 299, 1000, 42]  # 1000 is not held
    scored = mirror.dot_of(wanted, query)
    assert [i for i, _ in scored] == [5, 17, 299, 42]
    exact = matrix[[5, 17, 299, 42]] @ query
    assert np.allclose([s / INT8_SCALE for _, s in scored], exact, atol=0.01)


@pytest.fixture
def small_index(monkeypatch):
    """Fresh in-memory copies and row counts (an earlier test's count of the index,
    kept a few seconds, would send a search down the path for small indexes), and an
    empty index before and after: a transactional test's flush leaves the vector
    tables alone, so another module's test may have left rows in them."""

    def empty() -> None:
        with connection.cursor() as cursor:
            for sql in FACT_VECTORS.drop_sql() + FACT_VECTORS.create_sql(DIM):
                cursor.execute(sql)

    monkeypatch.setattr(vectors, "_copies", {})
    monkeypatch.setattr(fts, "_row_counts", Remembered(fts.ROW_COUNT_TTL))
    empty()
    yield
    empty()


@pytest.fixture
def large_index(small_index, monkeypatch):
    """Any index counts as large, so the coarse pass runs."""
    monkeypatch.setattr(vectors, "EXACT_SCAN_LIMIT", 10)


@pytest.mark.django_db(transaction=True)
def test_knn_outside_a_transaction_sees_every_committed_change(large_index):
    rng = np.random.default_rng(5)
    matrix = unit(rng, 300)
    FACT_VECTORS.upsert(((i + 1, v) for i, v in enumerate(matrix)), model="m")

    def best(query: np.ndarray) -> int:
        return FACT_VECTORS.knn(query, k=3)[0].id

    assert best(matrix[10]) == 11
    assert vectors._copies  # the search above ran on the in-memory copy
    with transaction.atomic():  # the SQLite path gives the same answer
        assert FACT_VECTORS.knn(matrix[10], k=3)[0].id == 11
    target = unit(rng, 1)[0]
    FACT_VECTORS.upsert([(200, target)], model="m")  # an update
    assert best(target) == 200
    FACT_VECTORS.upsert([(5000, -target)], model="m")  # an insert
    assert best(-target) == 5000
    FACT_VECTORS.delete([200])
    assert 200 not in {hit.id for hit in FACT_VECTORS.knn(target, k=20)}


@pytest.mark.django_db(transaction=True)
def test_a_large_index_re_ranks_on_its_int8_copy_with_the_exact_scores(large_index):
    rng = np.random.default_rng(10)
    # Fewer rows than the bit pass keeps: every row reaches the re-rank, so its answer
    # must be the exact top five.
    matrix = unit(rng, vectors.COARSE_MIN - 4)
    FACT_VECTORS.upsert(((i + 1, v) for i, v in enumerate(matrix)), model="m")
    query = matrix[20] + 0.3 * unit(rng, 1)[0]
    query /= np.linalg.norm(query)
    in_memory = FACT_VECTORS.knn(query, k=5)
    assert any(key[-1] == "int8" for key in vectors._copies)
    exact = [int(i) + 1 for i in np.argsort(-(matrix @ query))[:5]]
    assert in_memory[0].id == 21
    assert [h.id for h in in_memory] == exact
    with transaction.atomic():  # bits and the re-rank in SQLite
        assert [h.id for h in FACT_VECTORS.knn(query, k=5)] == exact
    # The scores are the stored float vectors', not the int8 estimates.
    assert [h.similarity for h in in_memory] == pytest.approx(
        [float(matrix[h.id - 1] @ query) for h in in_memory], abs=1e-6
    )
    FACT_VECTORS.upsert([(21, -matrix[20])], model="m")  # an update reaches the copy
    assert 21 not in {h.id for h in FACT_VECTORS.knn(query, k=5)}


@pytest.mark.django_db(transaction=True)
def test_a_mirror_behind_the_pruned_log_or_a_recreated_index_reloads(large_index, monkeypatch):
    rng = np.random.default_rng(6)
    matrix = unit(rng, 50)
    FACT_VECTORS.upsert(((i + 1, v) for i, v in enumerate(matrix)), model="m")
    assert FACT_VECTORS.knn(matrix[0], k=1)[0].id == 1
    monkeypatch.setattr(vectors, "CHANGES_KEPT", 2)
    fresh = unit(rng, 20)
    FACT_VECTORS.upsert(((i + 100, v) for i, v in enumerate(fresh)), model="m")
    assert FACT_VECTORS.knn(fresh[3], k=1)[0].id == 103
    FACT_VECTORS.ensure_dim(DIM + 64)  # a new model: every vector is dropped
    wide = rng.standard_normal(DIM + 64).astype("<f4")
    wide /= np.linalg.norm(wide)
    FACT_VECTORS.upsert([(7, wide)], model="m2")
    FACT_VECTORS.upsert(((i + 8, -wide) for i in range(20)), model="m2")
    assert FACT_VECTORS.knn(wide, k=1)[0].id == 7


@pytest.mark.django_db(transaction=True)
def test_a_small_index_is_scanned_exactly_in_memory_outside_transactions(small_index):
    rng = np.random.default_rng(8)
    matrix = unit(rng, 200)
    FACT_VECTORS.upsert(((i + 1, v * (1 + i % 3)) for i, v in enumerate(matrix)), model="m")
    query = unit(rng, 1)[0]
    in_memory = FACT_VECTORS.knn(query, k=10)
    assert any(key[-1] == "float32" for key in vectors._copies)
    with transaction.atomic():  # the scan in SQLite
        in_sqlite = FACT_VECTORS.knn(query, k=10)
    assert [h.id for h in in_memory] == [h.id for h in in_sqlite]
    assert np.allclose([h.similarity for h in in_memory], [h.similarity for h in in_sqlite])
    FACT_VECTORS.upsert([(150, query)], model="m")  # an update
    assert FACT_VECTORS.knn(query, k=1)[0].id == 150
    FACT_VECTORS.delete([150])
    assert 150 not in {h.id for h in FACT_VECTORS.knn(query, k=50)}


def test_a_full_load_scales_and_quantises_rows_together_as_it_would_one_by_one():
    rng = np.random.default_rng(3)
    stored = [(i, (rng.standard_normal(DIM) * 3).astype("<f4").tobytes()) for i in range(50)]
    stored[7] = (7, np.zeros(DIM, dtype="<f4").tobytes())  # a zero vector stays zero
    units = vectors._unit_rows(stored, lambda m: m.astype("<f4"))
    quantised = vectors._unit_rows(stored, int8_matrix)
    for (row_id, blob), (unit_id, unit_row), (_, int8_row) in zip(
        stored, units, quantised, strict=True
    ):
        vector = np.frombuffer(blob, dtype="<f4")
        norm = float(np.linalg.norm(vector))
        alone = vector / norm if norm else vector
        assert row_id == unit_id
        assert np.allclose(np.frombuffer(unit_row, dtype="<f4"), alone, atol=1e-6)
        assert int8_row == int8_matrix(alone).tobytes()
    mixed = [stored[0], (99, np.ones(8, dtype="<f4").tobytes())]  # two models' widths
    widths = [len(row) // 4 for _, row in vectors._unit_rows(mixed, lambda m: m.astype("<f4"))]
    assert widths == [DIM, 8]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("size", ["small", "large"])
def test_a_process_builds_its_copies_at_start_before_any_search(size, small_index, monkeypatch):
    if size == "large":
        monkeypatch.setattr(vectors, "EXACT_SCAN_LIMIT", 10)
    rng = np.random.default_rng(11)
    matrix = unit(rng, 60)
    FACT_VECTORS.upsert(((i + 1, v) for i, v in enumerate(matrix)), model="m")

    assert FACT_VECTORS.warm() == 60
    kinds = {key[-1] for key in vectors._copies}
    assert kinds == ({"float32"} if size == "small" else {"uint64", "int8"})
    # The first search finds them current and answers as ever.
    assert FACT_VECTORS.knn(matrix[7], k=1)[0].id == 8
    assert {key[-1] for key in vectors._copies} == kinds
