"""pgvector's HNSW index on PostgreSQL: the graph it is built with, and a search that
looks further the larger the table grows."""

import numpy as np
import pytest
from django.db import connection

from facts.search import FACT_VECTORS
from memoryhub.engine.search import postgres as pg

pytestmark = [
    pytest.mark.postgresql_only("pgvector's HNSW index and its settings"),
    pytest.mark.django_db(transaction=True),
]

DIM = 384


@pytest.fixture
def vectors_table():
    """A fresh vector table, dropped and made again afterwards as the store makes it."""
    with connection.cursor() as cursor:
        for sql in pg.vector_drop_sql(FACT_VECTORS) + pg.vector_create_sql(FACT_VECTORS, DIM):
            cursor.execute(sql)
    yield
    with connection.cursor() as cursor:
        for sql in pg.vector_drop_sql(FACT_VECTORS) + pg.vector_create_sql(FACT_VECTORS, DIM):
            cursor.execute(sql)


def fill(n: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((n, DIM)).astype("<f4")
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    FACT_VECTORS.upsert(zip(range(1, n + 1), matrix, strict=True), model="test")
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {FACT_VECTORS.table}")
    return matrix


def ef_search_after_knn(query: np.ndarray, k: int) -> int:
    FACT_VECTORS.knn(query, k=k)
    with connection.cursor() as cursor:
        cursor.execute("SHOW hnsw.ef_search")
        return int(cursor.fetchone()[0])


def test_the_index_is_built_with_the_graph_the_search_core_sets(vectors_table):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s", [f"{FACT_VECTORS.table}_hnsw"]
        )
        options = set(cursor.fetchone()[0])
    assert options == {f"m={pg.HNSW_M}", f"ef_construction={pg.HNSW_EF_CONSTRUCTION}"}


def test_a_larger_table_is_searched_with_a_longer_candidate_list(vectors_table, monkeypatch):
    matrix = fill(400)
    # Up to EF_SEARCH_ROWS rows the list is EF_SEARCH long, or as long as the rows asked.
    assert ef_search_after_knn(matrix[0], k=10) == pg.EF_SEARCH
    assert ef_search_after_knn(matrix[0], k=150) == 150
    # Past it, the list grows with the table: four times the rows, 4 ** growth the list.
    monkeypatch.setattr(pg, "EF_SEARCH_ROWS", 100)
    assert ef_search_after_knn(matrix[0], k=10) == round(pg.EF_SEARCH * 4**pg.EF_SEARCH_GROWTH)
    # Never past pgvector's limit.
    monkeypatch.setattr(pg, "EF_SEARCH_ROWS", 1)
    assert ef_search_after_knn(matrix[0], k=10) == 1000
    # The nearest rows are found whatever the list.
    assert [hit.id for hit in FACT_VECTORS.knn(matrix[7], k=1)] == [8]
