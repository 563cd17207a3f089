"""Remote embedders over httpx: the OpenAI request shape and the legacy one-prompt shape.

An embedder built for requests (``in_request``) gives each request the deadline as its
timeout, does not retry, and stops asking a server that keeps failing (a circuit).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from memoryhub.engine.circuits import CircuitLog, CircuitOpen, EdgeCircuit, RequestLimits

from .base import (
    EmbedderCircuitOpen,
    EmbedderConfigError,
    EmbeddingError,
    RemoteEmbeddingError,
    RemoteEmbeddingTimeout,
)

logger = logging.getLogger(__name__)

# Texts per request to an OpenAI-compatible server: local servers (llama.cpp,
# Ollama) cap their batch far below OpenAI's 2048 inputs.
OPENAI_BATCH_SIZE = 64
DEFAULT_RETRIES = 2
DEFAULT_BACKOFF = 0.25

# Connection-level failures happen before the server did any work, so a retry
# is safe. A read timeout is deliberately not here: the server may still be
# computing, and retrying would pile more work onto an overloaded server; the
# caller's backfill tries again later instead.
_RETRYABLE_ERRORS: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


class _RemoteEmbedder:
    provider = ""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str = "",
        timeout: float = 10.0,
        dim: int = 0,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        in_request: RequestLimits | None = None,
    ) -> None:
        if not url:
            raise EmbedderConfigError(
                f"The {self.provider} embedder needs the URL of the embeddings server; "
                "set it in the embeddings settings."
            )
        if not url.startswith(("http://", "https://")):
            raise EmbedderConfigError(
                f"The {self.provider} embeddings URL {url!r} must start with http:// or https://."
            )
        if dim < 0:
            raise EmbedderConfigError(f"The embedding dimension must be positive, got {dim}.")
        self.url = url
        self.model = model
        self.model_id = f"{self.provider}:{model}"
        self._timeout = timeout
        self._retries = max(0, retries)
        self._backoff = backoff
        self._dim = dim or None
        self._dim_lock = threading.Lock()
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout))
        self.in_request = in_request
        self.circuit: EdgeCircuit | None = None
        if in_request is not None:
            where = url.replace("%", "%%")
            self.circuit = EdgeCircuit(
                name=f"embedder {self.model_id}",
                failures=in_request.failures,
                retry_seconds=in_request.retry_seconds,
                outage=lambda exc: isinstance(exc, EmbeddingError),
                log=CircuitLog(
                    logger,
                    opened=f"The embeddings server at {where} keeps failing; searches match "
                    "by words alone without asking it, and it is tried again in %g s.",
                    closed=f"The embeddings server at {url} answers searches again.",
                ),
            )

    @property
    def dim(self) -> int:
        """The vector dimension, learned from the server's first answer if not configured.

        Reading it before any embedding was made sends one short probe request.
        """
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` remotely into an (n, dim) float32 array of unit vectors."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.circuit is None:
            return self._to_matrix(self._fetch(list(texts)), expected=len(texts))
        try:
            with self.circuit.guard():
                return self._to_matrix(self._fetch(list(texts)), expected=len(texts))
        except CircuitOpen as exc:
            raise EmbedderCircuitOpen(
                f"The embeddings server at {self.url} failed {exc.failures} times in a row "
                f"and is not asked again for {exc.retry_after:g} s. Last failure: {exc.last}",
                retry_after=exc.retry_after,
            ) from None

    def _fetch(self, texts: list[str]) -> list[Any]:
        raise NotImplementedError

    def _post(self, url: str, payload: dict[str, Any]) -> Any:
        attempts = self._retries + 1
        for attempt in range(attempts):
            last_try = attempt == attempts - 1
            try:
                response = self._client.post(url, json=payload)
            except _RETRYABLE_ERRORS as exc:
                if not last_try:
                    self._sleep(attempt)
                    continue
                raise RemoteEmbeddingError(
                    f"Could not reach the embeddings server at {url} after {attempts} "
                    f"attempts ({exc!r}). Check that it is running and that the URL is right."
                ) from exc
            except httpx.TimeoutException as exc:
                raise RemoteEmbeddingTimeout(
                    f"The embeddings server at {url} did not answer within {self._timeout:g} s. "
                    "Check that it is not overloaded, or raise the embeddings timeout."
                ) from exc
            except httpx.HTTPError as exc:
                raise RemoteEmbeddingError(
                    f"The request to the embeddings server at {url} failed ({exc})."
                ) from exc

            if response.status_code >= 500 or response.status_code == 429:
                if not last_try:
                    self._sleep(attempt)
                    continue
                raise RemoteEmbeddingError(
                    f"The embeddings server at {url} failed with HTTP {response.status_code} "
                    f"after {attempts} attempts: {_snippet(response.text)}. "
                    "Check the server's logs."
                )
            if response.status_code in (401, 403):
                raise RemoteEmbeddingError(
                    f"The embeddings server at {url} refused the request with HTTP "
                    f"{response.status_code}. Check the embeddings API key."
                )
            if response.status_code == 404:
                raise RemoteEmbeddingError(
                    f"The embeddings server answered HTTP 404 for {url}: "
                    f"{_snippet(response.text)}. Check the URL and the model name {self.model!r}."
                )
            if response.status_code >= 400:
                raise RemoteEmbeddingError(
                    f"The embeddings server at {url} rejected the request with HTTP "
                    f"{response.status_code}: {_snippet(response.text)}."
                )
            try:
                return response.json()
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RemoteEmbeddingError(
                    f"The embeddings server at {url} answered something that is not JSON "
                    f"({_snippet(response.text, 80)!r}). Check that the URL points at an "
                    f"{self.provider} embeddings endpoint."
                ) from exc
        raise AssertionError("unreachable")

    def _sleep(self, attempt: int) -> None:
        time.sleep(self._backoff * (2**attempt))

    def _malformed(self, detail: str) -> RemoteEmbeddingError:
        return RemoteEmbeddingError(
            f"The embeddings server at {self.url} answered in an unexpected shape: {detail}. "
            f"Check that it speaks the {self.provider} embeddings protocol."
        )

    def _to_matrix(self, rows: list[Any], *, expected: int) -> np.ndarray:
        if len(rows) != expected:
            raise self._malformed(f"{len(rows)} embeddings for {expected} texts")
        lengths = set()
        for row in rows:
            if not isinstance(row, list) or not row:
                raise self._malformed("an embedding is not a non-empty list of numbers")
            if not all(_is_number(x) for x in row):
                raise self._malformed("an embedding holds something other than finite numbers")
            lengths.add(len(row))
        if len(lengths) > 1:
            raise self._malformed(
                f"embeddings of different dimensions in one answer ({sorted(lengths)})"
            )
        (dim,) = lengths
        with self._dim_lock:
            if self._dim is None:
                self._dim = dim
        if dim != self._dim:
            raise RemoteEmbeddingError(
                f"The embeddings server at {self.url} returned {dim}-dimensional vectors for "
                f"model {self.model!r}, but this embedder uses {self._dim} dimensions. "
                "Check the model name and the configured dimension; a model change needs "
                "a re-embedding backfill."
            )
        matrix = np.asarray(rows, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise self._malformed("an embedding is all zeros")
        normalised: np.ndarray = (matrix / norms).astype(np.float32)
        return normalised


class OpenAIEmbedder(_RemoteEmbedder):
    """Any server speaking OpenAI's ``POST {url}/embeddings`` (OpenAI, vLLM, llama.cpp, Ollama)."""

    provider = "openai"

    def _fetch(self, texts: list[str]) -> list[Any]:
        endpoint = self.url.rstrip("/") + "/embeddings"
        rows: list[Any] = []
        for start in range(0, len(texts), OPENAI_BATCH_SIZE):
            batch = texts[start : start + OPENAI_BATCH_SIZE]
            payload = self._post(endpoint, {"model": self.model, "input": batch})
            rows.extend(self._read_batch(payload, len(batch)))
        return rows

    def _read_batch(self, payload: Any, expected: int) -> list[Any]:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise self._malformed('no "data" list in the answer')
        if not all(isinstance(item, dict) and "embedding" in item for item in data):
            raise self._malformed('an item of "data" has no "embedding"')
        if len(data) != expected:
            raise self._malformed(f"{len(data)} embeddings for {expected} texts")
        if all("index" in item for item in data):
            indices = [item["index"] for item in data]
            if sorted(indices) != list(range(expected)):
                raise self._malformed(f'"index" values {indices} do not cover 0..{expected - 1}')
            data = sorted(data, key=lambda item: item["index"])
        return [item["embedding"] for item in data]


class LegacyEmbedder(_RemoteEmbedder):
    """The one-text-per-request shape: ``POST {url}`` with ``{"model", "prompt"}``.

    The server answers ``{"embedding": [...]}`` (Ollama's ``/api/embeddings``).
    """

    provider = "legacy"

    def _fetch(self, texts: list[str]) -> list[Any]:
        rows: list[Any] = []
        for text in texts:
            payload = self._post(self.url, {"model": self.model, "prompt": text})
            if not isinstance(payload, dict) or "embedding" not in payload:
                raise self._malformed('no "embedding" in the answer')
            rows.append(payload["embedding"])
        return rows


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
