"""One chat-model provider per configuration per process."""

from __future__ import annotations

import threading

from memoryhub.engine.circuits import RequestLimits

from .base import ChatProvider, ErrorRecorder
from .client import DEFAULT_CONCURRENCY, DEFAULT_RETRIES, DEFAULT_TIMEOUT, ChatClient
from .model import ModelProvider
from .offline import OfflineProvider

_OFFLINE = OfflineProvider()
# Callers of one process share a provider, and so its client's connections and the cap
# on calls in flight; a configuration change builds a new one.
_cache: dict[tuple[object, ...], ModelProvider] = {}
_cache_lock = threading.Lock()


def get_chat_provider(
    *,
    url: str = "",
    model: str = "",
    api_key: str = "",
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    max_concurrency: int = DEFAULT_CONCURRENCY,
    on_error: ErrorRecorder | None = None,
    in_request: RequestLimits | None = None,
) -> ChatProvider:
    """The provider for this configuration: the offline one when ``url`` is empty, else a
    model-backed one talking to ``POST {url}/chat/completions`` (built on first use, then
    shared by every caller passing the same arguments). With ``in_request`` its calls
    are bounded for a request that waits (see ``ChatClient``); the slots, and the circuit,
    are then those of the process's requests alone. Raises ChatModelConfigError for
    a URL without a model name or a URL that is not http(s)."""
    url = (url or "").strip()
    if not url:
        return _OFFLINE
    key = (
        url,
        model,
        api_key,
        float(timeout),
        int(retries),
        int(max_concurrency),
        on_error,
        in_request,
    )
    provider = _cache.get(key)
    if provider is not None:
        return provider
    with _cache_lock:
        provider = _cache.get(key)
        if provider is None:
            provider = ModelProvider(
                ChatClient(
                    url=url,
                    model=model,
                    api_key=api_key,
                    timeout=timeout,
                    retries=retries,
                    max_concurrency=max_concurrency,
                    on_error=on_error,
                    in_request=in_request,
                )
            )
            _cache[key] = provider
    return provider
