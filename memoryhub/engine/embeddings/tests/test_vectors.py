from __future__ import annotations

import struct

import numpy as np
import pytest

from memoryhub.engine.embeddings import EmbeddingError, blob_to_vector, vector_to_blob


def test_a_blob_is_little_endian_float32() -> None:
    blob = vector_to_blob(np.array([1.0, -0.5, 0.25], dtype=np.float64))

    assert blob == struct.pack("<3f", 1.0, -0.5, 0.25)


def test_a_blob_round_trips() -> None:
    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32)

    restored = blob_to_vector(vector_to_blob(vector))

    assert restored.dtype == np.float32
    np.testing.assert_array_equal(restored, vector)


def test_a_big_endian_vector_is_stored_little_endian() -> None:
    vector = np.array([3.5, -2.0], dtype=">f4")

    assert vector_to_blob(vector) == struct.pack("<2f", 3.5, -2.0)


def test_a_blob_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(EmbeddingError, match="multiple of 4"):
        blob_to_vector(b"\x00\x00\x80")


def test_only_1d_vectors_become_blobs() -> None:
    with pytest.raises(EmbeddingError, match="1-d"):
        vector_to_blob(np.zeros((2, 3), dtype=np.float32))
