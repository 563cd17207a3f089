"""The health page answers from the last check of the broker and the workers, and
checks again in the background once that answer is a few seconds old."""

import os
import threading
import time
from pathlib import Path

import pytest
from celery import Celery
from django.test import Client

from memoryhub import health
from memoryhub.engine import liveness
from memoryhub.engine.queue import celery_queue_settings
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


def test_a_check_that_hangs_holds_the_page_no_longer_than_the_grace_and_says_so():
    hung = threading.Event()
    probe = BackgroundCheck(lambda: hung.wait(30) and {}, fresh_for=5, grace=0.3)
    started = time.monotonic()

    answer, age = probe.answer()

    assert time.monotonic() - started < 2
    assert answer == {"error": "the check has not answered yet"} and age >= 0.3
    hung.set()


def test_an_answer_nobody_asked_for_a_while_is_not_served_but_checked_again():
    check = SlowCheck()
    probe = BackgroundCheck(check, fresh_for=0.05, grace=1)
    probe.answer()
    time.sleep(1.2)  # older than fresh_for + grace: it says nothing of now

    assert probe.answer()[0]["call"] == 2


def test_the_page_says_when_the_check_of_the_queue_has_not_returned(monkeypatch):
    monkeypatch.setattr(health.queue_check, "answer", lambda: ({"broker": {"ok": True}}, 60.0))

    report = health.health_report()

    assert report["status"] == "degraded"
    assert report["broker"]["ok"] is False
    assert "no answer for 60 s" in report["broker"]["error"]


# --- A worker that takes no task -----------------------------------------------------------


def filesystem_queue(tmp_path: Path, waiting: int, age: float) -> object:
    conf = Celery("health-test", set_as_current=False).conf
    conf.update(celery_queue_settings(redis_url="", data_dir=tmp_path))
    folder = tmp_path / "queue" / "messages"
    folder.mkdir(parents=True)
    for n in range(waiting):
        message = folder / f"{n}_{n:08x}.celery.msg"
        message.write_text("{}")
        os.utime(message, (time.time() - age, time.time() - age))
    return conf


def test_a_worker_with_tasks_waiting_and_no_sign_for_the_stall_time_is_stuck(tmp_path):
    conf = filesystem_queue(tmp_path, waiting=3, age=90)
    watch = liveness.StallWatch(conf=conf, last_sign=lambda: time.time() - 80, stall_seconds=60)

    assert watch(time.time() - 600) == "took no task while 3 tasks waited in its queue for 90 s"


def test_a_worker_busy_with_a_long_task_or_just_started_is_not_stuck(tmp_path):
    conf = filesystem_queue(tmp_path, waiting=3, age=90)
    busy = liveness.StallWatch(conf=conf, last_sign=lambda: time.time() - 4, stall_seconds=60)
    assert busy(time.time() - 600) is None
    quiet = liveness.StallWatch(conf=conf, last_sign=lambda: None, stall_seconds=60)
    assert quiet(time.time() - 10) is None  # started ten seconds ago


def test_a_worker_with_nothing_waiting_or_a_task_just_queued_is_not_stuck(tmp_path):
    never = liveness.StallWatch(
        conf=filesystem_queue(tmp_path / "empty", waiting=0, age=0),
        last_sign=lambda: None,
        stall_seconds=60,
    )
    assert never(time.time() - 600) is None
    fresh = liveness.StallWatch(
        conf=filesystem_queue(tmp_path / "fresh", waiting=1, age=1),
        last_sign=lambda: time.time() - 600,
        stall_seconds=60,
    )
    assert fresh(time.time() - 600) is None
