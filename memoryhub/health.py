"""Health of the parts a running MemoryHub depends on."""

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection

from memoryhub.celery import app as celery_app

# How old an answer about the broker and the workers may be before it is checked again.
QUEUE_CHECK_FRESH_SECONDS = 5.0


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


def check_queue() -> dict[str, Any]:
    """The broker and, when it answers, the workers."""
    broker = check_broker()
    worker = (
        check_worker()
        if broker["ok"]
        else {"ok": False, "workers": [], "error": "broker unreachable"}
    )
    return {"broker": broker, "worker": worker}


class BackgroundCheck:
    """The last answer of a slow check, refreshed on a thread of its own.

    A worker ping waits out its whole timeout for replies, so the health page must not
    run it per request. ``answer()`` returns the last answer at once and, when it is
    older than ``fresh_for`` seconds, starts one new check in the background. Only the
    first call of a process waits, for the first answer. Each process (a forked web
    worker too) checks on its own.
    """

    def __init__(self, check: Callable[[], dict[str, Any]], *, fresh_for: float) -> None:
        self.check = check
        self.fresh_for = fresh_for
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._answer: dict[str, Any] | None = None
        self._at = 0.0
        self._running: threading.Thread | None = None

    def answer(self) -> tuple[dict[str, Any], float]:
        """The last answer and its age in seconds."""
        with self._lock:
            if self._pid != os.getpid():  # forked: the thread and answer were the parent's
                self._pid, self._answer, self._running = os.getpid(), None, None
            stale = self._answer is None or time.monotonic() - self._at > self.fresh_for
            if stale and self._running is None:
                self._running = threading.Thread(
                    target=self._refresh, name="health-check", daemon=True
                )
                self._running.start()
            first = self._running if self._answer is None else None
        if first is not None:
            first.join()
        with self._lock:
            assert self._answer is not None
            return self._answer, time.monotonic() - self._at

    def _refresh(self) -> None:
        try:
            answer = self.check()
        except Exception as exc:  # report, don't crash: this is the health page
            answer = {"error": str(exc)}
        with self._lock:
            self._answer, self._at, self._running = answer, time.monotonic(), None


queue_check = BackgroundCheck(check_queue, fresh_for=QUEUE_CHECK_FRESH_SECONDS)


def health_report() -> dict[str, Any]:
    """Database and sqlite-vec checked now; broker and worker as last checked (at most
    a few seconds ago, with the age of that answer)."""
    queue, age = queue_check.answer()
    report = {"database": check_database(), "vec": check_vec()}
    for part in ("broker", "worker"):
        report[part] = {
            **queue.get(part, {"ok": False, "error": queue.get("error", "not checked")}),
            "checked_seconds_ago": round(age, 1),
        }
    report["status"] = "ok" if all(part["ok"] for part in report.values()) else "degraded"
    return report
