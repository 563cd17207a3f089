"""The instance's embedder, as Settings -> Memory configures it.

The rest of this package knows nothing of Django; this module reads the instance
settings row (``memoryhub.engine.config``), imported when called so the embedders
themselves load without Django's models. Every app that keeps vectors (facts, wiki
passages) embeds with this one embedder, so one search vector serves them all.

A request embeds its query with ``QueryEmbedding``: a remote embedder holds it up for
``EMBEDDINGS_QUERY_DEADLINE_SECONDS`` at most, and not at all while it keeps failing.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from django.conf import settings

from memoryhub.engine.circuits import RequestLimits

from .base import Embedder, EmbedderCircuitOpen, RemoteEmbeddingTimeout
from .factory import get_embedder
from .pipeline import embed_soon

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


def embedder_get(config: Any = None, *, in_request: bool = False) -> Embedder:
    """The configured embedder (one per configuration per process). ``in_request``: the
    one requests use, which (when remote) gives up at ``EMBEDDINGS_QUERY_DEADLINE_SECONDS``
    and is left alone for ``EDGE_CIRCUIT_RETRY_SECONDS`` after failing
    ``EDGE_CIRCUIT_FAILURES`` times in a row; the workers' keeps its longer timeout and
    retries."""
    config = _config(config)
    limits = (
        RequestLimits(
            deadline=settings.EMBEDDINGS_QUERY_DEADLINE_SECONDS,
            failures=settings.EDGE_CIRCUIT_FAILURES,
            retry_seconds=settings.EDGE_CIRCUIT_RETRY_SECONDS,
        )
        if in_request
        else None
    )
    return get_embedder(
        provider=config.embeddings_provider,
        url=config.embeddings_url,
        model=config.embeddings_model,
        api_key=config.embeddings_api_key,
        in_request=limits,
    )


def embedder_model_id(config: Any = None) -> str:
    """The model id the configured embedder stamps on vectors, without loading it."""
    config = _config(config)
    provider = config.embeddings_provider or "local"
    if provider == "local":
        from .local import MODEL_ID

        return MODEL_ID
    return f"{provider}:{config.embeddings_model}"


class QueryEmbedding:
    """A query's vector for a request that waits for it, embedded beside the caller's
    other work from the moment this is made (and from memory when the words were
    embedded lately).

    A remote embedder is waited for ``EMBEDDINGS_QUERY_DEADLINE_SECONDS`` at most, for the
    query and any other wording of it together, and not asked at all while its circuit
    is open; the local model runs on this machine and is waited for. Nothing here
    raises: without a vector the search goes on by words, and ``failure`` says why
    (empty when embeddings are simply off)."""

    def __init__(self, text: str, config: Any = None) -> None:
        config = _config(config)
        self.failure = ""
        self.embedder: Embedder | None = None
        self._pending: Future | None = None
        self._until: float | None = None
        if not config.embeddings_enabled:
            return
        try:
            self.embedder = embedder_get(config, in_request=True)
        except Exception as exc:  # a remote embedder misconfigured, a model file gone
            self._failed(exc)
            return
        limits: RequestLimits | None = getattr(self.embedder, "in_request", None)
        if limits is not None:
            self._until = time.monotonic() + limits.deadline
        self._pending = self._start(text)

    def vector(self) -> np.ndarray | None:
        """The query's vector, or None (``failure`` says why)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return None
        try:
            return self._wait(pending)
        except Exception as exc:  # the embedder is an edge we do not own: words still match
            self._failed(exc)
            return None

    def of(self, text: str) -> np.ndarray | None:
        """The vector of another wording of the query, within what is left of the wait;
        None if there is none (the caller keeps the vector it has)."""
        if self.embedder is None or self.failure:
            return None
        try:
            pending = self._start(text)
            return None if pending is None else self._wait(pending)
        except Exception as exc:
            logger.warning("Embedding a rewording of the query failed: %s", exc)
            return None

    def _start(self, text: str) -> Future | None:
        assert self.embedder is not None
        circuit = getattr(self.embedder, "circuit", None)
        if circuit is not None and circuit.retry_in() > 0:
            # Not even queued: the embedding threads may be held by the calls that failed.
            self._failed(EmbedderCircuitOpen("left alone", retry_after=round(circuit.retry_in())))
            return None
        return embed_soon(self.embedder, text)

    def _wait(self, pending: Future) -> np.ndarray:
        left = None if self._until is None else max(0.0, self._until - time.monotonic())
        try:
            return pending.result(timeout=left)
        except FutureTimeout:
            pending.cancel()  # still queued: nobody waits for it any more
            raise _TooSlow(settings.EMBEDDINGS_QUERY_DEADLINE_SECONDS) from None

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, _TooSlow | RemoteEmbeddingTimeout):
            # Its own timeout (the deadline) may strike before the wait for it does.
            seconds = settings.EMBEDDINGS_QUERY_DEADLINE_SECONDS
            self.failure = f"the embedder did not answer within {seconds:g} s"
        elif isinstance(exc, EmbedderCircuitOpen):
            self.failure = (
                f"the embedder keeps failing and is not asked again for {exc.retry_after:g} s"
            )
        else:
            self.failure = f"embedder unavailable ({exc.__class__.__name__})"
        logger.warning("Query embedding failed, searching by words only: %s", exc)


class _TooSlow(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within the {seconds:g} s a search waits")
        self.seconds = seconds


def query_vector(text: str) -> np.ndarray | None:
    """The embedding of a search or a topic, or None when embeddings are off or the
    embedder fails or is too slow (see ``QueryEmbedding``; a search then matches by
    words alone). A failure is not kept: the next search asks the embedder again, unless
    it has failed again and again."""
    return QueryEmbedding(text).vector()
