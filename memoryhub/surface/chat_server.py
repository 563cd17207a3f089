"""The OpenAI-compatible endpoint: ``POST /v1/chat/completions`` and ``GET /v1/models``,
an ASGI application served on its own port beside the web server.

An answer may stream for minutes; here waiting on the chat model costs no thread, so
a slow or silent model holds no worker that recall, writes or the dashboard need. What
touches the database (the token, recall, the capture and the audit) runs in a worker
thread through ``memoryhub.surface.chat``; the chat model is called with one shared
async HTTP client.

- Streams pass through event by event as the model sends them; an answer that is not a
  stream passes through unchanged.
- The chat model's refusals come back with their status and its message, a model that
  cannot be reached as 502, one that stops answering as 504, a stream that breaks or
  turns to garbage as an ``error`` event (which the OpenAI clients raise): never a 500
  of ours.
- Each token has at most ``MEMORYHUB_CHAT_CALLS_PER_TOKEN`` calls under way; more are
  answered 429 at once.

Errors have the protocol's shape, ``{"error": {"message", "type", "code"}}``.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections
from ninja.errors import AuthenticationError, Throttled
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from facts.search import fact_search_warm
from memoryhub.engine.errors import ApplicationError
from memoryhub.engine.search import readahead
from memoryhub.surface.chat import Turn, chat_upstream, turn_finish, turn_prepare, turn_refused
from teams.auth import bearer_secret, token_authenticate
from teams.services import Actor

log = logging.getLogger(__name__)

# How much of a chat model's refusal is repeated to the client.
REFUSAL_SNIPPET = 300
# Database work runs on at most this many threads, apart from the loop that streams.
DB_THREADS = 8


def _db_thread_count() -> int:
    """Threads for database work: with a bounded pool of connections, as many as leave
    the searches they start beside them a connection each (a recall holding one while it
    waits on a search that waits for one would wait for ever), else ``DB_THREADS``."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if isinstance(pool, dict) and pool.get("max_size"):
        return max(1, min(DB_THREADS, int(pool["max_size"]) - readahead.CONNECTIONS))
    return DB_THREADS


_db_threads = anyio.CapacityLimiter(_db_thread_count())
# Finishing work (capture, audit) of streams whose client left; kept until done.
_finishing: set[asyncio.Task] = set()


def error(
    status: int, message: str, kind: str, *, code: str | None = None, headers=None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        status_code=status,
        headers=headers,
    )


