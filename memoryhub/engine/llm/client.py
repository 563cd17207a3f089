"""An OpenAI-compatible chat-completions client that returns schema-validated JSON.

Speaks ``POST {url}/chat/completions`` as OpenAI, Ollama, vLLM and the llama.cpp server
do. Asks for JSON with the caller's schema (``response_format`` ``json_schema``; where
the server refuses that, ``json_object`` with the schema in the prompt), validates the
answer with the caller's pydantic model, and retries only what may succeed on a second
try: 429 (after its Retry-After), 5xx, connection failures and timeouts.

A client for calls made while a request waits (``in_request``) waits a bounded time in
all, never queues behind other calls, and stops asking a model that keeps failing (see
:class:`ChatClient`).
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ValidationError

from memoryhub.engine.circuits import CircuitLog, CircuitOpen, EdgeCircuit, RequestLimits
from memoryhub.engine.unicode import lone_surrogate_path

from .base import (
    ChatModelBusy,
    ChatModelConfigError,
    ChatModelError,
    ChatModelOutputError,
    ChatModelUnavailable,
    ErrorKind,
    ErrorRecorder,
    ErrorReport,
    redact,
)
from .schemas import ChatMessage

log = logging.getLogger(__name__)

ResponseFormat = Literal["auto", "json_schema", "json_object"]

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
DEFAULT_BACKOFF = 0.5
DEFAULT_CONCURRENCY = 2
# A Retry-After longer than this is not waited out: the call fails as rate limited and
# the caller's job tries again later, instead of a worker sleeping for minutes.
MAX_RETRY_AFTER = 60.0
MAX_BACKOFF = 20.0
# A chat completion is a few kilobytes; a server sending megabytes is not answering.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

_CONNECT_ERRORS: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
)
_TIMEOUTS: tuple[type[Exception], ...] = (
    httpx.ReadTimeout,
    httpx.WriteTimeout,
    httpx.PoolTimeout,
)
_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


class _Retryable(Exception):
    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


# Failures that say the server is not answering: they open a request client's circuit.
# Any answer (a refusal, a rate limit, garbage) shows it is there.
_OUTAGES: frozenset[ErrorKind] = frozenset({"unreachable", "timeout", "server"})


def _is_outage(exc: BaseException) -> bool:
    return isinstance(exc, ChatModelUnavailable) and exc.kind in _OUTAGES


class ChatClient:
    """One configured chat-model endpoint, shared by every caller of a process.

    ``timeout`` bounds each attempt (connecting, sending, and reading the whole answer,
    however slowly it trickles in), ``retries`` the attempts after the first,
    ``max_concurrency`` the calls in flight at once from this client: further callers
    wait for a free slot. ``on_error`` is told once about every call that fails.

    With ``in_request`` the calls are made while a request thread waits, and that thread
    must never be held long: one call takes at most ``in_request.deadline`` seconds in
    all (attempts, backoff and Retry-After waits together: what does not fit fails at
    once), a call finding all ``max_concurrency`` slots taken fails at once with
    :class:`ChatModelBusy`, and after ``in_request.failures`` calls in a row got no answer
    the circuit opens: calls fail at once (kind ``circuit_open``, with ``retry_after``)
    until, ``in_request.retry_seconds`` later, one call gets an answer again.
    """

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        response_format: ResponseFormat = "auto",
        max_retry_after: float = MAX_RETRY_AFTER,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        on_error: ErrorRecorder | None = None,
        in_request: RequestLimits | None = None,
    ) -> None:
        url = (url or "").strip()
        if not url.startswith(("http://", "https://")):
            raise ChatModelConfigError(
                f"The chat model URL {url!r} must start with http:// or https://, "
                "e.g. http://127.0.0.1:11434/v1 for Ollama."
            )
        if not (model or "").strip():
            raise ChatModelConfigError(
                "The chat model needs a model name (for example gpt-4o-mini or llama3.1:8b); "
                "set it in Settings -> Memory."
            )
        if timeout <= 0:
            raise ChatModelConfigError(f"The chat model timeout must be positive, got {timeout}.")
        if max_concurrency < 1:
            raise ChatModelConfigError(
                f"The chat model concurrency must be at least 1, got {max_concurrency}."
            )
        if in_request is not None and in_request.deadline <= 0:
            raise ChatModelConfigError(
                f"The chat model deadline must be positive, got {in_request.deadline}."
            )
        if response_format not in ("auto", "json_schema", "json_object"):
            raise ChatModelConfigError(f"Unknown response format {response_format!r}.")
        base = url.rstrip("/")
        self.endpoint = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = model.strip()
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.max_concurrency = int(max_concurrency)
        self._backoff = max(0.0, backoff)
        self._max_retry_after = max_retry_after
        self._max_response_bytes = max_response_bytes
        self._format: ResponseFormat = response_format
        self._on_error = on_error
        self._secrets = (api_key,) if api_key else ()
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self.in_request = in_request
        self.circuit: EdgeCircuit | None = None
        if in_request is not None:
            where = self.endpoint.replace("%", "%%")
            self.circuit = EdgeCircuit(
                name=f"chat model {self.model}",
                failures=in_request.failures,
                retry_seconds=in_request.retry_seconds,
                outage=_is_outage,
                log=CircuitLog(
                    log,
                    opened=f"The chat model at {where} keeps failing; requests get a 503 "
                    "without asking it, and it is tried again in %g s.",
                    closed=f"The chat model at {self.endpoint} answers requests again.",
                ),
            )
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            limits=httpx.Limits(
                max_connections=self.max_concurrency,
                max_keepalive_connections=self.max_concurrency,
            ),
        )

    @property
    def model_id(self) -> str:
        """The model's name as the endpoint knows it; results are labelled with it."""
        return self.model

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

    def complete_json[T: BaseModel](
        self,
        messages: Sequence[ChatMessage],
        schema: type[T],
        *,
        context: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> T:
        """Send ``messages`` and return the answer parsed as ``schema``.

        ``context`` is handed to pydantic's validation (``info.context``), so a schema can
        check the answer against the request (ids it may cite, for instance). Raises
        :class:`ChatModelUnavailable` when no answer came, :class:`ChatModelOutputError`
        when the answer is not JSON matching ``schema``; either is reported to
        ``on_error`` first.
        """
        try:
            content = self._complete(list(messages), schema, max_tokens, temperature)
            return _validated(content, schema, context)
        except ChatModelError as exc:
            exc.message = redact(exc.message, secrets=self._secrets)
            if exc.kind in ("busy", "circuit_open"):  # not asked: nothing about the model
                log.info("chat model %s not asked: %s", self.model, exc.message)
            else:
                self._report(exc)
            raise

    # --- one call --------------------------------------------------------------------------

    def _complete(
        self,
        messages: list[ChatMessage],
        schema: type[BaseModel],
        max_tokens: int | None,
        temperature: float,
    ) -> str:
        if self.in_request is None or self.circuit is None:
            return self._attempts(messages, schema, max_tokens, temperature, until=None)
        # A request thread takes a slot for the whole call, or none at all.
        if not self._slots.acquire(blocking=False):
            raise ChatModelBusy(
                f"The {self.max_concurrency} calls to the chat model that requests may have "
                "under way at once are all taken; try again shortly.",
                retry_after=math.ceil(self.in_request.deadline),
            )
        try:
            try:
                with self.circuit.guard():
                    until = time.monotonic() + self.in_request.deadline
                    return self._attempts(messages, schema, max_tokens, temperature, until=until)
            except CircuitOpen as exc:
                raise ChatModelUnavailable(
                    f"The chat model at {self.endpoint} failed {exc.failures} times in a row "
                    f"and is not asked again for {exc.retry_after:g} s; nothing was done. "
                    f"Last failure: {exc.last}",
                    kind="circuit_open",
                    retry_after=exc.retry_after,
                ) from None
        finally:
            self._slots.release()

    def _attempts(
        self,
        messages: list[ChatMessage],
        schema: type[BaseModel],
        max_tokens: int | None,
        temperature: float,
        *,
        until: float | None,
    ) -> str:
        """One call: its attempts, within ``until`` (a ``time.monotonic()``) when set,
        the caller holding a slot for all of them; else each attempt waits for a slot."""
        mode: Literal["json_schema", "json_object"] = (
            "json_object" if self._format == "json_object" else "json_schema"
        )
        attempt = 0
        fell_back = False
        # The last attempt's failure: when the deadline then cuts the next attempt
        # short, that failure, not the cut, is what went wrong.
        failed: tuple[ErrorKind, str] | None = None
        while True:
            payload = self._payload(messages, schema, mode, max_tokens, temperature)
            last_try = attempt >= self.retries
            try:
                if until is None:
                    with self._slots:
                        status, headers, body = self._exchange(payload, self.timeout)
                else:
                    left = until - time.monotonic()
                    if left <= 0:
                        raise self._out_of_time(attempt, failed)
                    status, headers, body = self._exchange(payload, min(self.timeout, left))
            except _Retryable as exc:
                cut_short = until is not None and until - time.monotonic() <= 0
                if exc.kind == "timeout" and cut_short and failed is not None:
                    raise self._out_of_time(attempt + 1, failed) from None
                if last_try:
                    raise ChatModelUnavailable(
                        f"{exc.message} (after {attempt + 1} attempts)", kind=exc.kind
                    ) from None
                self._pause(self._backoff_for(attempt), until, exc.kind, exc.message, attempt)
                failed = (exc.kind, exc.message)
                attempt += 1
                continue

            if status == 429:
                wait = _retry_after(headers)
                if wait is not None and wait > self._max_retry_after:
                    raise ChatModelUnavailable(
                        f"The chat model server is rate limiting and asks to wait {wait:g} s, "
                        f"longer than the {self._max_retry_after:g} s waited for.",
                        kind="rate_limited",
                        retry_after=wait,
                    )
                if last_try:
                    raise ChatModelUnavailable(
                        f"The chat model server is rate limiting (HTTP 429) after "
                        f"{attempt + 1} attempts.",
                        kind="rate_limited",
                        retry_after=wait,
                    )
                if wait is not None and until is not None and time.monotonic() + wait > until:
                    raise ChatModelUnavailable(
                        f"The chat model server is rate limiting and asks to wait {wait:g} s, "
                        f"longer than a request waits for it ({self._deadline:g} s in all); "
                        "try again later.",
                        kind="rate_limited",
                        retry_after=wait,
                    )
                why = "The chat model server is rate limiting (HTTP 429)"
                if wait is None:
                    wait = self._backoff_for(attempt)
                self._pause(wait, until, "rate_limited", why, attempt)
                failed = ("rate_limited", why)
                attempt += 1
                continue
            if status >= 500:
                why = f"The chat model server failed with HTTP {status}: {_snippet(body)}"
                if last_try:
                    raise ChatModelUnavailable(
                        f"The chat model server failed with HTTP {status} after {attempt + 1} "
                        f"attempts: {_snippet(body)}",
                        kind="server",
                    )
                # A 503 may say when to come back; never wait longer than for a 429.
                wait = _retry_after(headers)
                if wait is None or wait > self._max_retry_after:
                    wait = self._backoff_for(attempt)
                self._pause(wait, until, "server", why, attempt)
                failed = ("server", why)
                attempt += 1
                continue
            if status in (400, 422) and mode == "json_schema" and self._format == "auto":
                # The server may not take a json_schema response format: ask for plain
                # JSON with the schema in the prompt (not counted as a retry).
                mode = "json_object"
                fell_back = True
                continue
            if status >= 400:
                raise ChatModelUnavailable(_refusal_message(status, body, self), kind="refused")
            if fell_back:
                # It answered plain JSON where the schema format was refused: keep
                # asking this way.
                log.info(
                    "chat model at %s refuses response_format json_schema; using json_object",
                    self.endpoint,
                )
                self._format = "json_object"
            return _message_content(body)

    def _payload(
        self,
        messages: list[ChatMessage],
        schema: type[BaseModel],
        mode: str,
        max_tokens: int | None,
        temperature: float,
    ) -> bytes:
        turns = [{"role": m.role, "content": m.content} for m in messages]
        json_schema = schema.model_json_schema()
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": temperature,
            "stream": False,
        }
        if mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(schema), "schema": json_schema},
            }
        else:
            payload["response_format"] = {"type": "json_object"}
            turns.insert(
                0,
                {
                    "role": "system",
                    "content": "Answer with one JSON object, and nothing else, that matches "
                    "this JSON Schema:\n" + json.dumps(json_schema, separators=(",", ":")),
                },
            )
        payload["messages"] = turns
        if max_tokens:
            payload["max_tokens"] = max_tokens
        # ASCII escapes: text with a lone surrogate still encodes, as valid JSON.
        return json.dumps(payload, ensure_ascii=True).encode()

    @property
    def _deadline(self) -> float:
        return self.in_request.deadline if self.in_request is not None else 0.0

    def _out_of_time(self, made: int, failed: tuple[ErrorKind, str] | None) -> ChatModelUnavailable:
        """The deadline is spent: say what the attempts made met, if they met anything."""
        if failed is not None:
            kind, why = failed
            return ChatModelUnavailable(
                f"{why}; gave up after {_attempts(made)}, within the "
                f"{self._deadline:g} s a request waits for the chat model",
                kind=kind,
            )
        return ChatModelUnavailable(
            f"No answer from the chat model server at {self.endpoint} within "
            f"the {self._deadline:g} s a request waits for it ({_attempts(made)} made)",
            kind="timeout",
        )

    def _pause(
        self, seconds: float, until: float | None, kind: ErrorKind, why: str, attempt: int
    ) -> None:
        """Wait ``seconds`` before the next attempt, or give up at once when the call
        would then be past ``until``: the wait would only hold the request longer."""
        if until is not None and time.monotonic() + seconds >= until:
            raise ChatModelUnavailable(
                f"{why}; gave up after {_attempts(attempt + 1)}, within the "
                f"{self._deadline:g} s a request waits for the chat model",
                kind=kind,
            )
        self._sleep(seconds)

    def _exchange(self, payload: bytes, timeout: float) -> tuple[int, httpx.Headers, bytes]:
        deadline = time.monotonic() + timeout
        limit = httpx.Timeout(timeout, connect=min(timeout, 10.0))
        try:
            with self._client.stream(
                "POST", self.endpoint, content=payload, timeout=limit
            ) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self._max_response_bytes:
                        raise ChatModelOutputError(
                            f"The chat model server's answer is larger than "
                            f"{self._max_response_bytes // 1024} KiB; it is not a chat completion.",
                            kind="malformed",
                        )
                    if time.monotonic() > deadline:
                        raise _Retryable("timeout", self._timeout_message(timeout))
                    chunks.append(chunk)
                return response.status_code, response.headers, b"".join(chunks)
        except httpx.ConnectTimeout as exc:
            raise _Retryable("unreachable", self._unreachable_message(exc)) from None
        except _TIMEOUTS:
            raise _Retryable("timeout", self._timeout_message(timeout)) from None
        except _CONNECT_ERRORS as exc:
            raise _Retryable("unreachable", self._unreachable_message(exc)) from None
        except httpx.DecodingError:
            raise ChatModelOutputError(
                "The chat model server's answer could not be decoded (its content encoding "
                "is broken).",
                kind="malformed",
            ) from None
        except httpx.HTTPError as exc:
            raise ChatModelUnavailable(
                f"The request to the chat model server at {self.endpoint} failed: "
                f"{type(exc).__name__}.",
                kind="unreachable",
            ) from None

    def _timeout_message(self, seconds: float) -> str:
        return f"The chat model server at {self.endpoint} did not answer within {seconds:.3g} s"

    def _unreachable_message(self, exc: Exception) -> str:
        return (
            f"Could not reach the chat model server at {self.endpoint} "
            f"({type(exc).__name__}); check that it runs and that the URL is right"
        )

    def _backoff_for(self, attempt: int) -> float:
        base: float = min(MAX_BACKOFF, self._backoff * (2**attempt))
        return base * random.uniform(0.5, 1.0)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def _report(self, exc: ChatModelError) -> None:
        log.warning("chat model %s: %s: %s", self.model, exc.kind, exc.message)
        if self._on_error is None:
            return
        try:
            self._on_error(ErrorReport(kind=exc.kind, message=exc.message, model=self.model))
        except Exception:
            # The failure itself is raised to the caller whatever happens here; a
            # recorder that cannot write (database locked) must not replace it.
            log.exception("could not record a chat model error")


