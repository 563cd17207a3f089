"""The health page answers from the last check of the broker and the workers, and
checks again in the background once that answer is a few seconds old."""

import threading

import pytest
from django.test import Client

from memoryhub.health import BackgroundCheck


class SlowCheck:
    """A check that answers with a counter once ``go`` is set."""

    def __init__(self) -> None:
        self.calls = 0
        self.go = threading.Event()
        self.go.set()

    def __call__(self) -> dict:
        self.go.wait(timeout=10)
        self.calls += 1
        return {"ok": True, "call": self.calls}


def test_the_first_answer_is_waited_for_then_reused_while_fresh():
    check = SlowCheck()
    probe = BackgroundCheck(check, fresh_for=60)
    assert probe.answer()[0] == {"ok": True, "call": 1}
    for _ in range(20):
        assert probe.answer()[0]["call"] == 1
    assert check.calls == 1


def test_a_stale_answer_is_served_at_once_while_one_new_check_runs():
    check = SlowCheck()
    probe = BackgroundCheck(check, fresh_for=0)
    probe.answer()
    check.go.clear()  # the next check hangs, as a ping does while it waits for replies
    answers = [probe.answer()[0]["call"] for _ in range(10)]
    assert answers == [1] * 10  # nobody waited for it
    running = probe._running
    check.go.set()
    running.join(timeout=10)
    assert check.calls == 2  # ten stale reads started one check between them
    assert probe.answer()[0]["call"] == 2


def test_a_check_that_raises_is_reported_not_raised():
    def broken() -> dict:
        raise RuntimeError("no route to the broker")

    answer, _ = BackgroundCheck(broken, fresh_for=60).answer()
    assert answer == {"error": "no route to the broker"}


@pytest.mark.django_db
def test_the_health_page_says_how_old_its_queue_answer_is():
    body = Client().get("/api/health").json()
    for part in ("broker", "worker"):
        assert body[part]["checked_seconds_ago"] >= 0
    assert body["database"]["ok"] is True
