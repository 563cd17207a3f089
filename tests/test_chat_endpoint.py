"""The OpenAI-compatible endpoint, end to end: the official ``openai`` client against
MemoryHub's endpoint (served by uvicorn, as ``make run`` serves it), and behind it a
local server speaking the chat-completions protocol as the chat model."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import openai
import pytest
import uvicorn

from facts.models import Fact, MemoryReview
from memoryhub.engine.models import MemoryConfig
from memoryhub.surface.chat_server import chat_application
from teams.models import AuditEvent

pytestmark = pytest.mark.django_db(transaction=True)

EXTRACTED = {
    "facts": [
        {
            "content": "The user's cat is called Biscuit",
            "category": "fact",
            "importance": 0.6,
            "confidence": 0.9,
            "source": "extracted",
            "excerpt": "my cat Biscuit",
        }
    ]
}


@dataclass
class Upstream:
    """A chat model on 127.0.0.1: it answers each turn by ``answer`` (the request's body
    -> what to do), and answers extraction calls (those asking for JSON) with EXTRACTED."""

    url: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)
    extractions: list[dict[str, Any]] = field(default_factory=list)
    answer: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: {"text": "Hello there."}
    release: threading.Event = field(default_factory=threading.Event)


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunk(text: str | None, finish: str | None = None) -> bytes:
    event = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "delta": {"content": text} if text is not None else {},
                "finish_reason": finish,
            }
        ],
    }
    return f"data: {json.dumps(event)}\n\n".encode()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    state = Upstream()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Each write is sent as made, as a model server sends its tokens (without,
            # a small write waits on the peer's delayed acknowledgement, ~40 ms).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def handle(self) -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
                super().handle()

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            if "response_format" in body:  # MemoryHub's own calls: extraction, the graph
                if "triples" in json.dumps(body["response_format"]):
                    self._send(200, _completion(json.dumps({"triples": []})))
                    return
                state.extractions.append(body)
                self._send(200, _completion(json.dumps(EXTRACTED)))
                return
            state.turns.append({"body": body, "headers": dict(self.headers.items())})
            plan = state.answer(body)
            if plan.get("hold"):
                state.release.wait()
                self.close_connection = True  # let go without an answer
                return
            if "status" in plan:
                self._send(plan["status"], plan.get("error", {}), plan.get("headers", {}))
                return
            if not body.get("stream"):
                self._send(200, _completion(plan["text"]))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            words = plan["text"].split(" ") if "text" in plan else []
            events = plan.get("events") or [
                _chunk(f" {w}" if i else w) for i, w in enumerate(words)
            ]
            for index, event in enumerate([*events, _chunk(None, "stop"), b"data: [DONE]\n\n"]):
                if plan.get("raw") and index == len(events):
                    break
                self._chunked(event)
                time.sleep(plan.get("every", 0.0))
            self.wfile.write(b"0\r\n\r\n")

        def _chunked(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _send(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    MemoryConfig.objects.update_or_create(
        pk=1, defaults={"llm_url": state.url, "llm_model": "test-model"}
    )
    yield state
    state.release.set()
    server.shutdown()
    server.server_close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def endpoint(settings) -> Iterator[str]:
    """MemoryHub's endpoint on uvicorn in this process (so it reads the test database);
    answers its base URL."""
    settings.MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS = 2.0
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(chat_application(), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def client_of(endpoint, make_token) -> Callable[..., openai.OpenAI]:
    def make(user, **token: Any) -> openai.OpenAI:
        _, secret = make_token(user, name=token.pop("name", f"agent-{user.pk}"), **token)
        return openai.OpenAI(base_url=endpoint, api_key=secret, max_retries=0, timeout=20)

    return make


def _system(turn: dict[str, Any]) -> str:
    first = turn["body"]["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def test_the_model_gets_the_recalled_facts_in_its_system_message(
    upstream, client_of, owner, outsider, remember
):
    remember(owner, "Alice's production database is PostgreSQL 16 on host db-prod-3")
    remember(owner, "Alice takes her espresso without sugar")
    alice = client_of(owner)
    answer = alice.chat.completions.create(
        model="test-model",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Which host runs the production database?"},
        ],
    )
    assert answer.choices[0].message.content == "Hello there."
    system = _system(upstream.turns[-1])
    assert system.startswith("You are a helpful assistant.\n\n## Recalled Facts")
    assert "db-prod-3" in system

    # Without a system message, one is made; an outsider's token injects nothing of hers.
    client_of(outsider).chat.completions.create(
        model="",  # the chat model of the settings
        messages=[{"role": "user", "content": "Which host runs the production database?"}],
    )
    assert "db-prod-3" not in json.dumps(upstream.turns[-1]["body"])
    assert upstream.turns[-1]["headers"].get("Authorization") is None  # no key of ours leaks
    assert upstream.turns[-1]["body"]["model"] == "test-model"


def test_a_stream_arrives_in_order_and_the_turn_is_captured(
    upstream, client_of, owner, owner_client
):
    upstream.answer = lambda body: {"text": "one two three four five six", "every": 0.02}
    alice = client_of(owner)
    stream = alice.chat.completions.create(
        model="test-model",
        stream=True,
        messages=[
            {"role": "user", "content": "By the way, my cat Biscuit loves boxes. Count to six."}
        ],
        extra_headers={"X-MemoryHub-Session": "chat-42"},
    )
    words = [c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content]
    assert words == ["one", " two", " three", " four", " five", " six"]
    _wait(lambda: Fact.objects.filter(content__icontains="Biscuit").exists())
    fact = Fact.objects.get(content__icontains="Biscuit")
    assert fact.owner == owner and fact.session_id == "chat-42"
    assert fact.created_by_token.name == f"agent-{owner.pk}"
    captured = upstream.extractions[-1]["messages"][-1]["content"]
    assert "Biscuit" in captured and "one two three" in captured
    _wait(lambda: AuditEvent.objects.filter(action="chat.completion").exists())
    event = AuditEvent.objects.get(action="chat.completion")
    assert event.details["stream"] is True and event.details["capture"] == "queued"
    assert "Biscuit" not in json.dumps(event.details)  # no content in the audit
    page = owner_client.get("/audit/").content.decode()
    assert f"agent-{owner.pk} sent a chat turn to the model test-model (answer: answered" in page


def test_a_turn_waits_for_review_when_review_is_on(upstream, client_of, owner):
    MemoryConfig.objects.filter(pk=1).update(extraction_review_required=True)
    client_of(owner).chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "My cat Biscuit loves boxes."}]
    )
    _wait(lambda: MemoryReview.objects.filter(owner=owner).exists())
    assert not Fact.objects.filter(content__icontains="Biscuit").exists()


def test_recall_and_capture_can_be_switched_off_for_one_call(upstream, client_of, owner, remember):
    remember(owner, "Alice's production database runs on host db-prod-3")
    alice = client_of(owner)
    alice.chat.completions.create(
        model="test-model",
        messages=[
            {
                "role": "user",
                "content": "Which host runs the production database? My cat is Biscuit.",
            }
        ],
        extra_headers={"X-MemoryHub-Recall": "off"},
        extra_body={"memoryhub": {"capture": False}},
    )
    turn = upstream.turns[-1]
    assert "db-prod-3" not in json.dumps(turn["body"]) and "memoryhub" not in turn["body"]
    _wait(lambda: AuditEvent.objects.filter(action="chat.completion").exists())
    event = AuditEvent.objects.get(action="chat.completion")
    assert event.details["capture"] == "off" and event.details["recalled"] == 0
    assert not upstream.extractions


def test_a_turn_counts_its_recall_after_the_answer_and_audits_others_facts_with_the_read(
    upstream, client_of, owner, teammate, team, remember
):
    from facts.models import RecallDay

    fact = remember(owner, "The Platform team's database runs on host db-prod-3", visibility="team")
    bob = client_of(teammate)
    bob.chat.completions.create(
        model="test-model",
        messages=[{"role": "user", "content": "Which host runs the Platform database?"}],
    )
    assert "db-prod-3" in _system(upstream.turns[-1])
    # The audit of reading alice's fact was written before the model was asked.
    read = AuditEvent.objects.get(action="recall.cross_scope", actor=teammate)
    assert read.details["ids"] == [fact.pk]
    # The counts follow the answer.
    _wait(lambda: Fact.objects.get(pk=fact.pk).access_count == fact.access_count + 1)
    _wait(lambda: RecallDay.objects.filter(user=teammate, count=1).exists())


def test_an_answer_says_how_long_each_step_before_the_model_took(
    upstream, client_of, owner, remember
):
    remember(owner, "Alice's production database runs on host db-prod-3")
    alice = client_of(owner)

    def steps(**extra) -> dict[str, float]:
        raw = alice.chat.completions.with_raw_response.create(
            model="test-model",
            messages=[{"role": "user", "content": "Which host runs the production database?"}],
            **extra,
        )
        timing = {}
        for part in raw.headers["server-timing"].split(","):
            name, _, duration = part.strip().partition(";dur=")
            timing[name] = float(duration)
        return timing

    timing = steps()
    assert list(timing) == ["auth", "recall", "prepare", "upstream"]
    assert all(ms >= 0 for ms in timing.values())
    assert timing["recall"] <= timing["prepare"]
    assert "recall" not in steps(extra_headers={"X-MemoryHub-Recall": "off"})


@pytest.mark.parametrize(
    ("plan", "error", "status"),
    [
        (
            {
                "status": 429,
                "error": {"error": {"message": "slow down"}},
                "headers": {"Retry-After": "7"},
            },
            openai.RateLimitError,
            429,
        ),
        (
            {"status": 500, "error": {"error": {"message": "model crashed"}}},
            openai.InternalServerError,
            500,
        ),
        ({"status": 401, "error": {"error": {"message": "bad key"}}}, openai.APIStatusError, 502),
        ({"hold": True}, openai.APIStatusError, 504),
    ],
)
def test_the_models_errors_reach_the_client_as_clean_errors(
    upstream, client_of, owner, plan, error, status
):
    upstream.answer = lambda body: plan
    alice = client_of(owner)
    for stream in (False, True):
        with pytest.raises(error) as raised:
            alice.chat.completions.create(
                model="test-model", stream=stream, messages=[{"role": "user", "content": "hi"}]
            )
        assert raised.value.status_code == status
        assert "chat model" in raised.value.message
    if status == 429:
        assert raised.value.response.headers["Retry-After"] == "7"


def test_a_broken_stream_ends_with_an_error_the_client_raises(upstream, client_of, owner):
    upstream.answer = lambda body: {"events": [_chunk("fine"), b"data: {not json\n\n"]}
    stream = client_of(owner).chat.completions.create(
        model="test-model", stream=True, messages=[{"role": "user", "content": "hi"}]
    )
    got = []
    with pytest.raises(openai.APIError, match="not JSON"):
        for chunk in stream:
            got.append(chunk.choices[0].delta.content)
    assert got == ["fine"]


def test_a_stream_that_stops_answering_ends_with_a_timeout_error(upstream, client_of, owner):
    upstream.answer = lambda body: {"events": [_chunk("fine")], "raw": True, "every": 5.0}
    stream = client_of(owner).chat.completions.create(
        model="test-model", stream=True, messages=[{"role": "user", "content": "hi"}]
    )
    with pytest.raises(openai.APIError, match="stopped answering"):
        list(stream)


def test_bad_input_and_outsiders_are_refused_before_the_model_is_asked(
    upstream, endpoint, client_of, owner
):
    base = endpoint
    assert httpx.post(f"{base}/chat/completions", json={"messages": []}).status_code == 401
    wrong = httpx.post(
        f"{base}/chat/completions", json={"messages": []}, headers={"Authorization": "Bearer nope"}
    )
    assert wrong.status_code == 401 and "error" in wrong.json()
    alice = client_of(owner)
    with pytest.raises(openai.BadRequestError, match="messages"):
        alice.chat.completions.create(model="test-model", messages=[])
    with pytest.raises(openai.BadRequestError, match="role"):
        alice.chat.completions.create(
            model="test-model", messages=[{"role": "wizard", "content": "x"}]
        )
    lone = httpx.post(
        f"{base}/chat/completions",
        content=b'{"messages": [{"role": "user", "content": "\\ud800"}]}',
        headers={"Authorization": f"Bearer {alice.api_key}"},
    )
    assert lone.status_code == 400 and "surrogate" in lone.json()["error"]["message"]
    with pytest.raises(openai.BadRequestError, match="on or off"):
        alice.chat.completions.create(
            model="test-model",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"X-MemoryHub-Recall": "maybe"},
        )
    assert not upstream.turns
    assert httpx.get(f"{base}/nothing-here").status_code == 404


def test_models_lists_the_chat_models_models(upstream, client_of, owner):
    assert [m.id for m in client_of(owner).models.list()] == ["test-model"]


def test_a_token_has_a_bounded_number_of_calls_under_way(upstream, client_of, owner, settings):
    settings.MEMORYHUB_CHAT_CALLS_PER_TOKEN = 2
    upstream.answer = lambda body: {"hold": True}
    alice = client_of(owner)
    settings.MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS = 30.0

    def call() -> None:
        with contextlib.suppress(openai.APIError):
            alice.chat.completions.create(
                model="test-model", messages=[{"role": "user", "content": "hi"}]
            )

    started = [threading.Thread(target=call, daemon=True) for _ in range(2)]
    for thread in started:
        thread.start()
    _wait(lambda: len(upstream.turns) == 2)
    with pytest.raises(openai.RateLimitError, match="under way"):
        alice.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "hi"}]
        )
    upstream.release.set()
    for thread in started:
        thread.join(timeout=10)
    # Every call that ended gave its place back, streamed or not.
    upstream.answer = lambda body: {"text": "fine"}
    for stream in (True, False, True, True, False):
        answer = alice.chat.completions.create(
            model="test-model", stream=stream, messages=[{"role": "user", "content": "hi"}]
        )
        assert list(answer) if stream else answer.choices


def test_the_agents_page_shows_the_base_url_and_previews_a_turns_system_message(
    owner_client, outsider_client, client, owner, make_token, remember
):
    fact = remember(owner, "Alice's production database runs on host db-prod-3")
    token, _ = make_token(owner, name="ci-bot")
    page = owner_client.get("/agents/").content.decode()
    assert "http://testserver:8001/v1" in page and "Preview the system message" in page
    said = {"token": token.pk, "system": "Be brief.", "message": "Which host runs the database?"}
    preview = owner_client.post("/agents/preview/", said)
    assert preview.status_code == 200
    shown = preview.content.decode()
    assert "Be brief.\n\n## Recalled Facts" in shown and "db-prod-3" in shown
    fact.refresh_from_db()
    assert fact.access_count == 0  # a preview is no access
    # Nobody previews through another person's token, and only people signed in.
    refused = outsider_client.post("/agents/preview/", said)
    assert refused.status_code == 400 and "db-prod-3" not in refused.content.decode()
    assert client.post("/agents/preview/", said).status_code == 302


def test_the_web_servers_v1_says_where_the_endpoint_is(client, settings):
    settings.MEMORYHUB_CHAT_PORT = 9123
    answer = client.post("/v1/chat/completions", {}, content_type="application/json")
    assert answer.status_code == 421
    assert "http://testserver:9123/v1" in answer.json()["error"]["message"]


def test_the_web_servers_v1_answers_api_clients_without_a_csrf_token(settings):
    from django.test import Client

    answer = Client(enforce_csrf_checks=True).post("/v1/chat/completions", {})
    assert answer.status_code == 421


def test_a_token_with_its_own_chat_model_calls_it_with_its_key_and_learns_offline(
    upstream, endpoint, owner, make_token
):
    from teams.services import Actor, agent_token_create

    # The instance has no chat model: the token's own answers, extraction runs offline.
    MemoryConfig.objects.filter(pk=1).update(llm_url="", llm_model="")
    _, secret = agent_token_create(
        actor=Actor(user=owner),
        name="own-model",
        scopes=["read", "write"],
        chat_url=upstream.url,
        chat_model="test-model",
        chat_api_key="sk-upstream-secret-1234",
    )
    alice = openai.OpenAI(base_url=endpoint, api_key=secret, max_retries=0, timeout=20)
    answer = alice.chat.completions.create(
        model="", messages=[{"role": "user", "content": "Remember that my cat is called Biscuit."}]
    )
    assert answer.choices[0].message.content == "Hello there."
    turn = upstream.turns[-1]
    assert turn["headers"]["Authorization"] == "Bearer sk-upstream-secret-1234"
    assert turn["body"]["model"] == "test-model"
    _wait(lambda: Fact.objects.filter(content__icontains="Biscuit").exists())
    assert not upstream.extractions  # the offline rules read the turn
    _wait(lambda: AuditEvent.objects.filter(action="chat.completion").exists())
    audited = json.dumps(list(AuditEvent.objects.values("details", "actor_label")))
    assert "sk-upstream-secret-1234" not in audited


def test_a_tokens_chat_model_is_checked_when_it_is_made(owner):
    from memoryhub.engine.errors import InvalidInput
    from teams.services import Actor, agent_token_create

    for bad in ({"chat_url": "ftp://x"}, {"chat_model": "m"}, {"chat_url": "http://x " * 40}):
        with pytest.raises(InvalidInput):
            agent_token_create(actor=Actor(user=owner), name="bad", scopes=["read"], **bad)


def test_odd_calls_get_clear_answers_and_change_nothing(
    upstream, endpoint, client_of, owner, make_token, remember, settings
):
    from teams.services import Actor, agent_token_revoke

    remember(owner, "Alice's production database runs on host db-prod-3")
    alice = client_of(owner)
    # Full-text syntax in a message is words to recall, not a query language.
    for said in ('"NEAR(db prod) OR *', "db-prod-3 AND (NOT", "^ db:prod ' ; --"):
        answer = alice.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": said}]
        )
        assert answer.choices[0].message.content == "Hello there."
    # A body over the limit is refused before anything is read into recall.
    settings.MEMORYHUB_CHAT_MAX_BODY_BYTES = 1000
    with pytest.raises(openai.APIStatusError) as too_big:
        alice.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "x" * 2000}]
        )
    assert too_big.value.status_code == 413
    settings.MEMORYHUB_CHAT_MAX_BODY_BYTES = 20_000_000
    asked = len(upstream.turns)
    # A token without read is refused; one without write is answered, not captured.
    _, write_only = make_token(owner, name="writer", scopes=("write",))
    refused = httpx.post(
        f"{endpoint}/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {write_only}"},
    )
    assert refused.status_code == 403 and "read" in refused.json()["error"]["message"]
    reader = client_of(owner, name="reader", scopes=("read",))
    _wait(lambda: AuditEvent.objects.filter(action="chat.completion").count() == 3)
    extracted = len(upstream.extractions)
    reader.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "My cat is Biscuit."}]
    )
    _wait(lambda: AuditEvent.objects.filter(details__capture="not_allowed").exists())
    assert len(upstream.extractions) == extracted
    # A revoked token is refused at once.
    token, secret = make_token(owner, name="gone")
    agent_token_revoke(actor=Actor(user=owner), token=token)
    gone = openai.OpenAI(base_url=endpoint, api_key=secret, max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="revoked"):
        gone.chat.completions.create(
            model="test-model", messages=[{"role": "user", "content": "hi"}]
        )
    assert len(upstream.turns) == asked + 1