# --- answers --------------------------------------------------------------------------------


def _message_content(body: bytes) -> str:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ChatModelOutputError(
            f"The chat model server answered something that is not JSON ({_json_error(exc)}); "
            "check that the URL points at an OpenAI-compatible endpoint.",
            kind="malformed",
        ) from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ChatModelOutputError(
            'The chat model server answered JSON without "choices"; it does not look like '
            "a chat completion.",
            kind="malformed",
        )
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ChatModelOutputError(
            'The chat completion has no "message".',
            kind="malformed",
        )
    if message.get("refusal"):
        raise ChatModelOutputError("The model declined to answer.", kind="malformed")
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = (
            "".join(part.get("text", "") for part in content if isinstance(part, dict)) or None
        )
    if choice.get("finish_reason") == "length":
        raise ChatModelOutputError(
            "The model's answer was cut off at its token limit.", kind="malformed"
        )
    if not isinstance(content, str) or not content.strip():
        raise ChatModelOutputError("The model's answer is empty.", kind="malformed")
    return content


def _validated[T: BaseModel](content: str, schema: type[T], context: dict[str, Any] | None) -> T:
    data = _parse_json(content)
    where = lone_surrogate_path(data)
    if where is not None:
        raise ChatModelOutputError(
            f"The model's answer holds text that is not valid Unicode (at {where}).",
            kind="invalid",
        )
    try:
        return schema.model_validate(data, context=context)
    except ValidationError as exc:
        raise ChatModelOutputError(
            f"The model's answer does not match the schema {schema.__name__}: "
            f"{_validation_summary(exc)}",
            kind="invalid",
        ) from None


