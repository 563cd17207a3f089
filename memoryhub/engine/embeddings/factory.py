"""One embedder per configuration per process."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from memoryhub.engine.circuits import RequestLimits

from .base import Embedder, EmbedderConfigError
from .local import MODEL_NAME, LocalEmbedder
from .remote import LegacyEmbedder, OpenAIEmbedder

PROVIDERS = ("local", "openai", "legacy")
_LOCAL_MODEL_NAMES = {"", "all-MiniLM-L6-v2", MODEL_NAME, f"local:{MODEL_NAME}"}

logger = logging.getLogger(__name__)

_cache: dict[tuple[object, ...], Embedder] = {}
_cache_lock = threading.Lock()
# Where local embedders keep the model's folded weights (see LocalEmbedder); set from the
# settings when the engine app starts.
_local_weights_dir: Path | None = None


def local_weights_dir_set(*, directory: Path | None) -> None:
    """Share the local model's weights from ``directory`` in every local embedder built
    from now on (None: each process keeps its own copy)."""
    global _local_weights_dir
    _local_weights_dir = directory


def local_embedder_load_before_fork() -> None:
    """Load the local model's shareable part in a server process about to fork its
    workers, so that they share it (see ``LocalEmbedder.load_before_fork``). A failure
    is logged, not raised: each process tries again on first use and says why there."""
    try:
        embedder = get_embedder(provider="local")
        assert isinstance(embedder, LocalEmbedder)
        embedder.load_before_fork()
    except Exception as exc:
        logger.warning("The local embedding model was not loaded before forking: %s", exc)


def get_embedder(
    *,
    provider: str = "local",
    url: str = "",
    model: str = "",
    api_key: str = "",
    timeout: float = 10.0,
    dim: int = 0,
    in_request: RequestLimits | None = None,
) -> Embedder:
    """Return the embedder for this configuration, building it on the first call.

    ``provider`` is ``local`` (the bundled all-MiniLM-L6-v2, the default),
    ``openai`` (``POST {url}/embeddings``) or ``legacy`` (``POST {url}`` with one
    prompt per request). ``url``, ``api_key``, ``timeout`` and ``dim`` (0 = learn
    it from the first answer) apply to the remote providers. The same arguments
    give the same instance, so the local model loads once per process.

    ``in_request``: a remote embedder for requests that wait on it, its own (with its
    own connections and circuit): each request times out at ``in_request.deadline``, is
    not retried, and the server is left alone after failing again and again (see
    ``EdgeCircuit``). The local model is not an edge and ignores it.
    """
    provider = (provider or "local").strip().lower()
    if provider not in PROVIDERS:
        raise EmbedderConfigError(
            f"Unknown embeddings provider {provider!r}; use one of {', '.join(PROVIDERS)}."
        )
    if provider == "local":
        if model.strip() not in _LOCAL_MODEL_NAMES:
            raise EmbedderConfigError(
                f"The local embeddings provider only runs all-MiniLM-L6-v2, not {model!r}; "
                "leave the model empty, or use the openai or legacy provider for other models."
            )
        key: tuple[object, ...] = ("local",)
    else:
        if not model:
            raise EmbedderConfigError(
                f"The {provider} embeddings provider needs a model name; set it in the "
                "embeddings settings."
            )
        key = (provider, url, model, api_key, float(timeout), dim, in_request)

    embedder = _cache.get(key)
    if embedder is not None:
        return embedder
    with _cache_lock:
        embedder = _cache.get(key)
        if embedder is None:
            embedder = _build(
                provider,
                url=url,
                model=model,
                api_key=api_key,
                timeout=timeout,
                dim=dim,
                in_request=in_request,
            )
            _cache[key] = embedder
    return embedder


def _build(
    provider: str,
    *,
    url: str,
    model: str,
    api_key: str,
    timeout: float,
    dim: int,
    in_request: RequestLimits | None,
) -> Embedder:
    if provider == "local":
        return LocalEmbedder(weights_dir=_local_weights_dir)
    cls = OpenAIEmbedder if provider == "openai" else LegacyEmbedder
    if in_request is not None:
        return cls(
            url=url,
            model=model,
            api_key=api_key,
            timeout=in_request.deadline,
            dim=dim,
            retries=0,
            in_request=in_request,
        )
    return cls(url=url, model=model, api_key=api_key, timeout=timeout, dim=dim)
