"""A real HTTP server on 127.0.0.1 that the remote embedders talk to."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = b""
    delay: float = 0.0
    # Answer only once this is set: a server that takes the request and hangs.
    hold: threading.Event | None = None


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any


# Answers one request: (request, number of requests so far, 1-based) -> reply.
Responder = Callable[[Request, int], Reply]


@dataclass
class EmbeddingServer:
    url: str
    requests: list[Request] = field(default_factory=list)


def text_vector(text: str, dim: int = 8) -> list[float]:
    """A deterministic, non-normalised vector that differs from text to text."""
    digest = hashlib.sha256(text.encode()).digest()
    return [float(b) - 100.0 for b in digest[:dim]]


def openai_reply(request: Request, dim: int = 8) -> Reply:
    """Answer like an OpenAI embeddings endpoint, listing items in reverse order."""
    items = [
        {"object": "embedding", "index": i, "embedding": text_vector(text, dim)}
        for i, text in enumerate(request.body["input"])
    ]
    return Reply(body={"object": "list", "data": items[::-1], "model": request.body["model"]})


def legacy_reply(request: Request, dim: int = 8) -> Reply:
    """Answer like a legacy (one prompt per request) embeddings endpoint."""
    return Reply(body={"embedding": text_vector(request.body["prompt"], dim)})


@pytest.fixture
def hang() -> Iterator[threading.Event]:
    """For ``Reply(hold=hang)``: the server hangs until the test sets it (or ends)."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], EmbeddingServer]]:
    """Start HTTP servers that answer with a responder; stop them after the test."""
    servers: list[ThreadingHTTPServer] = []

    def start(responder: Responder) -> EmbeddingServer:
        state = EmbeddingServer(url="")
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                request = Request(self.path, dict(self.headers.items()), body)
                with lock:
                    state.requests.append(request)
                    count = len(state.requests)
                reply = responder(request, count)
                if reply.hold is not None:
                    reply.hold.wait()
                if reply.delay:
                    threading.Event().wait(reply.delay)
                payload = (
                    json.dumps(reply.body).encode() if isinstance(reply.body, dict) else reply.body
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, as the timeout test intends

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True  # a held request does not hold up the test's end
        servers.append(server)
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        return state

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