def _parse_json(content: str) -> Any:
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError as exc:
        first_error = exc
    # Some models put a sentence before or after the object.
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(text[start : end + 1])
        except ValueError:
            pass
    raise ChatModelOutputError(
        f"The model's answer is not JSON ({_json_error(first_error)}, {len(content)} characters).",
        kind="malformed",
    )


def _validation_summary(exc: ValidationError, limit: int = 3) -> str:
    # Locations and messages only: the offending values may be users' memories.
    errors = exc.errors(include_input=False, include_url=False)
    parts = [
        f"{'.'.join(str(p) for p in error['loc']) or 'the answer'}: {error['msg']}"
        for error in errors[:limit]
    ]
    more = f" (and {len(errors) - limit} more)" if len(errors) > limit else ""
    return "; ".join(parts) + more


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return type(exc).__name__


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _refusal_message(status: int, body: bytes, client: ChatClient) -> str:
    if status in (401, 403):
        return (
            f"The chat model server refused the request with HTTP {status}; "
            "check the chat model API key."
        )
    if status == 404:
        return (
            f"The chat model server answered HTTP 404 for {client.endpoint}: {_snippet(body)}; "
            f"check the URL and the model name {client.model!r}."
        )
    return f"The chat model server rejected the request with HTTP {status}: {_snippet(body)}"


def _attempts(count: int) -> str:
    return "1 attempt" if count == 1 else f"{count} attempts"


def _snippet(body: bytes, limit: int = 160) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    return text if len(text) <= limit else text[:limit] + "..."


def _schema_name(schema: type[BaseModel]) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "answer"
