"""Slow chat models starve nothing, for real: the web server (gunicorn, as ``make run``
serves it) and the OpenAI-compatible endpoint (uvicorn) in their own processes, 20
streamed answers that take ten seconds each and 20 calls to a model that never answers,
while another user's recall, writes, dashboard and own chat calls are timed before,
during and after.

Latencies are compared as ratios to those measured before on the same servers, as in
``test_edge_faults``.
"""

import contextlib
import os
import statistics
import threading
import time

import httpx
import openai
import pytest

from tests.test_chat_endpoint import upstream  # noqa: F401
from tests.test_edge_faults import GENEROUS, SLACK, Bob, Timings, assert_as_before, timed

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

STREAMS, HUNG = 20, 20
# Each stream: a word every half second, ten seconds in all (longer with
# MEMORYHUB_CHAT_LOAD_SECONDS, e.g. 60).
EVERY = 0.5
WORDS = int(float(os.environ.get("MEMORYHUB_CHAT_LOAD_SECONDS", "10")) / EVERY)


def _answer(body: dict) -> dict:
    said = body["messages"][-1]["content"]
    if said == "never":
        return {"hold": True}
    if said == "slowly":
        return {"text": " ".join(f"w{i}" for i in range(WORDS)), "every": EVERY}
    return {"text": "At once."}


def test_slow_and_silent_chat_models_leave_everyone_else_their_latency(
    upstream,  # noqa: F811
    start_web,
    start_chat,
    owner,
    teammate,
    make_token,
):
    upstream.answer = _answer
    _, alice_secret = make_token(owner, name="alice-agent")
    _, bob_secret = make_token(teammate, name="bob-agent")
    web = start_web(workers=2, threads=4)
    chat = start_chat(
        MEMORYHUB_CHAT_CALLS_PER_TOKEN=str(STREAMS + HUNG + 5),
        MEMORYHUB_CHAT_READ_TIMEOUT_SECONDS="60",
    )
    bob = Bob(web, bob_secret)
    bob_chat = openai.OpenAI(base_url=chat, api_key=bob_secret, max_retries=0, timeout=30)

    def rounds(n: int) -> tuple[Timings, list[float], list[float]]:
        timings = bob.rounds(n)
        pages, chats = [], []
        for _ in range(n):
            page, took = timed(lambda: httpx.get(f"{web}/login/", timeout=30))
            assert page.status_code == 200
            pages.append(took)
            started = time.monotonic()
            answer = bob_chat.chat.completions.create(
                model="test-model", messages=[{"role": "user", "content": "quick"}]
            )
            assert answer.choices[0].message.content == "At once."
            chats.append(time.monotonic() - started)
        return timings, pages, chats

    rounds(3)  # warm: every process has served
    before = rounds(10)

    streamed: list[list[str]] = []
    failures: list[str] = []

    def stream() -> None:
        client = openai.OpenAI(
            base_url=chat, api_key=alice_secret, max_retries=0, timeout=WORDS * EVERY + 60
        )
        try:
            words = client.chat.completions.create(
                model="test-model", stream=True, messages=[{"role": "user", "content": "slowly"}]
            )
            streamed.append(
                [
                    c.choices[0].delta.content
                    for c in words
                    if c.choices and c.choices[0].delta.content
                ]
            )
        except openai.APIError as exc:
            failures.append(str(exc))

    def never() -> None:
        client = openai.OpenAI(base_url=chat, api_key=alice_secret, max_retries=0, timeout=60)
        # The model never answers: the call ends (502) once the test lets it go.
        with contextlib.suppress(openai.APIError):
            client.chat.completions.create(
                model="test-model", messages=[{"role": "user", "content": "never"}]
            )

    callers = [threading.Thread(target=stream) for _ in range(STREAMS)]
    callers += [threading.Thread(target=never) for _ in range(HUNG)]
    for caller in callers:
        caller.start()
    # A guard against a hang, not a measure: a loaded machine queues the calls' recalls.
    deadline = time.monotonic() + 120
    while (
        sum(t["body"]["messages"][-1]["content"] != "quick" for t in upstream.turns)
        < STREAMS + HUNG
    ):
        assert time.monotonic() < deadline, "the calls did not all reach the model"
        time.sleep(0.05)
    during = rounds(10)
    upstream.release.set()
    for caller in callers:
        caller.join(timeout=WORDS * EVERY + 60)
    after = rounds(10)

    def summary(name: str, values: list[float]) -> str:
        median, most = statistics.median(values) * 1000, max(values) * 1000
        return f"{name} median {median:.0f} ms, max {most:.0f} ms"

    for label, (timings, pages, chats) in (
        ("before", before),
        ("during", during),
        ("after", after),
    ):
        print(
            f"\n{label}: {timings.summary()}; {summary('dashboard', pages)}; "
            f"{summary('chat', chats)}"
        )
    assert not failures and len(streamed) == STREAMS
    assert all(words == ["w0", *(f" w{i}" for i in range(1, WORDS))] for words in streamed)
    assert_as_before(during[0], before[0], "while chat models are slow")
    for index, name in ((1, "dashboard"), (2, "chat")):
        usual, slowest = statistics.median(before[index]), max(during[index])
        assert slowest <= GENEROUS * usual + SLACK, f"{name}: {slowest:.2f} s against {usual:.3f} s"
