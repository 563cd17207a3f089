"""Latency of ``GET /api/health`` with a live worker: every part checked on each request
(the baseline, as before) against the broker and workers answered from the last
background check.

Run from the repository root: ``python bench/health.py [--requests N]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import REPO_ROOT, bench_env, django_setup, machine_note, revision, temp_data_dir
from bench._server import stop_process_group
from bench._tables import Timing, print_table


def timed_calls(call, n: int) -> Timing:
    seconds = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return Timing.of(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200, help="calls of the cached page")
    parser.add_argument("--baseline-requests", type=int, default=10)
    args = parser.parse_args()

    with temp_data_dir("memoryhub-bench-health-") as data_dir:
        env = bench_env(data_dir)
        django_setup(env)
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--pool", "solo"],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            from django.test import Client

            from memoryhub import health

            deadline = time.monotonic() + 60
            while not health.check_worker()["ok"]:
                if time.monotonic() > deadline:
                    sys.exit("the worker did not answer within 60 s")
            client = Client()

            def every_part_now() -> None:
                # What the page did before: each part checked on the request, the worker
                # ping waiting out its two-second timeout for replies.
                health.check_database()
                health.check_vec()
                health.check_broker()
                health.check_worker(timeout=2.0)

            def page() -> None:
                body = client.get("/api/health", HTTP_HOST="127.0.0.1").json()
                assert body["worker"]["ok"], body

            page()  # the first call of a process waits for the first check
            before = timed_calls(every_part_now, args.baseline_requests)
            after = timed_calls(page, args.requests)
        finally:
            stop_process_group(worker)

    print_table(
        f"GET /api/health with one live worker (filesystem queue), {machine_note()}, "
        f"at {revision()}",
        ["health page", "requests", "p50 ms", "p95 ms", "mean ms"],
        [
            ["every part checked per request", before.n, before.p50, before.p95, before.mean],
            ["queue answered from the background check", after.n, after.p50, after.p95, after.mean],
        ],
    )


if __name__ == "__main__":
    main()
