"""A real HTTP server on 127.0.0.1 that speaks the chat-completions protocol."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds to wait before answering.
    delay: float = 0.0
    # Send the body this many bytes at a time, waiting ``trickle_every`` between them.
    trickle_bytes: int = 0
    trickle_every: float = 0.0
    # Answer only once this is set: a server that takes the request and hangs.
    hold: threading.Event | None = None


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


# Answers one request: (request, number of requests so far, 1-based) -> reply.
Responder = Callable[[Request, int], Reply]


@dataclass
class ChatServer:
    url: str = ""
    requests: list[Request] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0


def completion(content: str | dict[str, Any], *, finish_reason: str = "stop") -> Reply:
    """A chat completion whose message is ``content`` (a dict is sent as its JSON)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
        }
    )


def user_data(request: Request) -> Any:
    """The JSON data the provider put in the user turn of ``request``."""
    (turn,) = [m for m in request.body["messages"] if m["role"] == "user"]
    return json.loads(turn["content"])


@pytest.fixture
def hang() -> Iterator[threading.Event]:
    """For ``Reply(hold=hang)``: the server hangs until the test sets it (or ends)."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], ChatServer]]:
    """Start chat-completions servers answering with a responder; stop them after the test."""
    servers: list[ThreadingHTTPServer] = []

    def start(responder: Responder) -> ChatServer:
        state = ChatServer()
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle(self) -> None:
                # A client that gave up on a slow answer, or closed its connection.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
                    super().handle()

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                request = Request(self.path, dict(self.headers.items()), body, time.monotonic())
                with lock:
                    state.requests.append(request)
                    count = len(state.requests)
                    state.in_flight += 1
                    state.most_in_flight = max(state.most_in_flight, state.in_flight)
                try:
                    self._answer(responder(request, count))
                finally:
                    with lock:
                        state.in_flight -= 1

            def _answer(self, reply: Reply) -> None:
                if reply.hold is not None:
                    reply.hold.wait()
                if reply.delay:
                    time.sleep(reply.delay)
                payload = (
                    json.dumps(reply.body).encode() if isinstance(reply.body, dict) else reply.body
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.trickle_bytes:
                        for start in range(0, len(payload), reply.trickle_bytes):
                            self.wfile.write(payload[start : start + reply.trickle_bytes])
                            self.wfile.flush()
                            time.sleep(reply.trickle_every)
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as the timeout tests intend

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        servers.append(server)
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return state

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
