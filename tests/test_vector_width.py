"""Stored vectors of one embedder and a query of another (the embedder changed, the
backfill has not caught up): no row is near it, on either engine, and nothing fails."""

import numpy as np
import pytest

from facts.models import Fact
from facts.search import FACT_VECTORS


@pytest.mark.django_db(transaction=True)
def test_a_query_of_another_embedders_width_finds_nothing_and_fails_nothing(owner, remember):
    fact = remember(owner, "The nightly export lands in the billing bucket")
    assert FACT_VECTORS.vectors([fact.pk])  # stored by the local model
    other = np.ones(8, dtype=np.float32) / np.sqrt(8)
    assert FACT_VECTORS.knn(other, k=5) == []
    assert FACT_VECTORS.knn(other, k=5, within=Fact.objects.all()) == []
