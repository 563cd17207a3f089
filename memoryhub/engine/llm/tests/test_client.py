"""The chat-completions client against a real local server that speaks the protocol."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, Field

from memoryhub.engine.llm import (
    ChatClient,
    ChatMessage,
    ChatModelConfigError,
    ChatModelOutputError,
    ChatModelUnavailable,
    ErrorReport,
)

from .conftest import ChatServer, Reply, Request, Responder, completion

Serve = Callable[[Responder], ChatServer]
ASK = [ChatMessage(role="user", content="Where does Ada live?")]


class Place(BaseModel):
    city: str
    population: int = Field(ge=0)


def client_for(
    server: ChatServer, reports: list[ErrorReport] | None = None, **options: Any
) -> ChatClient:
    options.setdefault("backoff", 0.01)
    return ChatClient(
        url=server.url,
        model="test-model",
        on_error=reports.append if reports is not None else None,
        **options,
    )


def answers(content: str | dict[str, Any]) -> Responder:
    return lambda request, count: completion(content)


def test_it_asks_for_json_with_the_schema_and_returns_the_validated_answer(serve: Serve) -> None:
    server = serve(answers({"city": "London", "population": 8_900_000}))
    client = client_for(server, api_key="sk-test-key-123456")

    place = client.complete_json(ASK, Place)

    assert place == Place(city="London", population=8_900_000)
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test-key-123456"
    assert request.body["model"] == "test-model"
    assert request.body["stream"] is False
    assert request.body["messages"] == [{"role": "user", "content": "Where does Ada live?"}]
    response_format = request.body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Place"
    assert response_format["json_schema"]["schema"] == Place.model_json_schema()


def test_it_sends_no_authorization_without_a_key(serve: Serve) -> None:
    server = serve(answers({"city": "Paris", "population": 2}))

    client_for(server).complete_json(ASK, Place)

    assert "Authorization" not in server.requests[0].headers


def test_a_full_endpoint_url_is_used_as_it_is(serve: Serve) -> None:
    server = serve(answers({"city": "Paris", "population": 2}))
    client = ChatClient(url=server.url + "/chat/completions", model="m")

    client.complete_json(ASK, Place)

    assert server.requests[0].path == "/v1/chat/completions"


def test_json_in_a_code_fence_or_after_a_sentence_is_read(serve: Serve) -> None:
    replies = iter(
        [
            '```json\n{"city": "Oslo", "population": 700000}\n```',
            'Here you are: {"city": "Rome", "population": 2800000} Hope it helps.',
        ]
    )
    server = serve(lambda request, count: completion(next(replies)))
    client = client_for(server)

    assert client.complete_json(ASK, Place).city == "Oslo"
    assert client.complete_json(ASK, Place).city == "Rome"


def test_malformed_json_raises_is_reported_once_and_is_not_retried(serve: Serve) -> None:
    server = serve(answers('{"city": "London", "population": '))
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelOutputError) as caught:
        client_for(server, reports).complete_json(ASK, Place)

    assert caught.value.kind == "malformed"
    assert "not JSON" in caught.value.message
    assert len(server.requests) == 1
    assert [(r.kind, r.model) for r in reports] == [("malformed", "test-model")]
    assert reports[0].message == caught.value.message


def test_an_answer_that_is_not_a_chat_completion_is_malformed(serve: Serve) -> None:
    bodies = iter([b"<html>Gateway</html>", {"object": "list", "data": []}])
    server = serve(lambda request, count: Reply(body=next(bodies)))
    reports: list[ErrorReport] = []
    client = client_for(server, reports)

    for expected in ("not JSON", 'without "choices"'):
        with pytest.raises(ChatModelOutputError, match=expected):
            client.complete_json(ASK, Place)

    assert [r.kind for r in reports] == ["malformed", "malformed"]


def test_schema_breaking_json_is_invalid_and_names_the_field_not_the_value(
    serve: Serve,
) -> None:
    server = serve(answers({"city": "Private Street 12", "population": -5}))
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelOutputError) as caught:
        client_for(server, reports).complete_json(ASK, Place)

    assert caught.value.kind == "invalid"
    assert "population" in caught.value.message
    assert "Private Street" not in caught.value.message
    assert [r.kind for r in reports] == ["invalid"]


def test_an_answer_cut_off_at_the_token_limit_is_malformed(serve: Serve) -> None:
    server = serve(
        lambda request, count: completion(
            '{"city": "Lima", "population": 1}', finish_reason="length"
        )
    )

    with pytest.raises(ChatModelOutputError, match="cut off"):
        client_for(server).complete_json(ASK, Place)


def test_an_answer_with_a_lone_surrogate_is_invalid(serve: Serve) -> None:
    server = serve(answers('{"city": "\\ud800", "population": 1}'))

    with pytest.raises(ChatModelOutputError, match="not valid Unicode") as caught:
        client_for(server).complete_json(ASK, Place)

    assert caught.value.kind == "invalid"


def test_an_oversized_answer_is_malformed(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(body=b"x" * 50_000))

    with pytest.raises(ChatModelOutputError, match="larger than"):
        client_for(server, max_response_bytes=10_000).complete_json(ASK, Place)


def test_a_lone_surrogate_in_the_prompt_is_still_sent_as_valid_json(serve: Serve) -> None:
    server = serve(answers({"city": "Bern", "population": 1}))

    client_for(server).complete_json([ChatMessage(role="user", content="odd \ud800 text")], Place)

    assert server.requests[0].body["messages"][0]["content"] == "odd \ud800 text"


def test_429_waits_the_retry_after_then_succeeds(serve: Serve) -> None:
    def responder(request: Request, count: int) -> Reply:
        if count == 1:
            return Reply(status=429, body={"error": "slow down"}, headers={"Retry-After": "1"})
        return completion({"city": "Bonn", "population": 300000})

    server = serve(responder)
    reports: list[ErrorReport] = []

    place = client_for(server, reports).complete_json(ASK, Place)

    assert place.city == "Bonn"
    first, second = server.requests
    assert second.at - first.at >= 0.95
    assert reports == []


def test_429_asking_for_a_long_wait_fails_at_once_as_rate_limited(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(status=429, headers={"Retry-After": "3600"}))
    reports: list[ErrorReport] = []
    started = time.monotonic()

    with pytest.raises(ChatModelUnavailable, match="3600") as caught:
        client_for(server, reports).complete_json(ASK, Place)

    assert time.monotonic() - started < 2
    assert caught.value.kind == "rate_limited"
    assert len(server.requests) == 1
    assert [r.kind for r in reports] == ["rate_limited"]


def test_500_then_success_is_retried(serve: Serve) -> None:
    def responder(request: Request, count: int) -> Reply:
        if count < 3:
            return Reply(status=500 + count, body=b"upstream hiccup")
        return completion({"city": "Kyiv", "population": 3000000})

    server = serve(responder)
    reports: list[ErrorReport] = []

    assert client_for(server, reports).complete_json(ASK, Place).city == "Kyiv"
    assert len(server.requests) == 3
    assert reports == []


def test_a_503_saying_when_to_come_back_is_retried_then(serve: Serve) -> None:
    def responder(request: Request, count: int) -> Reply:
        if count == 1:
            return Reply(status=503, body=b"warming up", headers={"Retry-After": "1"})
        return completion({"city": "Riga", "population": 600000})

    server = serve(responder)

    assert client_for(server).complete_json(ASK, Place).city == "Riga"
    first, second = server.requests
    assert second.at - first.at >= 0.95


def test_an_answer_whose_encoding_is_broken_is_malformed(serve: Serve) -> None:
    server = serve(
        lambda request, count: Reply(body=b"not gzip at all", headers={"Content-Encoding": "gzip"})
    )
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelOutputError, match="could not be decoded"):
        client_for(server, reports).complete_json(ASK, Place)

    assert len(server.requests) == 1
    assert [r.kind for r in reports] == ["malformed"]


def test_a_server_that_keeps_failing_is_given_up_after_the_retries(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(status=503, body=b"overloaded"))
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelUnavailable, match="HTTP 503 after 3 attempts") as caught:
        client_for(server, reports, retries=2).complete_json(ASK, Place)

    assert caught.value.kind == "server"
    assert len(server.requests) == 3
    assert len(reports) == 1


@pytest.mark.parametrize(
    ("status", "hint"), [(400, "rejected"), (401, "API key"), (404, "model name")]
)
def test_a_4xx_other_than_429_is_never_retried(serve: Serve, status: int, hint: str) -> None:
    server = serve(lambda request, count: Reply(status=status, body=b'{"error": "no"}'))
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelUnavailable, match=hint) as caught:
        client_for(server, reports, response_format="json_object").complete_json(ASK, Place)

    assert caught.value.kind == "refused"
    assert len(server.requests) == 1
    assert [r.kind for r in reports] == ["refused"]


def test_the_api_key_never_reaches_a_message_even_when_the_server_echoes_it(
    serve: Serve,
) -> None:
    key = "sk-proj-abcdefgh12345678"
    server = serve(
        lambda request, count: Reply(
            status=500, body=f'{{"error": "bad key {key}, header Bearer {key}"}}'.encode()
        )
    )
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelUnavailable) as caught:
        client_for(server, reports, api_key=key, retries=0).complete_json(ASK, Place)

    assert key not in caught.value.message and key not in reports[0].message
    assert "bad key ***" in reports[0].message
    assert len(reports[0].message) <= 300


def test_a_server_refusing_json_schema_is_asked_for_json_object_from_then_on(
    serve: Serve,
) -> None:
    def responder(request: Request, count: int) -> Reply:
        if request.body["response_format"]["type"] == "json_schema":
            return Reply(status=400, body=b'{"error": "response_format json_schema unsupported"}')
        return completion({"city": "Gent", "population": 260000})

    server = serve(responder)
    reports: list[ErrorReport] = []
    client = client_for(server, reports, retries=0)

    assert client.complete_json(ASK, Place).city == "Gent"
    assert client.complete_json(ASK, Place).city == "Gent"

    formats = [r.body["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    system = server.requests[1].body["messages"][0]
    assert system["role"] == "system"
    assert json.dumps(Place.model_json_schema(), separators=(",", ":")) in system["content"]
    assert reports == []


def test_a_server_refusing_both_formats_is_reported_once(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(status=400, body=b'{"error": "bad request"}'))
    reports: list[ErrorReport] = []

    with pytest.raises(ChatModelUnavailable):
        client_for(server, reports).complete_json(ASK, Place)

    assert [r.body["response_format"]["type"] for r in server.requests] == [
        "json_schema",
        "json_object",
    ]
    assert [r.kind for r in reports] == ["refused"]


def test_a_server_that_does_not_answer_in_time_is_retried_then_reported(serve: Serve) -> None:
    server = serve(
        lambda request, count: Reply(
            delay=2.0, body=completion({"city": "x", "population": 1}).body
        )
    )
    reports: list[ErrorReport] = []
    started = time.monotonic()

    with pytest.raises(ChatModelUnavailable, match=r"did not answer within 0\.3 s") as caught:
        client_for(server, reports, timeout=0.3, retries=1).complete_json(ASK, Place)

    assert time.monotonic() - started < 1.8
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 2
    assert [r.kind for r in reports] == ["timeout"]


def test_an_answer_trickling_in_past_the_timeout_is_abandoned(serve: Serve) -> None:
    body = completion({"city": "Slowtown", "population": 1}).body
    # About 200 bytes at one byte per 20 ms: four seconds in all, a byte always on the way.
    server = serve(lambda request, count: Reply(body=body, trickle_bytes=1, trickle_every=0.02))
    reports: list[ErrorReport] = []
    started = time.monotonic()

    with pytest.raises(ChatModelUnavailable) as caught:
        client_for(server, reports, timeout=0.5, retries=0).complete_json(ASK, Place)

    assert time.monotonic() - started < 1.5
    assert caught.value.kind == "timeout"
    assert [r.kind for r in reports] == ["timeout"]


def test_an_answer_trickling_in_within_the_timeout_is_read(serve: Serve) -> None:
    body = completion({"city": "Steady", "population": 1}).body
    server = serve(lambda request, count: Reply(body=body, trickle_bytes=40, trickle_every=0.02))

    assert client_for(server, timeout=5).complete_json(ASK, Place).city == "Steady"


def test_a_server_that_is_not_running_is_retried_then_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    reports: list[ErrorReport] = []
    client = ChatClient(
        url=f"http://127.0.0.1:{port}/v1",
        model="m",
        retries=2,
        backoff=0.01,
        on_error=reports.append,
    )

    with pytest.raises(ChatModelUnavailable, match="after 3 attempts") as caught:
        client.complete_json(ASK, Place)

    assert caught.value.kind == "unreachable"
    assert [r.kind for r in reports] == ["unreachable"]


def test_parallel_calls_never_exceed_the_concurrency_cap(serve: Serve) -> None:
    server = serve(
        lambda request, count: Reply(
            delay=0.15, body=completion({"city": "Busy", "population": count}).body
        )
    )
    client = client_for(server, max_concurrency=3)
    results: list[Place] = []
    lock = threading.Lock()

    def call() -> None:
        place = client.complete_json(ASK, Place)
        with lock:
            results.append(place)

    threads = [threading.Thread(target=call) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 12
    assert server.most_in_flight == 3


def test_a_call_waiting_for_a_free_slot_does_not_time_out(serve: Serve) -> None:
    # One slot, answers taking 0.3 s, a 0.5 s timeout: the fourth call waits about 0.9 s
    # for its turn, longer than the timeout, and still gets its answer.
    server = serve(
        lambda request, count: Reply(
            delay=0.3, body=completion({"city": "Queue", "population": count}).body
        )
    )
    reports: list[ErrorReport] = []
    client = client_for(server, reports, max_concurrency=1, timeout=0.5, retries=0)
    results: list[Place] = []

    threads = [
        threading.Thread(target=lambda: results.append(client.complete_json(ASK, Place)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(p.population for p in results) == [1, 2, 3, 4]
    assert server.most_in_flight == 1
    assert reports == []


def test_a_recorder_that_fails_does_not_hide_the_error(serve: Serve) -> None:
    server = serve(answers("not json"))

    def broken(report: ErrorReport) -> None:
        raise RuntimeError("database is locked")

    client = ChatClient(url=server.url, model="m", on_error=broken)

    with pytest.raises(ChatModelOutputError):
        client.complete_json(ASK, Place)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"url": "", "model": "m"}, "must start with http"),
        ({"url": "ftp://host/v1", "model": "m"}, "must start with http"),
        ({"url": "http://127.0.0.1:9/v1", "model": " "}, "needs a model name"),
        ({"url": "http://127.0.0.1:9/v1", "model": "m", "max_concurrency": 0}, "at least 1"),
        ({"url": "http://127.0.0.1:9/v1", "model": "m", "timeout": 0}, "positive"),
    ],
)
def test_an_unusable_configuration_is_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ChatModelConfigError, match=message):
        ChatClient(**options)