async def in_thread[T](func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run database work on a worker thread, with its connection kept as a request's."""

    def run() -> T:
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()

    return await anyio.to_thread.run_sync(run, limiter=_db_threads)


def _authenticate(scope: dict, body: bytes) -> Actor:
    """The agent of the bearer token, counted and refused as the JSON API refuses one."""
    request = ASGIRequest(scope, io.BytesIO(body))
    secret = bearer_secret(request)
    if secret is None:
        raise AuthenticationError(
            message="Send your MemoryHub agent token as 'Authorization: Bearer <token>' "
            "(the OpenAI clients' api_key)."
        )
    token = token_authenticate(request, secret=secret)
    return Actor(user=token.user, token=token)


class ChatEndpoint:
    """The two routes, the shared HTTP client and the per-token count of calls."""

    def __init__(self) -> None:
        self.calls: Counter[int] = Counter()
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    connect=settings.MEMORYHUB_CHAT_CONNECT_TIMEOUT_SECONDS,
                    read=settings.MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS,
                    write=settings.MEMORYHUB_CHAT_CONNECT_TIMEOUT_SECONDS,
                    pool=settings.MEMORYHUB_CHAT_CONNECT_TIMEOUT_SECONDS,
                ),
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
            )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _actor(self, request: Request, body: bytes) -> Actor | Response:
        try:
            return await in_thread(_authenticate, request.scope, body)
        except Throttled as exc:
            return error(
                429, str(exc.message), "rate_limit_error", headers={"Retry-After": str(exc.wait)}
            )
        except AuthenticationError as exc:
            return error(401, str(exc.message), "authentication_error", code="invalid_api_key")

    async def models(self, request: Request) -> Response:
        actor = await self._actor(request, b"")
        if isinstance(actor, Response):
            return actor
        try:
            upstream = await in_thread(chat_upstream, actor.token)
        except ApplicationError as exc:
            return error(exc.status_code, exc.message, "service_unavailable")
        try:
            answer = await self.client.get(upstream.models, headers=upstream.headers(stream=False))
            if answer.status_code == 200 and isinstance(answer.json().get("data"), list):
                return Response(answer.content, media_type="application/json")
        except (httpx.HTTPError, ValueError, AttributeError):
            pass  # the model named in the settings is still the one to use
        if not upstream.model:
            return error(
                502,
                "The chat model lists no models and Settings -> Memory names none.",
                "upstream_error",
            )
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": upstream.model, "object": "model", "owned_by": "memoryhub"}],
            }
        )

    async def completions(self, request: Request) -> Response:
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > settings.MEMORYHUB_CHAT_MAX_BODY_BYTES:
                return error(
                    413,
                    f"The body is over {settings.MEMORYHUB_CHAT_MAX_BODY_BYTES} bytes.",
                    "invalid_request_error",
                )
        started = time.perf_counter()
        actor = await self._actor(request, body)
        if isinstance(actor, Response):
            return actor
        authenticated = time.perf_counter()
        if not actor.token.has_scope("read"):
            return error(
                403,
                "This token lacks the 'read' scope "
                f"(it has: {', '.join(actor.token.scopes) or 'none'}).",
                "permission_error",
            )
        token_id = actor.token.pk
        if self.calls[token_id] >= settings.MEMORYHUB_CHAT_CALLS_PER_TOKEN:
            return error(
                429,
                f"This token has {self.calls[token_id]} chat calls under way, the most it may "
                "have at once; send this one when one of them has ended.",
                "rate_limit_error",
                headers={"Retry-After": "1"},
            )
        self.calls[token_id] += 1
        released = streaming = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.calls[token_id] -= 1
                if self.calls[token_id] <= 0:
                    del self.calls[token_id]

        try:
            headers = {k.lower(): v for k, v in request.headers.items()}
            try:
                turn = await in_thread(turn_prepare, actor=actor, raw=body, headers=headers)
                turn.timings = {
                    "auth": (authenticated - started) * 1000,
                    **turn.timings,
                    "prepare": (time.perf_counter() - authenticated) * 1000,
                }
            except ApplicationError as exc:
                outcome = "no_chat_model" if exc.status_code == 503 else "invalid"
                await in_thread(turn_refused, actor=actor, status=exc.status_code, outcome=outcome)
                kind = "service_unavailable" if exc.status_code == 503 else "invalid_request_error"
                return error(exc.status_code, exc.message, kind)
            if not turn.stream:
                return await self._complete(actor, turn)
            response = await self._stream(actor, turn, release)
            streaming = isinstance(response, StreamingResponse)
            return response
        finally:
            if not streaming:  # a stream releases its slot when it ends
                release()

    # --- Forwarding ------------------------------------------------------------------------

    def _headers(self, turn: Turn) -> dict[str, str]:
        """What MemoryHub adds to an answer: how many items it recalled, and the time
        each step took before the chat model answered (Server-Timing, milliseconds)."""
        headers = {
            "X-MemoryHub-Recalled": str(turn.recalled) if turn.recall else "off",
            "Server-Timing": ", ".join(f"{step};dur={ms:.1f}" for step, ms in turn.timings.items()),
        }
        return headers

    def _upstream_failed(self, turn: Turn, exc: httpx.HTTPError) -> JSONResponse:
        if isinstance(exc, httpx.TimeoutException):
            return error(
                504,
                f"The chat model did not answer within {_read_timeout()} s.",
                "timeout",
                code="upstream_timeout",
            )
        return error(
            502,
            turn.upstream.redact(f"The chat model could not be reached: {exc}")
            or "The chat model could not be reached.",
            "upstream_error",
            code="upstream_unreachable",
        )

    def _refused(
        self, turn: Turn, status: int, content: bytes, headers: httpx.Headers
    ) -> JSONResponse:
        """A refusal of the chat model, with its status and its message."""
        try:
            detail = json.loads(content)["error"]
            detail = detail.get("message") if isinstance(detail, dict) else detail
        except (ValueError, KeyError, TypeError):
            detail = content.decode("utf-8", "replace")
        detail = turn.upstream.redact(" ".join(str(detail).split())[:REFUSAL_SNIPPET])
        keep = {k: v for k, v in headers.items() if k.lower() == "retry-after"}
        if status in (401, 403):
            # The client's own token was good: it is MemoryHub's key the model refused.
            return error(
                502,
                f"The chat model refused MemoryHub's key (HTTP {status}): {detail}. "
                "Check the chat model API key in Settings -> Memory.",
                "upstream_error",
                code="upstream_refused_key",
            )
        kind = "rate_limit_error" if status == 429 else "upstream_error"
        return error(
            status,
            f"The chat model answered HTTP {status}: {detail or 'no message'}",
            kind,
            code=f"upstream_{status}",
            headers=keep,
        )

    async def _finish(
        self, actor: Actor, turn: Turn, *, answer: str, status: int, outcome: str
    ) -> None:
        try:
            await in_thread(
                turn_finish, actor=actor, turn=turn, answer=answer, status=status, outcome=outcome
            )
        except Exception:
            log.exception("Could not finish a chat turn of %s", actor.label)

    async def _complete(self, actor: Actor, turn: Turn) -> Response:
        started = time.perf_counter()
        try:
            answer = await self.client.post(
                turn.upstream.completions,
                content=turn.body,
                headers=turn.upstream.headers(stream=False),
            )
            turn.timings["upstream"] = (time.perf_counter() - started) * 1000
        except httpx.HTTPError as exc:
            response = self._upstream_failed(turn, exc)
            await self._finish(
                actor, turn, answer="", status=response.status_code, outcome="upstream_failed"
            )
            return response
        if answer.status_code != 200:
            response = self._refused(turn, answer.status_code, answer.content, answer.headers)
            await self._finish(
                actor, turn, answer="", status=answer.status_code, outcome="upstream_refused"
            )
            return response
        try:
            text = _answer_text(json.loads(answer.content))
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            await self._finish(actor, turn, answer="", status=502, outcome="malformed")
            return error(
                502,
                "The chat model's answer is not a chat completion: "
                + turn.upstream.redact(answer.content[:REFUSAL_SNIPPET].decode("utf-8", "replace")),
                "upstream_error",
                code="upstream_malformed",
            )
        response = Response(
            answer.content,
            status_code=200,
            media_type=answer.headers.get("content-type", "application/json"),
            headers=self._headers(turn),
        )
        # The answer is sent first; the capture and the audit follow it.
        task = asyncio.get_running_loop().create_task(
            self._finish(actor, turn, answer=text, status=200, outcome="answered")
        )
        _finishing.add(task)
        task.add_done_callback(_finishing.discard)
        return response

    async def _stream(self, actor: Actor, turn: Turn, release: Callable[[], None]) -> Response:
        """The model's stream as it comes, or its refusal (a JSONResponse) when it
        refuses before streaming."""
        request = self.client.build_request(
            "POST",
            turn.upstream.completions,
            content=turn.body,
            headers=turn.upstream.headers(stream=True),
        )
        started = time.perf_counter()
        try:
            upstream = await self.client.send(request, stream=True)
            turn.timings["upstream"] = (time.perf_counter() - started) * 1000
        except httpx.HTTPError as exc:
            failed = self._upstream_failed(turn, exc)
            await self._finish(
                actor, turn, answer="", status=failed.status_code, outcome="upstream_failed"
            )
            return failed
        if upstream.status_code != 200:
            try:
                content = await _read_some(upstream)
            except httpx.HTTPError:
                content = b""
            finally:
                await upstream.aclose()
            await self._finish(
                actor, turn, answer="", status=upstream.status_code, outcome="upstream_refused"
            )
            return self._refused(turn, upstream.status_code, content, upstream.headers)
        if "text/event-stream" not in upstream.headers.get("content-type", ""):
            # Some servers ignore stream: true and answer whole; give it back as it came.
            try:
                content = await upstream.aread()
            finally:
                await upstream.aclose()
            try:
                text = _answer_text(json.loads(content))
            except (ValueError, KeyError, TypeError, IndexError, AttributeError):
                text = ""
            await self._finish(actor, turn, answer=text, status=200, outcome="answered")
            return Response(
                content,
                media_type=upstream.headers.get("content-type"),
                headers=self._headers(turn),
            )

        events = _Relay(upstream, turn)

        async def body() -> AsyncIterator[bytes]:
            relay = events
            finished = False
            try:
                async for chunk in relay:
                    yield chunk
                finished = True
            finally:
                await upstream.aclose()
                release()
                outcome = relay.outcome if finished or relay.done else "client_left"
                job = self._finish(
                    actor,
                    turn,
                    answer="".join(relay.parts),
                    status=200 if outcome == "answered" else 502,
                    outcome=outcome,
                )
                task = asyncio.get_running_loop().create_task(job)
                _finishing.add(task)
                task.add_done_callback(_finishing.discard)

        headers = {**self._headers(turn), "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


async def _read_timeout() -> str:
    return f"{settings.MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS:g}"


async def _read_some(response: httpx.Response, limit: int = 64 * 1024) -> bytes:
    content = b""
    async for chunk in response.aiter_bytes():
        content += chunk
        if len(content) >= limit:
            break
    return content


def _answer_text(answer: dict[str, Any]) -> str:
    """The text of a whole chat completion's first choice ('' for a tool call)."""
    content = answer["choices"][0]["message"].get("content")
    return content if isinstance(content, str) else ""


class _Relay:
    """The chat model's events, passed on one by one as each completes; the answer's text
    is gathered for the capture. A stream that stops answering, breaks off, or sends what
    is not an event of the protocol ends with an ``error`` event saying so."""

    def __init__(self, upstream: httpx.Response, turn: Turn) -> None:
        self.upstream, self.turn = upstream, turn
        self.parts: list[str] = []
        self.outcome = "answered"
        self.done = False  # the stream said [DONE]
        self._iterator = self._events()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._iterator

    async def _events(self) -> AsyncIterator[bytes]:
        lines: list[str] = []
        try:
            incoming = self.upstream.aiter_lines()
            async for line in incoming:
                if line:
                    lines.append(line)
                    continue
                if not lines:
                    continue
                problem = self._read(lines)
                if problem:
                    self.outcome = "malformed"
                    yield _error_event(problem, "upstream_malformed")
                    return
                yield ("\n".join(lines) + "\n\n").encode("utf-8")
                if lines == ["data: [DONE]"]:
                    self.done = True
                    # The answer is whole; read the stream's end so that its connection
                    # serves the next call.
                    async for _ in incoming:
                        pass
                    return
                lines = []
            if lines and not self._read(lines):
                yield ("\n".join(lines) + "\n\n").encode("utf-8")
        except httpx.TimeoutException:
            self.outcome = "timeout"
            yield _error_event(
                f"The chat model stopped answering for {_read_timeout()} s "
                "in the middle of its answer.",
                "upstream_timeout",
            )
        except httpx.HTTPError as exc:
            self.outcome = "broken"
            yield _error_event(
                self.turn.upstream.redact(f"The chat model's stream broke off: {exc}"),
                "upstream_broken",
            )

    def _read(self, lines: list[str]) -> str:
        """Gather one event's text; what is wrong with it, or ''."""
        for line in lines:
            if line.startswith(":") or not line.startswith("data:"):
                continue  # a comment, or a field other than data (event, id, retry)
            data = line[5:].strip()
            if data == "[DONE]":
                continue
            try:
                event = json.loads(data)
            except ValueError:
                return (
                    "The chat model sent a stream event that is not JSON: "
                    + self.turn.upstream.redact(data[:120])
                )
            if not isinstance(event, dict):
                return "The chat model sent a stream event that is not an object."
            if "error" in event:
                continue  # its own error event, passed on as it is
            for choice in event.get("choices") or ():
                delta = choice.get("delta") if isinstance(choice, dict) else None
                if isinstance(delta, dict) and isinstance(delta.get("content"), str):
                    self.parts.append(delta["content"])
        return ""


def _error_event(message: str, code: str) -> bytes:
    payload = {"error": {"message": message, "type": "upstream_error", "param": None, "code": code}}
    return f"data: {json.dumps(payload)}\n\n".encode()


async def not_here(request: Request) -> Response:
    return error(
        404,
        f"There is no {request.url.path}: this server answers POST /v1/chat/completions "
        "and GET /v1/models.",
        "invalid_request_error",
        code="unknown_url",
    )


def _search_warm() -> None:
    try:
        fact_search_warm()
    except Exception:  # a first recall builds them instead
        log.exception("Could not build the in-memory search copies at start")


def chat_application() -> Starlette:
    """The ASGI application serving the endpoint."""
    endpoint = ChatEndpoint()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The first turns find recall's in-memory copies made: built beside serving.
        threading.Thread(target=_search_warm, name="search-warm", daemon=True).start()
        yield
        # Answers already given still have their turn captured and audited.
        await asyncio.gather(*_finishing, return_exceptions=True)
        await endpoint.close()

    return Starlette(
        routes=[
            Route("/v1/chat/completions", endpoint.completions, methods=["POST"]),
            Route("/v1/models", endpoint.models, methods=["GET"]),
            Route("/{path:path}", not_here, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
        ],
        lifespan=lifespan,
    )
