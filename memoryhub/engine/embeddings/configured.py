"""The instance's embedder, as Settings -> Memory configures it.

The rest of this package knows nothing of Django; this module reads the instance
settings row (``memoryhub.engine.config``), imported when called so the embedders
themselves load without Django's models. Every app that keeps vectors (facts, wiki
passages) embeds with this one embedder, so one search vector serves them all.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .base import Embedder
from .factory import get_embedder
from .remembered import remembered_vectors

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)


def _config(config: Any = None) -> Any:
    if config is not None:
        return config
    from memoryhub.engine.config import memory_config_get

    return memory_config_get()


def embeddings_enabled(config: Any = None) -> bool:
    """Whether Settings -> Memory has embeddings on."""
    return bool(_config(config).embeddings_enabled)


def embedder_get(config: Any = None) -> Embedder:
    """The configured embedder (one per configuration per process)."""
    config = _config(config)
    return get_embedder(
        provider=config.embeddings_provider,
        url=config.embeddings_url,
        model=config.embeddings_model,
        api_key=config.embeddings_api_key,
    )


def embedder_model_id(config: Any = None) -> str:
    """The model id the configured embedder stamps on vectors, without loading it."""
    config = _config(config)
    provider = config.embeddings_provider or "local"
    if provider == "local":
        from .local import MODEL_ID

        return MODEL_ID
    return f"{provider}:{config.embeddings_model}"


def query_vector(text: str) -> np.ndarray | None:
    """The embedding of a search or a topic, or None when embeddings are off or the
    embedder fails (a search then matches by words alone). A failure is not kept: the
    next search asks the embedder again."""
    config = _config()
    if not config.embeddings_enabled:
        return None
    try:
        return remembered_vectors(embedder_get(config), [text])[0]
    except Exception:  # the embedder is an edge we do not own: words still match
        logger.warning("Embedding a search failed; matching by words only")
        return None
