"""Signs of life of the worker, and of the queue it drains.

A worker can be alive (it answers pings) and still take no task: its pool wedged, its
processes stopped. What shows it is the queue waiting while no task starts. So the
worker's processes leave a sign at every task's start and end, and every few seconds
while a task runs:

- on the beacon file named by ``MEMORYHUB_WORKER_BEACON`` (``runall`` names one for the
  worker it supervises, and restarts that worker when the queue has waited
  ``MEMORYHUB_WORKER_STALL_SECONDS`` with no sign on it);
- in the shared cache, which ``/api/health`` reads to say when the worker last took a
  task.

:func:`queue_waiting` counts the tasks waiting in the default queue, on either broker.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from celery import signals
from django.core.cache import cache

logger = logging.getLogger(__name__)

BEACON_ENV = "MEMORYHUB_WORKER_BEACON"
LAST_TASK_KEY = "memoryhub:worker:last-task"
# A running task leaves a sign this often, far below any stall bound.
BUSY_SIGN_SECONDS = 5.0
# The shared cache hears of a process's signs at most this often.
CACHE_EVERY_SECONDS = 1.0
DEFAULT_QUEUE = "celery"
# The lists kombu keeps a Redis queue in: one per priority step.
_REDIS_PRIORITY_SEPARATOR = "\x06\x16"
_REDIS_PRIORITY_STEPS = (0, 3, 6, 9)


class _Signs:
    """This process's signs of life: at each task's start and end, and while tasks run,
    every ``BUSY_SIGN_SECONDS`` from a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._cached_at = 0.0

    def task_started(self, **_: Any) -> None:
        with self._lock:
            self._running += 1
            if self._thread is None or self._pid != os.getpid():  # none yet, or forked
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._while_busy, daemon=True)
                self._thread.start()
        self.sign()

    def task_ended(self, **_: Any) -> None:
        with self._lock:
            self._running = max(0, self._running - 1)
        self.sign()

    def _while_busy(self) -> None:
        while True:
            time.sleep(BUSY_SIGN_SECONDS)
            if self._running:
                self.sign()

    def sign(self) -> None:
        beacon = os.environ.get(BEACON_ENV)
        if beacon:
            try:
                Path(beacon).touch()
            except OSError as exc:  # a full disk must not fail the task
                logger.warning("Could not leave the worker's sign of life at %s: %s", beacon, exc)
        now = time.time()
        if now - self._cached_at >= CACHE_EVERY_SECONDS:
            self._cached_at = now
            try:
                cache.set(LAST_TASK_KEY, now, timeout=None)
            except Exception:  # Redis down: health says nothing of the last task meanwhile
                logger.debug("The shared cache did not take the worker's sign of life")


_signs = _Signs()


def connect() -> None:
    """Leave signs from this process's tasks (done once, when the engine app is ready)."""
    signals.task_prerun.connect(_signs.task_started, weak=False, dispatch_uid="liveness-start")
    signals.task_postrun.connect(_signs.task_ended, weak=False, dispatch_uid="liveness-end")


def last_task_at() -> float | None:
    """When a worker last started or ended a task, or was busy with one (epoch seconds);
    None when unknown (no task yet, or the cache is unreachable)."""
    try:
        value = cache.get(LAST_TASK_KEY)
    except Exception:
        return None
    return value if isinstance(value, float) else None


@dataclass(frozen=True, slots=True)
class Waiting:
    """Tasks waiting in the default queue, and how long the oldest has (when the broker
    tells: the filesystem queue does, Redis keeps no time)."""

    count: int
    oldest_seconds: float | None


def queue_waiting(conf: Any) -> Waiting:
    """The tasks waiting in the default queue of the Celery configuration ``conf``.
    Raises what the broker raises when it cannot be read."""
    url = conf.broker_url or ""
    if url.startswith("filesystem://"):
        folder = Path(conf.broker_transport_options["data_folder_in"])
        times = [
            entry.stat().st_mtime
            for entry in folder.glob(f"*.{DEFAULT_QUEUE}.msg")
            if entry.is_file()
        ]
        oldest = time.time() - min(times) if times else None
        return Waiting(len(times), None if oldest is None else max(0.0, oldest))
    import redis

    options = conf.broker_transport_options or {}
    client = redis.Redis.from_url(
        url,
        socket_timeout=options.get("socket_timeout", 2.0),
        socket_connect_timeout=options.get("socket_connect_timeout", 2.0),
    )
    try:
        names = [
            DEFAULT_QUEUE if step == 0 else f"{DEFAULT_QUEUE}{_REDIS_PRIORITY_SEPARATOR}{step}"
            for step in _REDIS_PRIORITY_STEPS
        ]
        with client.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.llen(name)
            count = sum(pipe.execute())
    finally:
        client.close()
    return Waiting(count, None)


def beacon_signed(path: Path) -> float | None:
    """When the last sign was left on the beacon at ``path`` (epoch seconds), if ever."""
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class StallWatch:
    """Is the worker stuck? Stuck means tasks have waited in the queue for
    ``stall_seconds`` on end while the worker left no sign of life (took no task, ran
    none) for as long. A worker busy with a long task leaves signs and is never stuck;
    an idle worker with an empty queue neither. ``last_sign`` tells when the worker
    last left one (epoch seconds), if known."""

    def __init__(
        self, *, conf: Any, last_sign: Callable[[], float | None], stall_seconds: float
    ) -> None:
        self.conf, self.last_sign, self.stall_seconds = conf, last_sign, stall_seconds
        self._waiting_since: float | None = None
        self._looked_at = 0.0

    def __call__(self, started_at: float = 0.0) -> str | None:
        """A reason to call the worker started at ``started_at`` (epoch seconds; 0 when
        unknown) stuck, or None."""
        try:
            waiting = queue_waiting(self.conf)
        except Exception:  # the broker is down: nothing can be taken, nobody is to blame
            self._waiting_since = None
            return None
        now = time.time()
        if not waiting.count or now - self._looked_at > self.stall_seconds:
            # Empty, or not looked at for so long that it may have emptied meanwhile.
            self._waiting_since = None
        self._looked_at = now
        if not waiting.count:
            return None
        if self._waiting_since is None:
            self._waiting_since = now - (waiting.oldest_seconds or 0.0)
        quiet = now - max(self.last_sign() or 0.0, started_at)
        if now - self._waiting_since < self.stall_seconds or quiet < self.stall_seconds:
            return None
        waited = now - self._waiting_since
        return (
            f"took no task while {waiting.count} "
            f"task{'s' if waiting.count != 1 else ''} waited in its queue for {waited:.0f} s"
        )
