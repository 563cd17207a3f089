"""Embedding providers: the local ONNX model by default, or a remote server.

Pure Python; nothing here imports Django. Every provider returns float32 rows
of unit length, so a dot product is a cosine similarity.
"""

from .base import (
    Embedder,
    EmbedderCircuitOpen,
    EmbedderConfigError,
    EmbeddingError,
    ModelFilesError,
    RemoteEmbeddingError,
    blob_to_vector,
    vector_to_blob,
)
from .factory import PROVIDERS, get_embedder
from .local import LocalEmbedder
from .remote import LegacyEmbedder, OpenAIEmbedder

__all__ = [
    "PROVIDERS",
    "Embedder",
    "EmbedderCircuitOpen",
    "EmbedderConfigError",
    "EmbeddingError",
    "LegacyEmbedder",
    "LocalEmbedder",
    "ModelFilesError",
    "OpenAIEmbedder",
    "RemoteEmbeddingError",
    "blob_to_vector",
    "get_embedder",
    "vector_to_blob",
]
