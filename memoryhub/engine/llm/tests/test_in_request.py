"""The chat-model client as a request uses it: one deadline across every attempt and
wait, no queueing for a slot, and a circuit that stops asking a model that keeps
failing until one call gets an answer again. Against a real local server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from memoryhub.engine.circuits import RequestLimits
from memoryhub.engine.llm import (
    ChatClient,
    ChatMessage,
    ChatModelBusy,
    ChatModelOutputError,
    ChatModelUnavailable,
    ErrorReport,
)

from .conftest import ChatServer, Reply, Request, Responder, completion

Serve = Callable[[Responder], ChatServer]
ASK = [ChatMessage(role="user", content="Where does Ada live?")]
ANSWER = {"city": "London"}


class Place(BaseModel):
    city: str


def in_request(
    server: ChatServer,
    reports: list[ErrorReport] | None = None,
    *,
    deadline: float = 1.0,
    failures: int = 3,
    retry_seconds: float = 30.0,
    **options: Any,
) -> ChatClient:
    """A client with the background defaults (60 s per attempt, 2 retries) bounded for
    requests."""
    options.setdefault("backoff", 0.01)
    return ChatClient(
        url=server.url,
        model="test-model",
        on_error=reports.append if reports is not None else None,
        in_request=RequestLimits(deadline=deadline, failures=failures, retry_seconds=retry_seconds),
        **options,
    )


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    try:
        return call(), time.monotonic() - started
    except Exception as exc:
        return exc, time.monotonic() - started


def test_a_hanging_model_is_given_up_at_the_deadline_not_per_attempt(
    serve: Serve,
    hang: threading.Event,
) -> None:
    server = serve(lambda request, count: Reply(hold=hang))
    reports: list[ErrorReport] = []
    client = in_request(server, reports, deadline=0.6)

    error, took = timed(lambda: client.complete_json(ASK, Place))

    assert isinstance(error, ChatModelUnavailable) and error.kind == "timeout"
    assert 0.5 < took < 1.5  # not 60 s x 3 attempts
    assert "0.6 s a request waits" in error.message
    assert [r.kind for r in reports] == ["timeout"]


def test_waits_between_attempts_that_would_pass_the_deadline_are_not_waited(
    serve: Serve,
) -> None:
    server = serve(lambda request, count: Reply(status=503, headers={"Retry-After": "0.4"}))
    client = in_request(server, deadline=0.7)

    error, took = timed(lambda: client.complete_json(ASK, Place))

    # Two attempts 0.4 s apart; a third would start after the deadline.
    assert isinstance(error, ChatModelUnavailable) and error.kind == "server"
    assert "gave up after 2 attempts" in error.message
    assert len(server.requests) == 2
    assert took < 0.65


def test_an_attempt_the_deadline_cuts_short_reports_the_failure_before_it(
    serve: Serve,
    hang: threading.Event,
) -> None:
    def responder(request: Request, count: int) -> Reply:
        return Reply(status=502, body=b"bad gateway") if count == 1 else Reply(hold=hang)

    server = serve(responder)
    reports: list[ErrorReport] = []

    error, took = timed(lambda: in_request(server, reports, deadline=0.5).complete_json(ASK, Place))

    # The second attempt had what was left of the deadline: the model's failure is the news.
    assert isinstance(error, ChatModelUnavailable) and error.kind == "server"
    assert "HTTP 502" in error.message and "gave up after 2 attempts" in error.message
    assert took < 1.5 and len(server.requests) == 2
    assert [r.kind for r in reports] == ["server"]


def test_a_slow_answer_within_the_deadline_is_read(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(delay=0.5, body=completion(ANSWER).body))

    place, took = timed(lambda: in_request(server, deadline=3.0).complete_json(ASK, Place))

    assert place == Place(city="London")
    assert took >= 0.5


def test_429_asking_to_wait_longer_than_the_deadline_fails_at_once_saying_when(
    serve: Serve,
) -> None:
    server = serve(lambda request, count: Reply(status=429, headers={"Retry-After": "20"}))
    reports: list[ErrorReport] = []

    error, took = timed(lambda: in_request(server, reports, deadline=5).complete_json(ASK, Place))

    assert isinstance(error, ChatModelUnavailable) and error.kind == "rate_limited"
    assert error.retry_after == 20
    assert "asks to wait 20 s, longer than a request waits for it (5 s in all)" in error.message
    assert took < 1 and len(server.requests) == 1
    assert [r.kind for r in reports] == ["rate_limited"]


def test_a_call_finding_every_slot_taken_is_refused_at_once_and_not_recorded(
    serve: Serve,
    hang: threading.Event,
) -> None:
    server = serve(lambda request, count: Reply(hold=hang, body=completion(ANSWER).body))
    reports: list[ErrorReport] = []
    client = in_request(server, reports, deadline=10, max_concurrency=1)
    first: list[Any] = []
    waiting = threading.Thread(target=lambda: first.append(client.complete_json(ASK, Place)))
    waiting.start()
    while not server.in_flight:
        time.sleep(0.01)

    error, took = timed(lambda: client.complete_json(ASK, Place))
    hang.set()
    waiting.join()

    assert isinstance(error, ChatModelBusy) and error.kind == "busy"
    assert error.retry_after == 10
    assert took < 0.5
    assert first == [Place(city="London")]
    assert len(server.requests) == 1 and reports == []


def test_after_failures_in_a_row_the_circuit_answers_at_once_without_asking(
    serve: Serve,
    hang: threading.Event,
) -> None:
    server = serve(lambda request, count: Reply(hold=hang))
    reports: list[ErrorReport] = []
    client = in_request(server, reports, deadline=0.3, failures=2, retry_seconds=60)
    for _ in range(2):
        with pytest.raises(ChatModelUnavailable, match="a request waits"):
            client.complete_json(ASK, Place)

    error, took = timed(lambda: client.complete_json(ASK, Place))

    assert isinstance(error, ChatModelUnavailable) and error.kind == "circuit_open"
    assert took < 0.1
    assert 55 <= error.retry_after <= 60
    assert "failed 2 times in a row and is not asked again" in error.message
    assert "did not answer" in error.message  # the last failure
    assert len(server.requests) == 2
    assert [r.kind for r in reports] == ["timeout", "timeout"]  # refusals are not failures


def test_a_probe_that_gets_an_answer_closes_the_circuit(serve: Serve) -> None:
    state = {"up": False}

    def responder(request: Request, count: int) -> Reply:
        return completion(ANSWER) if state["up"] else Reply(status=500, body=b"down")

    server = serve(responder)
    client = in_request(server, failures=1, retry_seconds=0.4, retries=0)
    with pytest.raises(ChatModelUnavailable, match="HTTP 500"):
        client.complete_json(ASK, Place)
    with pytest.raises(ChatModelUnavailable, match="not asked again"):
        client.complete_json(ASK, Place)

    # The probe after the retry time fails: closed for another while.
    time.sleep(0.5)
    with pytest.raises(ChatModelUnavailable, match="HTTP 500"):
        client.complete_json(ASK, Place)
    with pytest.raises(ChatModelUnavailable, match="not asked again"):
        client.complete_json(ASK, Place)
    assert len(server.requests) == 2

    # The endpoint recovers: the next probe gets an answer, and every call is made again.
    state["up"] = True
    time.sleep(0.5)
    assert client.complete_json(ASK, Place) == Place(city="London")
    assert client.complete_json(ASK, Place) == Place(city="London")
    assert client.circuit is not None and not client.circuit.is_open


def test_while_a_probe_is_out_other_calls_are_refused(
    serve: Serve,
    hang: threading.Event,
) -> None:
    state = {"up": False}

    def responder(request: Request, count: int) -> Reply:
        if state["up"]:
            return Reply(hold=hang, body=completion(ANSWER).body)
        return Reply(status=500, body=b"down")

    server = serve(responder)
    client = in_request(server, deadline=5, failures=1, retry_seconds=0.2, retries=0)
    with pytest.raises(ChatModelUnavailable, match="HTTP 500"):
        client.complete_json(ASK, Place)
    state["up"] = True
    time.sleep(0.3)
    probe: list[Any] = []
    probing = threading.Thread(target=lambda: probe.append(client.complete_json(ASK, Place)))
    probing.start()
    while not server.in_flight:
        time.sleep(0.01)

    error, took = timed(lambda: client.complete_json(ASK, Place))
    hang.set()
    probing.join()

    assert isinstance(error, ChatModelUnavailable) and error.kind == "circuit_open"
    assert took < 0.1
    assert probe == [Place(city="London")]
    assert client.circuit is not None and not client.circuit.is_open


def test_an_answer_that_is_not_usable_does_not_open_the_circuit(serve: Serve) -> None:
    server = serve(lambda request, count: completion("not json"))
    client = in_request(server, failures=1)

    for _ in range(3):
        with pytest.raises(ChatModelOutputError):
            client.complete_json(ASK, Place)

    assert len(server.requests) == 3  # each call asked: the model is there


def test_a_job_without_request_limits_still_waits_its_turn(
    serve: Serve,
) -> None:
    server = serve(lambda request, count: Reply(delay=0.3, body=completion(ANSWER).body))
    client = ChatClient(url=server.url, model="m", max_concurrency=1, timeout=5)
    results: list[Place] = []

    threads = [
        threading.Thread(target=lambda: results.append(client.complete_json(ASK, Place)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 3 and server.most_in_flight == 1
    assert client.circuit is None
