"""A gunicorn server on 127.0.0.1, serving MemoryHub as ``make run`` does."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench._env import REPO_ROOT


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn_server(
    env: dict[str, str], *, workers: int = 1, threads: int = 4, log_path: Path | None = None
) -> Iterator[str]:
    """Serve MemoryHub with gunicorn (as ``make run`` does, one worker) and yield its base
    URL once it answers; stop it on exit."""
    import httpx

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "memoryhub.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--timeout",
        "300",
    ]
    base = f"http://127.0.0.1:{port}"
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(log_path, "ab")) if log_path else subprocess.DEVNULL
        # Its own session, so stopping it reaches its worker too and nothing else.
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
        stack.callback(stop_process_group, process)
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"gunicorn exited with code {process.returncode}"
                    + (f"; see {log_path}" if log_path else "")
                )
            # Any answer will do (401 here): /api/health would wait on a worker ping.
            try:
                httpx.get(base + "/api/memories", timeout=5)
                break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not answer within 60 s")
            time.sleep(0.2)
        try:
            yield base
        except Exception:
            if log_path:
                # The temp dir goes with the server: show why it failed while we can.
                tail = log_path.read_text(errors="replace").splitlines()[-40:]
                print("\n".join(["--- gunicorn log, last lines ---", *tail]), file=sys.stderr)
            raise


@contextlib.contextmanager
def runall_stack(
    env: dict[str, str], log_path: Path, *, cwd: Path = REPO_ROOT
) -> Iterator[subprocess.Popen]:
    """``manage.py runall`` of the checkout at ``cwd`` (web, chat endpoint, worker), as
    ``make run`` starts it, logging to ``log_path``; stopped with its children on exit."""
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runall"],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            yield server
        finally:
            stop_process_group(server)


def stop_process_group(process: subprocess.Popen) -> None:
    """Stop a process started in its own session, with its children."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
