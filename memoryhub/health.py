"""Health of the parts a running MemoryHub depends on."""

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection

from memoryhub.celery import app as celery_app
from memoryhub.engine import liveness

# How old an answer about the broker and the workers may be before it is checked again.
QUEUE_CHECK_FRESH_SECONDS = 5.0
# An answer this much older than that comes from a check that never returned: it says
# nothing of now, and the page says so instead of repeating it.
QUEUE_CHECK_GRACE_SECONDS = 10.0


def _redact(url: str) -> str:
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "engine": connection.vendor}
    except Exception as exc:  # report, don't crash: this is the health page
        return {"ok": False, "engine": connection.vendor, "error": str(exc)}


def check_vec() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                if row is None:
                    return {"ok": False, "error": "the pgvector extension is not installed"}
            else:
                cursor.execute("SELECT vec_version()")
                row = cursor.fetchone()
        return {"ok": True, "version": row[0]}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def check_broker() -> dict[str, Any]:
    url = celery_app.conf.broker_url or ""
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=2)
        return {"ok": True, "transport": url.split("://", 1)[0], "url": _redact(url)}
    except Exception as exc:
        return {
            "ok": False,
            "transport": url.split("://", 1)[0],
            "url": _redact(url),
            "error": str(exc),
        }


def check_worker(timeout: float = 1.0) -> dict[str, Any]:
    try:
        replies = celery_app.control.ping(timeout=timeout) or []
    except Exception as exc:
        return {"ok": False, "workers": [], "error": str(exc)}
    workers = sorted(name for reply in replies for name in reply)
    if not workers:
        return {"ok": False, "workers": [], "error": "no worker answered"}
    return {"ok": True, "workers": workers}


_stuck = liveness.StallWatch(
    conf=celery_app.conf,
    last_sign=liveness.last_task_at,
    stall_seconds=settings.MEMORYHUB_WORKER_STALL_SECONDS,
)


def check_progress() -> dict[str, Any]:
    """Whether the workers take the tasks that wait: how many wait, since when, and when
    a worker last started, ended or ran one. Stuck (``ok`` false) when tasks have waited
    ``MEMORYHUB_WORKER_STALL_SECONDS`` with no task taken meanwhile."""
    try:
        waiting = liveness.queue_waiting(celery_app.conf)
    except Exception as exc:
        return {"queued": None, "error": f"the queue could not be read: {exc}"}
    last = liveness.last_task_at()
    progress: dict[str, Any] = {
        "queued": waiting.count,
        "oldest_queued_seconds": None
        if waiting.oldest_seconds is None
        else round(waiting.oldest_seconds, 1),
        "last_task_seconds_ago": None if last is None else round(max(0.0, time.time() - last), 1),
    }
    stuck = _stuck()
    if stuck is not None:
        progress["stuck"] = f"the worker {stuck}"
    return progress


def check_queue() -> dict[str, Any]:
    """The broker and, when it answers, the workers and whether they take tasks."""
    broker = check_broker()
    if not broker["ok"]:
        return {
            "broker": broker,
            "worker": {"ok": False, "workers": [], "error": "broker unreachable"},
        }
    worker = {**check_worker(), **check_progress()}
    if "stuck" in worker:
        worker["ok"] = False
        worker["error"] = worker.pop("stuck")
    return {"broker": broker, "worker": worker}


