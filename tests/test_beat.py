"""Several celery beats on one Redis (one per machine, say): one schedules the periodic
tasks, the others stand by, and when the scheduling one dies another takes over."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO_ROOT, worker_env

pytestmark = pytest.mark.integration

SENT = "Sending due task"


class Beat:
    def __init__(self, env: dict[str, str], folder: Path, name: str) -> None:
        self.log = folder / f"beat-{name}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memoryhub", "beat", "--loglevel", "INFO",
             "--schedule", str(folder / f"schedule-{name}")],
            cwd=REPO_ROOT, env=env, stdout=self.log.open("w"), stderr=subprocess.STDOUT,
        )  # fmt: skip

    def output(self) -> str:
        return self.log.read_text()

    def sent(self) -> int:
        return self.output().count(SENT)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_of_two_beats_one_schedules_and_the_other_takes_over_when_it_dies(redis_server, tmp_path):
    env = worker_env(
        data_dir=tmp_path,
        redis_url=redis_server.url,
        extra={"MEMORYHUB_BEAT_LEASE_SECONDS": "2", "MEMORYHUB_BACKFILL_EVERY_SECONDS": "1"},
    )
    beats = [Beat(env, tmp_path, name) for name in ("a", "b")]
    try:
        wait_for(lambda: sum(b.sent() for b in beats) >= 6, 60, "periodic tasks sent")
        time.sleep(2)
        leader, other = sorted(beats, key=Beat.sent, reverse=True)
        assert other.sent() == 0, other.output()[-2000:]
        assert "this one stands by" in other.output()
        leader.stop()
        # The lease runs out within 2 s and the other beat checks every 2/3 s.
        wait_for(lambda: other.sent() >= 2, 20, "the other beat to take over")
        assert "this beat schedules the periodic tasks" in other.output()
    finally:
        for beat in beats:
            if beat.proc.poll() is None:
                beat.stop()
