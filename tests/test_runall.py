"""``make run`` keeps its processes up: a killed worker (or beat, or web server) is
started again with a pause that grows, the server keeps answering, the log says what
happened and nothing else is noise; only SIGTERM / Ctrl-C stops everything."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from celery import Celery
from django.conf import settings

from memoryhub.engine.queue import celery_queue_settings
from memoryhub.supervisor import Supervisor

REPO_ROOT = Path(__file__).resolve().parent.parent


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


# --- The supervisor -------------------------------------------------------------------------


def test_a_process_that_keeps_failing_is_started_again_with_a_pause_that_doubles(caplog):
    caplog.set_level("INFO", logger="memoryhub.supervisor")
    supervisor = Supervisor(
        {"flaky": [sys.executable, "-c", "raise SystemExit(3)"]},
        first_pause=0.1,
        longest_pause=0.4,
    )
    supervisor.start()
    try:
        wait_for(lambda: supervisor.poll() or supervisor.children[0].restarts >= 4, 20, "restarts")
    finally:
        supervisor.stop()
    pauses = re.findall(r"flaky exited with code 3; starting it again in ([\d.]+) s", caplog.text)
    assert pauses[:4] == ["0.1", "0.2", "0.4", "0.4"]


def test_a_process_its_watch_finds_stuck_is_killed_and_started_again(caplog):
    caplog.set_level("INFO", logger="memoryhub.supervisor")
    asked: list[float] = []

    def watch(started_at: float) -> str | None:
        asked.append(started_at)
        return (
            "took no task while 3 tasks waited in its queue for 61 s" if len(asked) == 1 else None
        )

    supervisor = Supervisor(
        {"worker": [sys.executable, "-c", "import time; time.sleep(60)"]},
        watches={"worker": watch},
        watch_every=0.1,
        first_pause=0.1,
    )
    supervisor.start()
    first = supervisor.children[0].process.pid
    try:
        wait_for(lambda: supervisor.poll() or supervisor.children[0].restarts, 20, "a restart")
    finally:
        supervisor.stop()
    assert not alive(first)
    assert "worker took no task while 3 tasks waited in its queue for 61 s; restarting it." in (
        caplog.text
    )
    assert asked[0] <= time.time()  # told when the process started


def test_stop_ends_every_process_and_what_each_left_behind():
    # A child that starts a grandchild in its own group, as a worker starts its pool.
    script = (
        "import subprocess, sys, time;"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        "time.sleep(60)"
    )
    supervisor = Supervisor({"parent": [sys.executable, "-c", script]})
    supervisor.start()
    pid = supervisor.children[0].process.pid
    wait_for(lambda: _group_members(pid), 10, "the grandchild")
    supervisor.stop()
    assert not alive(pid)
    wait_for(lambda: not _group_members(pid), 5, "the group to be gone")


def _group_members(pgid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,pgid="], capture_output=True, text=True).stdout
    return [int(p) for p, g in (line.split() for line in out.splitlines()) if int(g) == pgid]


# --- runall, for real ---------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def runall(tmp_path):
    """``manage.py runall`` on a free port with a data directory of its own, migrated
    first as ``make run`` does; stopped with SIGTERM afterwards."""
    env = dict(os.environ)
    for name in ("REDIS_URL", "DATABASE_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    port, chat_port = free_port(), free_port()
    env.update(
        MEMORYHUB_DATA_DIR=str(tmp_path),
        MEMORYHUB_PORT=str(port),
        MEMORYHUB_CHAT_PORT=str(chat_port),
        MEMORYHUB_WEB_WORKERS="1",
        MEMORYHUB_WORKER_CONCURRENCY="1",
        MEMORYHUB_WORKER_STALL_SECONDS="4",
        SECRET_KEY=str(settings.SECRET_KEY),
    )
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v", "0"], cwd=REPO_ROOT, env=env, check=True)
    log = tmp_path / "runall.log"
    process = subprocess.Popen(
        [*manage, "runall"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = RunAll(process, log, f"http://127.0.0.1:{port}", tmp_path)
    server.chat_url = f"http://127.0.0.1:{chat_port}/v1"
    try:
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


class RunAll:
    def __init__(self, process, log: Path, url: str, data_dir: Path) -> None:
        self.process, self.log, self.url, self.data_dir = process, log, url, data_dir

    def output(self) -> str:
        return self.log.read_text()

    def pids(self, name: str) -> list[int]:
        return [int(p) for p in re.findall(rf"{name} started \(pid (\d+)\)", self.output())]

    def health(self) -> dict | None:
        try:
            response = httpx.get(f"{self.url}/api/health", timeout=5)
        except httpx.HTTPError:
            return None
        return response.json() if response.status_code == 200 else None


@pytest.mark.integration
def test_a_killed_worker_is_started_again_while_the_server_keeps_answering(runall):
    wait_for(lambda: (h := runall.health()) and h["worker"]["ok"], 60, "a live worker")
    [worker] = runall.pids("worker")
    os.kill(worker, signal.SIGKILL)
    answers = []
    new = None
    deadline = time.monotonic() + 30
    while new is None and time.monotonic() < deadline:
        answers.append(runall.health() is not None)
        pids = runall.pids("worker")
        new = pids[1] if len(pids) > 1 else None
        time.sleep(0.2)
    assert new is not None and new != worker, runall.output()
    assert all(answers)  # the web server answered all along
    assert "worker was killed by SIGKILL; starting it again in 1 s." in runall.output()
    # The new worker answers pings (the health page checks in the background).
    wait_for(lambda: _log_after(runall, "ready.", new), 30, "the new worker to be ready")
    wait_for(lambda: (h := runall.health()) and h["worker"]["ok"], 30, "a live worker again")
    assert runall.process.poll() is None and alive(runall.pids("web")[0])


def _log_after(runall: RunAll, text: str, pid: int) -> bool:
    output = runall.output()
    return text in output[output.index(f"worker started (pid {pid})") :]


@pytest.mark.integration
def test_sigterm_stops_everything_and_the_start_up_log_has_no_noise(runall):
    wait_for(lambda: (h := runall.health()) and h["worker"]["ok"], 60, "a live worker")
    # The OpenAI-compatible endpoint serves on its port; the web server's /v1 says where.
    assert httpx.get(f"{runall.chat_url}/models", timeout=10).status_code == 401
    elsewhere = httpx.get(f"{runall.url}/v1/models", timeout=10)
    assert elsewhere.status_code == 421 and runall.chat_url in elsewhere.json()["error"]["message"]
    # runall became the supervisor, an interpreter without Django, in the same process.
    command = Path(f"/proc/{runall.process.pid}/cmdline").read_bytes().split(b"\0")
    assert command[1:3] == [b"-m", b"memoryhub.supervisor"]
    children = [*(runall.pids(name) for name in ("web", "chat", "worker", "beat"))]
    children = [pid for pids in children for pid in pids]
    runall.process.send_signal(signal.SIGTERM)
    assert runall.process.wait(timeout=30) == 0
    assert not any(alive(pid) for pid in children)
    output = runall.output()
    assert "superuser privileges" not in output
    assert "No hostname was supplied" not in output
    assert f"Control socket listening at {runall.data_dir / 'gunicorn.ctl'}" in output
    assert "starting it again" not in output


@pytest.mark.integration
def test_a_worker_that_takes_no_task_while_its_queue_waits_is_restarted_and_health_says_so(
    runall,
):
    """The worker's pool takes nothing (stopped here; wedged, or starved, in life) while
    tasks wait: health says so, and the supervisor starts it again, which drains the
    queue."""
    wait_for(lambda: (h := runall.health()) and h["worker"]["ok"], 60, "a live worker")
    [worker] = runall.pids("worker")
    pool = _children(worker)
    assert pool, "a prefork worker has pool processes"
    for pid in pool:
        os.kill(pid, signal.SIGSTOP)
    client = Celery("runall-test-client", set_as_current=False)
    client.conf.update(celery_queue_settings(redis_url="", data_dir=runall.data_dir))
    results = [client.send_task("memoryhub.ping") for _ in range(6)]

    stuck = wait_for(
        lambda: (
            (h := runall.health())
            and "took no task" in h["worker"].get("error", "")
            and h["worker"]
        ),
        30,
        "health to say the worker is stuck",
    )
    assert not stuck["ok"] and stuck["queued"] >= 1
    wait_for(lambda: len(runall.pids("worker")) == 2, 30, "the worker started again")
    assert "worker took no task while" in runall.output()
    # What waited in the queue is done by the new worker. The tasks the stuck worker had
    # taken (one per pool process, and one more it prefetched) are lost with it on the
    # filesystem queue, whose catch-ups redo such work.
    folder = runall.data_dir / "queue" / "messages"
    wait_for(lambda: not list(folder.glob("*.celery.msg")), 60, "the queue drained")
    answered = sum(1 for r in results if _answer(r) == "pong")
    assert answered >= len(results) - 2, runall.output()
    wait_for(lambda: (h := runall.health()) and h["worker"]["ok"], 30, "a live worker again")


@pytest.mark.integration
def test_beat_runs_inside_the_worker_and_its_periodic_tasks_run(runall):
    """No process of its own for beat: the worker's forks one, which sends the periodic
    tasks (the undo purge every 10 s) that the worker then runs."""
    wait_for(lambda: (h := runall.health()) and h["worker"]["ok"], 60, "a live worker")
    wait_for(
        lambda: "Sending due task facts-undo-purge" in runall.output(), 40, "beat to send a task"
    )
    wait_for(
        lambda: re.search(r"Task facts\.undo_purge\[[\w-]+\] succeeded", runall.output()),
        30,
        "the worker to run it",
    )
    assert runall.pids("beat") == []
    [worker] = runall.pids("worker")
    assert len(_children(worker)) == 2  # its one pool process and beat


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _answer(result) -> str | None:
    try:
        return result.get(timeout=5)
    except Exception:
        return None