class BackgroundCheck:
    """The last answer of a slow check, refreshed on a thread of its own.

    A worker ping waits out its whole timeout for replies, so the health page must not
    run it per request. ``answer()`` returns the last answer at once and, when it is
    older than ``fresh_for`` seconds, starts one new check in the background. A call
    that has no answer, or one older than ``fresh_for + grace`` (nobody asked for a
    while), waits up to ``grace`` seconds for the new one; a check that takes longer
    hangs, and its age says so. Each process (a forked web worker too) checks on its own.
    """

    def __init__(
        self, check: Callable[[], dict[str, Any]], *, fresh_for: float, grace: float = 10.0
    ) -> None:
        self.check = check
        self.fresh_for = fresh_for
        self.grace = grace
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._answer: dict[str, Any] | None = None
        self._at = 0.0
        self._running: threading.Thread | None = None
        self._started = 0.0

    def answer(self, *, wait: bool = True) -> tuple[dict[str, Any] | None, float]:
        """The last answer and its age in seconds (for a first check that has not
        answered yet, an error and how long it has run). With ``wait`` false it never
        waits: no answer yet is None, with how long the check has run."""
        with self._lock:
            if self._pid != os.getpid():  # forked: the thread and answer were the parent's
                self._pid, self._answer, self._running = os.getpid(), None, None
            now = time.monotonic()
            age = None if self._answer is None else now - self._at
            if (age is None or age > self.fresh_for) and self._running is None:
                self._started = now
                self._running = threading.Thread(
                    target=self._refresh, name="health-check", daemon=True
                )
                self._running.start()
            too_old = age is None or age > self.fresh_for + self.grace
            waiting = self._running if too_old and wait else None
        if waiting is not None:
            waiting.join(timeout=self.grace)
        with self._lock:
            now = time.monotonic()
            if self._answer is None:
                if not wait:
                    return None, now - self._started
                return {"error": "the check has not answered yet"}, now - self._started
            return self._answer, now - self._at

    def running_for(self) -> float | None:
        """How long the check under way has run (None: none is under way)."""
        with self._lock:
            if self._running is None or self._pid != os.getpid():
                return None
            return time.monotonic() - self._started

    def _refresh(self) -> None:
        try:
            answer = self.check()
        except Exception as exc:  # report, don't crash: this is the health page
            answer = {"error": str(exc)}
        with self._lock:
            self._answer, self._at, self._running = answer, time.monotonic(), None


queue_check = BackgroundCheck(
    check_queue, fresh_for=QUEUE_CHECK_FRESH_SECONDS, grace=QUEUE_CHECK_GRACE_SECONDS
)


def _queue_parts(queue: dict[str, Any], age: float) -> dict[str, dict[str, Any]]:
    """The broker's and the workers' parts of an answer of ``queue_check`` ``age``
    seconds old: one older than a check may take says the check hangs."""
    parts = {}
    too_old = age > QUEUE_CHECK_FRESH_SECONDS + QUEUE_CHECK_GRACE_SECONDS
    for part in ("broker", "worker"):
        parts[part] = {
            **queue.get(part, {"ok": False, "error": queue.get("error", "not checked")}),
            "checked_seconds_ago": round(age, 1),
        }
        if too_old:
            parts[part]["ok"] = False
            parts[part]["error"] = (
                f"no answer for {age:.0f} s: the check of the broker and the workers has "
                "not returned (one of them hangs)"
            )
    return parts


def health_report() -> dict[str, Any]:
    """Database and sqlite-vec checked now; broker and worker as last checked (at most
    a few seconds ago, with the age of that answer)."""
    queue, age = queue_check.answer()
    report = {"database": check_database(), "vec": check_vec(), **_queue_parts(queue, age)}
    report["status"] = "ok" if all(part["ok"] for part in report.values()) else "degraded"
    return report


def queue_glance() -> dict[str, Any]:
    """The broker and the workers as last checked, for a page that must not wait on
    them. ``checking`` (and no parts) while there is no answer to show yet: the first
    check, or a new one begun because the last answer is too old to say anything of now
    (nobody asked for a while), has not answered within its grace; a check still out
    after that hangs, and the parts say so."""
    queue, age = queue_check.answer(wait=False)
    running = queue_check.running_for()
    stale = age > QUEUE_CHECK_FRESH_SECONDS + QUEUE_CHECK_GRACE_SECONDS
    if queue is None or (stale and running is not None and running < QUEUE_CHECK_GRACE_SECONDS):
        return {"checking": True}
    return {"checking": False, **_queue_parts(queue, age)}
