"""The embedder interface, its errors, and the vector helpers every provider shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

# Vectors are stored little-endian whatever the host, so a database file moves
# between machines unchanged.
_BLOB_DTYPE = np.dtype("<f4")


class EmbeddingError(Exception):
    """Base of every error raised by the embeddings package."""


class EmbedderConfigError(EmbeddingError):
    """The embedder configuration (provider, url, model) is unusable."""


class ModelFilesError(EmbeddingError):
    """A file of the local model is missing, unreadable or not the expected one."""


class RemoteEmbeddingError(EmbeddingError):
    """A remote embeddings endpoint failed or answered something unusable."""


class RemoteEmbeddingTimeout(RemoteEmbeddingError):
    """A remote embeddings endpoint did not answer within the time allowed."""


class EmbedderCircuitOpen(RemoteEmbeddingError):
    """A remote embedder used by requests failed too often lately: it was not asked, and
    is not for ``retry_after`` seconds."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one fixed dimension.

    ``model_id`` names the model (``"local:all-MiniLM-L6-v2-int8"``,
    ``"openai:<model>"``); stored vectors carry it with ``dim`` so a model change
    is detected.
    """

    # Read-only properties, so both plain attributes and computed ones conform.
    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), float32, one unit row per text."""
        ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Return ``matrix`` as float32 with every row scaled to unit length.

    Raises EmbeddingError for a zero or non-finite row: such a vector has no
    direction, and storing it would silently poison every cosine score.
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise EmbeddingError(f"expected a 2-d array of vectors, got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        return matrix
    if not np.all(np.isfinite(matrix)):
        raise EmbeddingError("the embedder produced a vector with NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise EmbeddingError("the embedder produced an all-zero vector, which cannot be normalised")
    normalised: np.ndarray = (matrix / norms).astype(np.float32, copy=False)
    return normalised


def vector_to_blob(vec: np.ndarray | Sequence[float]) -> bytes:
    """Serialise a 1-d vector as little-endian float32 bytes (4 bytes per component)."""
    array = np.asarray(vec, dtype=np.float32)
    if array.ndim != 1:
        raise EmbeddingError(f"vector_to_blob expects a 1-d vector, got shape {array.shape}")
    return array.astype(_BLOB_DTYPE, copy=False).tobytes()


def blob_to_vector(blob: bytes | bytearray | memoryview) -> np.ndarray:
    """Read bytes written by :func:`vector_to_blob` back into a float32 vector."""
    if len(blob) % _BLOB_DTYPE.itemsize:
        raise EmbeddingError(
            f"a vector blob must be a multiple of 4 bytes long, got {len(blob)} bytes"
        )
    return np.frombuffer(blob, dtype=_BLOB_DTYPE).astype(np.float32)
