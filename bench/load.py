"""Load: concurrent agents writing and recalling against the server as ``make run``
starts it (``manage.py runall``: web, worker and beat), on the filesystem queue and on
Redis, side by side.

Each agent has its own token and loops for ``--seconds``: a write of a new fact
(``POST /api/memories``) or a recall (``POST /api/recall``) drawn at random. Afterwards
every acknowledged write is looked up in the database (a lost write is one the server
answered 200/201 for and does not hold), and the bench waits for the embedding queue to
drain, reporting how many active facts were still without a vector at the end of the run, 20 s
and 30 s after it, and when the last one got its vector.

Run from the repository root: ``python bench/load.py [--agents 20] [--seconds 60]
[--queues filesystem,redis] [--redis-url redis://127.0.0.1:6379/14]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import REPO_ROOT, bench_env, django_setup, machine_note, revision, temp_data_dir
from bench._facts import FactGenerator
from bench._server import free_port, runall_stack
from bench._tables import Timing, print_table

WRITE_SHARE = 0.6
USERS = 4
DRAIN_LIMIT_SECONDS = 180


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--queues", default="filesystem,redis")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", action="store_true", help="keep the data directories")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child run: one queue, JSON out
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args, args.one)))
        return
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    if set(queues) - {"filesystem", "redis"}:
        raise SystemExit("--queues takes filesystem and/or redis")
    print(
        f"load at {revision()}, {machine_note()}; {args.agents} agents for {args.seconds:g} s, "
        f"{WRITE_SHARE:.0%} writes"
    )
    results = {}
    for queue in queues:
        # Each queue in a process of its own: Django is set up once per process.
        child = subprocess.run(
            [sys.executable, __file__, *(argv or sys.argv[1:]), "--one", queue],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        )
        if child.returncode != 0:
            print(child.stdout[-2000:], child.stderr[-4000:], file=sys.stderr)
            raise SystemExit(f"the {queue} run failed")
        results[queue] = json.loads(child.stdout.strip().splitlines()[-1])
    report(results)


def report(results: dict[str, dict]) -> None:
    print_table(
        "Requests by operation (latency in ms)",
        ["queue", "operation", "requests", "per s", "p50", "p95", "statuses"],
        [
            [queue, op, t["n"], t["rate"], t["p50"], t["p95"], t["statuses"]]
            for queue, r in results.items()
            for op, t in r["operations"].items()
        ],
    )
    print_table(
        "Errors, lost writes and embedding lag",
        [
            "queue",
            "errors",
            "acknowledged writes",
            "lost",
            "unembedded at end",
            "at +20 s",
            "at +30 s",
            "all embedded after (s)",
        ],
        [
            [
                queue,
                r["errors"],
                r["acknowledged"],
                r["lost"],
                r["unembedded"]["end"],
                r["unembedded"]["20"],
                r["unembedded"]["30"],
                r["drained_after"],
            ]
            for queue, r in results.items()
        ],
    )


# --- One queue ----------------------------------------------------------------------------


def run_one(args: argparse.Namespace, queue: str) -> dict:
    with temp_data_dir(f"memoryhub-bench-load-{queue}-", keep=args.keep) as data_dir:
        extra = {"REDIS_URL": args.redis_url} if queue == "redis" else {}
        if queue == "redis":
            _redis_flush(args.redis_url)
        port = free_port()
        env = bench_env(data_dir, MEMORYHUB_PORT=str(port), LOG_LEVEL="WARNING", **extra)
        django_setup(env)
        tokens = _agent_tokens(args.agents)
        with runall_stack(env, data_dir / "runall.log") as server:
            base = f"http://127.0.0.1:{port}"
            _wait_for(base, server)
            outcome = _drive(base, tokens, args)
            outcome.update(_check_and_drain(outcome.pop("written")))
        if queue == "redis":
            _redis_flush(args.redis_url)
        return outcome


def _redis_flush(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def _agent_tokens(agents: int) -> list[str]:
    """One token per agent, the agents spread over a few users."""
    from django.contrib.auth import get_user_model

    from teams.services import Actor, agent_token_create

    users = [
        get_user_model().objects.create_user(username=f"load{i}", password=None)
        for i in range(USERS)
    ]
    tokens = []
    for n in range(agents):
        actor = Actor(user=users[n % USERS])
        _, secret = agent_token_create(actor=actor, name=f"agent{n}", scopes=["read", "write"])
        tokens.append(secret)
    return tokens


def _wait_for(base: str, server: subprocess.Popen) -> None:
    import httpx

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"runall exited with code {server.returncode}")
        try:
            httpx.get(base + "/api/memories", timeout=5)  # any answer: 401 here
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise RuntimeError("the server did not answer within 90 s")


def _drive(base: str, tokens: list[str], args: argparse.Namespace) -> dict:
    import httpx

    generator = FactGenerator(seed=args.seed)
    facts = iter(generator.unique_facts(int(args.agents * args.seconds * 20)))
    questions = generator.questions(500)
    lock = threading.Lock()
    seconds: dict[str, list[float]] = defaultdict(list)
    statuses: dict[str, Counter] = defaultdict(Counter)
    written: list[tuple[int, str, str]] = []  # (id, outcome, content sent)
    deadline = time.monotonic() + args.seconds

    def agent(token: str, seed: int) -> None:
        rng = random.Random(seed)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            while time.monotonic() < deadline:
                if rng.random() < WRITE_SHARE:
                    op, path = "write", "/api/memories"
                    with lock:
                        body = next(facts)
                else:
                    op, path = "recall", "/api/recall"
                    body = {"query": rng.choice(questions)}
                start = time.perf_counter()
                try:
                    response = client.post(path, json=body)
                    status = str(response.status_code)
                except httpx.HTTPError as exc:
                    response, status = None, type(exc).__name__
                elapsed = time.perf_counter() - start
                with lock:
                    seconds[op].append(elapsed)
                    statuses[op][status] += 1
                    if (
                        op == "write"
                        and response is not None
                        and response.status_code in (200, 201)
                    ):
                        answer = response.json()
                        written.append((answer["id"], answer.get("outcome", ""), body["content"]))

    threads = [threading.Thread(target=agent, args=(token, n)) for n, token in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    operations = {}
    for op, values in seconds.items():
        timing = Timing.of(values)
        operations[op] = {
            "n": timing.n,
            "rate": timing.n / args.seconds,
            "p50": timing.p50,
            "p95": timing.p95,
            "statuses": " ".join(f"{s}:{n}" for s, n in sorted(statuses[op].items())),
        }
    errors = sum(
        n for counts in statuses.values() for s, n in counts.items() if not s.startswith("2")
    )
    return {"operations": operations, "errors": errors, "written": written}


def _check_and_drain(written: list[tuple[int, str, str]]) -> dict:
    """Lost writes, then the embedding lag: polled until every fact has a vector."""
    from django.db import close_old_connections

    from facts.models import Fact
    from facts.services.embedding import facts_needing_embedding

    close_old_connections()
    present = set(
        Fact.objects.filter(pk__in={pk for pk, _, _ in written}).values_list("pk", flat=True)
    )
    # A merge gives a fact the incoming statement and keeps the one it held as an
    # archived parent: every acknowledged statement is still stored somewhere.
    contents = [content for _, _, content in written]
    stored = set(Fact.objects.filter(content__in=contents).values_list("content", flat=True))
    lost = sum(1 for pk, _, content in written if pk not in present or content not in stored)
    end = time.monotonic()
    marks: dict[str, int | None] = {"end": None, "20": None, "30": None}
    drained_after = None
    while True:
        close_old_connections()
        # Active facts, those recall reads: a merge's archived wordings wait for the
        # backfill.
        waiting = facts_needing_embedding().filter(status="active").count()
        after = time.monotonic() - end
        if marks["end"] is None:
            marks["end"] = waiting
        for mark in ("20", "30"):
            if marks[mark] is None and after >= int(mark):
                marks[mark] = waiting
        if waiting == 0:
            drained_after = round(after, 1)
            for mark in ("20", "30"):
                marks[mark] = 0 if marks[mark] is None else marks[mark]
            break
        if after > DRAIN_LIMIT_SECONDS:
            break
        time.sleep(0.5)
    return {
        "acknowledged": len(written),
        "lost": lost,
        "unembedded": marks,
        "drained_after": drained_after if drained_after is not None else f">{DRAIN_LIMIT_SECONDS}",
    }


if __name__ == "__main__":
    main()
