"""Keep a few long-running processes up: a process that exits is started again after a
pause that doubles with each quick failure, and only ``stop()`` ends them all.

Used by ``manage.py runall`` for the web server, the chat endpoint and the Celery worker
(with celery beat inside it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)

FIRST_PAUSE_SECONDS = 1.0
LONGEST_PAUSE_SECONDS = 30.0
# A process that ran this long before exiting is started again after the first pause.
STABLE_AFTER_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 15.0
# How often a child's watch is asked whether it is stuck.
WATCH_EVERY_SECONDS = 5.0

# Given when a child started (epoch seconds), a reason to restart it, or None.
Watch = Callable[[float], str | None]


@dataclass
class Child:
    """One supervised process and its restart bookkeeping."""

    name: str
    command: Sequence[str]
    pause: float
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    started_wall: float = 0.0
    restart_at: float | None = None
    restarts: int = 0
    watch: Watch | None = None
    watched_at: float = 0.0


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _kill_group(pid: int, sig: signal.Signals) -> None:
    """Signal the process group a child leads (its own session): its pool processes
    or web workers too."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


class Supervisor:
    """Start the named commands, restart any that exits or that its watch finds stuck,
    stop them all on ``stop()``."""

    def __init__(
        self,
        commands: dict[str, Sequence[str]],
        *,
        watches: dict[str, Watch] | None = None,
        watch_every: float = WATCH_EVERY_SECONDS,
        first_pause: float = FIRST_PAUSE_SECONDS,
        longest_pause: float = LONGEST_PAUSE_SECONDS,
        stable_after: float = STABLE_AFTER_SECONDS,
    ) -> None:
        watches = watches or {}
        self.children = [
            Child(name, command, first_pause, watch=watches.get(name))
            for name, command in commands.items()
        ]
        self.watch_every = watch_every
        self.first_pause, self.longest_pause = first_pause, longest_pause
        self.stable_after = stable_after
        self.stopping = False

    def start(self) -> None:
        for child in self.children:
            self._spawn(child)

    def _spawn(self, child: Child) -> None:
        # Its own session: Ctrl-C reaches only the supervisor, which stops each child once.
        child.process = subprocess.Popen(child.command, start_new_session=True)
        child.started_at = child.watched_at = time.monotonic()
        child.started_wall = time.time()
        child.restart_at = None
        logger.info("%s started (pid %d).", child.name, child.process.pid)

    def poll(self) -> None:
        """Notice exits and start again the children whose pause is over."""
        now = time.monotonic()
        for child in self.children:
            process = child.process
            if child.restart_at is None and process is not None:
                code = process.poll()
                if code is None:
                    self._watch(child, now)
                    continue
                # Whatever it left behind (pool processes, web workers) goes with it.
                _kill_group(process.pid, signal.SIGKILL)
                if now - child.started_at >= self.stable_after:
                    child.pause = self.first_pause
                child.restart_at = now + child.pause
                logger.warning(
                    "%s %s; starting it again in %g s.",
                    child.name,
                    _exit_reason(code),
                    child.pause,
                )
                child.pause = min(child.pause * 2, self.longest_pause)
            if child.restart_at is not None and now >= child.restart_at and not self.stopping:
                child.restarts += 1
                self._spawn(child)

    def _watch(self, child: Child, now: float) -> None:
        """Ask a running child's watch, now and then, whether it is stuck; kill a stuck
        one (its whole group), to be started again as any child that exits."""
        if child.watch is None or now - child.watched_at < self.watch_every:
            return
        child.watched_at = now
        try:
            reason = child.watch(child.started_wall)
        except Exception:  # a watch that fails must not stop the supervising
            logger.exception("Could not tell whether %s is stuck", child.name)
            return
        if reason is not None and child.process is not None:
            logger.warning("%s %s; restarting it.", child.name, reason)
            _kill_group(child.process.pid, signal.SIGKILL)

    def run(self, *, interval: float = 0.2) -> None:
        """Supervise until ``stopping`` is set (by a signal handler), then stop all."""
        try:
            while not self.stopping:
                self.poll()
                time.sleep(interval)
        finally:
            self.stop()

    def stop(self) -> None:
        """SIGTERM every child (a worker finishes its tasks, the web server its requests),
        wait for them, SIGKILL what is left."""
        self.stopping = True
        running = [c.process for c in self.children if c.process and c.process.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            _kill_group(process.pid, signal.SIGKILL)
            process.wait()


# --- Run as a process of its own -----------------------------------------------------------

# The plan ``manage.py runall`` hands over when it becomes the supervisor: JSON with the
# commands by name, the log level, and for the worker's stall watch its beacon file, the
# queue's broker settings and the stall bound.
PLAN_ENV = "MEMORYHUB_SUPERVISOR_PLAN"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def main() -> None:
    """Supervise the plan in ``MEMORYHUB_SUPERVISOR_PLAN`` until SIGINT or SIGTERM.

    ``manage.py runall`` replaces itself with this (``python -m memoryhub.supervisor``)
    once it has read the settings: supervising needs neither Django nor the apps, which
    would hold 75 MB for as long as the server runs."""
    import json
    import sys
    from types import FrameType, SimpleNamespace

    plan = json.loads(os.environ.pop(PLAN_ENV))
    logging.basicConfig(level=plan["log_level"], format=LOG_FORMAT, stream=sys.stdout)
    watches: dict[str, Watch] = {}
    stall = plan.get("stall")
    if stall:
        from pathlib import Path

        from memoryhub.engine import liveness

        beacon = Path(stall["beacon"])
        watches[stall["name"]] = liveness.StallWatch(
            conf=SimpleNamespace(**stall["broker"]),
            last_sign=lambda: liveness.beacon_signed(beacon),
            stall_seconds=stall["seconds"],
        )
    supervisor = Supervisor(plan["commands"], watches=watches)

    def stop(signum: int, frame: FrameType | None) -> None:
        supervisor.stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    supervisor.start()
    supervisor.run()


if __name__ == "__main__":
    main()
