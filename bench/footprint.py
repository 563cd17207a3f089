"""Footprint: the memory of the default stack as ``make run`` starts it, after a fixed load.

    .venv/bin/python bench/footprint.py [--baseline REV] [--env NAME=VALUE]
        [--writes 30] [--recalls 10] [--burst 120] [--clients 4] [--keep]

The stack is started as ``make run`` starts it (``migrate``, ``rebuild_fact_keys``,
``collectstatic``, ``ensure_admin``, then ``manage.py runall``: the gunicorn web server,
the OpenAI-compatible chat endpoint, the Celery worker and celery beat) on free ports, in
a temporary data directory, on the embedded defaults (SQLite and the filesystem queue).
Then a fixed load, each request timed:

- ``--writes`` facts written one after another (``POST /api/memories``), then
  ``--recalls`` questions (``POST /api/recall``, hybrid: the question is embedded);
- one wiki page saved (``PUT /api/wiki``: the injection scanner and its learned pass);
- one CodeGraph scan of a copy of this checkout's ``codegraph/`` folder, waited for;
- a burst of ``--burst`` requests (60% writes, 40% recalls) from ``--clients`` clients at
  once, whose rate is the stack's throughput.

Once the worker has embedded every fact and the stack has been idle a few seconds, each
process of the stack is listed with its PSS (proportional set size: a page shared by n
processes counts 1/n in each, so the column adds up to what the stack costs) and its USS
(the pages no other process shares), read from ``/proc/PID/smaps_rollup``, and the total.
A shared library's pages are divided among every process on the machine that maps them,
so other Python processes of the same environment lower the PSS figures a little from
run to run; the USS column does not move with them.

``--env NAME=VALUE`` sets a variable for this checkout's stack alone (say
``MEMORYHUB_WEB_WORKERS=1``), to weigh a setting against the baseline's defaults.

``--baseline REV`` also measures the commit REV (``HEAD~1`` when given no value), checked
out into a temporary git worktree and run with the same load and the same interpreter,
and prints its figures beside this checkout's. The two run one after the other: compare
their timings as ratios, and only on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import REPO_ROOT, bench_env, machine_note, revision, temp_data_dir
from bench._facts import FactGenerator
from bench._server import free_port, runall_stack
from bench._tables import Timing, print_table

WRITE_SHARE = 0.6
# How long the stack is left alone after the load before its memory is read.
SETTLE_SECONDS = 5.0
START_LIMIT_SECONDS = 120
DRAIN_LIMIT_SECONDS = 300

# Run in the measured checkout (cwd), so its own code answers: a user with an agent
# token, printed as JSON.
_MAKE_TOKEN = """
import json, django
django.setup()
from django.contrib.auth import get_user_model
from teams.services import Actor, agent_token_create
user = get_user_model().objects.create_user(username="footprint", password=None)
_, secret = agent_token_create(actor=Actor(user=user), name="footprint", scopes=["read", "write"])
print(json.dumps({"secret": secret}))
"""
# Active facts still without a vector (the worker's embedding queue).
_UNEMBEDDED = """
import django
django.setup()
from facts.services.embedding import facts_needing_embedding
print(facts_needing_embedding().filter(status="active").count())
"""

WIKI_PAGE = """# Deploying the billing service

The billing service deploys from the main branch through the pipeline. Before a deploy,
check that the migrations of the release apply on a copy of production data, and that the
feature flags of unfinished work are off.

## Rollback

A failed deploy is rolled back by redeploying the previous release tag. The database is
never rolled back: every migration is written so the previous release still runs on it.

## Contacts

The payments team owns the service; the on-call engineer of the week answers pages about it.
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline",
        nargs="?",
        const="HEAD~1",
        help="also measure this commit (default HEAD~1) and show it beside this checkout",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for this checkout's stack only (repeatable), to weigh one against "
        "the baseline's defaults",
    )
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--recalls", type=int, default=10)
    parser.add_argument("--burst", type=int, default=120, help="requests of the burst")
    parser.add_argument("--clients", type=int, default=4, help="clients of the burst")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the data directories")
    return parser.parse_args(argv)


@dataclass
class Proc:
    """One process of the stack and its memory, in MB."""

    role: str
    pid: int
    pss: float
    uss: float


@dataclass
class Run:
    """What one checkout measured."""

    label: str
    processes: list[Proc] = field(default_factory=list)
    timings: dict[str, Timing] = field(default_factory=dict)
    statuses: dict[str, Counter] = field(default_factory=dict)
    burst_rate: float = 0.0
    scan_seconds: float = 0.0


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"footprint at {revision()}, {machine_note()}")
    runs = []
    if args.baseline:
        with baseline_checkout(args.baseline) as (tree, label):
            runs.append(measure(tree, label, args))
    settings = dict(item.split("=", 1) for item in args.env)
    label = f"this checkout ({revision()}{''.join(f', {item}' for item in args.env)})"
    runs.append(measure(REPO_ROOT, label, args, settings))
    report(runs)


@contextlib.contextmanager
def baseline_checkout(rev: str) -> Iterator[tuple[Path, str]]:
    """``rev`` checked out (detached) into a temporary worktree, removed afterwards."""
    commit = _git("rev-parse", "--short", rev).strip()
    parent = Path(tempfile.mkdtemp(prefix="memoryhub-footprint-baseline-"))
    tree = parent / "tree"
    _git("worktree", "add", "--detach", str(tree), commit)
    try:
        yield tree, f"{rev} ({commit})"
    finally:
        _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(parent, ignore_errors=True)


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout


# --- One checkout -------------------------------------------------------------------------


def measure(
    tree: Path, label: str, args: argparse.Namespace, settings: dict[str, str] | None = None
) -> Run:
    print(f"\n== {label}", flush=True)
    run = Run(label)
    with temp_data_dir("memoryhub-bench-footprint-", keep=args.keep) as data_dir:
        source = data_dir / "source"
        shutil.copytree(
            REPO_ROOT / "codegraph", source, ignore=shutil.ignore_patterns("__pycache__")
        )
        port, chat_port = free_port(), free_port()
        env = bench_env(
            data_dir,
            MEMORYHUB_PORT=str(port),
            MEMORYHUB_CHAT_PORT=str(chat_port),
            MEMORYHUB_ADMIN_PASSWORD="footprint-admin",
            CODEGRAPH_ALLOWED_ROOTS=str(source),
            **(settings or {}),
        )

        def manage(*command: str) -> str:
            return _in_tree(tree, env, "manage.py", *command)

        # As `make run` prepares the data directory.
        manage("migrate", "--noinput")
        manage("rebuild_fact_keys", "--if-stale")
        manage("collectstatic", "--noinput", "-v", "0")
        manage("ensure_admin")
        token = json.loads(_in_tree(tree, env, "-c", _MAKE_TOKEN).strip().splitlines()[-1])
        with runall_stack(env, data_dir / "runall.log", cwd=tree) as server:
            try:
                base = f"http://127.0.0.1:{port}"
                _wait_for_stack(server, base, chat_port)
                _drive(run, base, token["secret"], source, args)
                _wait_until_embedded(tree, env)
                time.sleep(SETTLE_SECONDS)
                run.processes = stack_processes(server.pid)
            except Exception:
                tail = (data_dir / "runall.log").read_text(errors="replace").splitlines()[-40:]
                print("\n".join(["--- runall log, last lines ---", *tail]), file=sys.stderr)
                raise
    return run


def _in_tree(tree: Path, env: dict[str, str], *command: str) -> str:
    """Run the checkout's Python (this interpreter) in the checkout: its code answers."""
    done = subprocess.run(
        [sys.executable, *command], cwd=tree, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command[:2]} failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return done.stdout


def _wait_for_stack(server: subprocess.Popen, base: str, chat_port: int) -> None:
    """Until the web server answers and the chat endpoint takes connections."""
    import httpx

    deadline = time.monotonic() + START_LIMIT_SECONDS
    web = chat = False
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"runall exited with code {server.returncode}")
        if not web:
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(base + "/api/memories", timeout=5)  # any answer: 401 here
                web = True
        if not chat:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", chat_port), 1),
            ):
                chat = True
        if web and chat:
            return
        time.sleep(0.3)
    raise RuntimeError(f"the stack did not start within {START_LIMIT_SECONDS} s")


def _drive(run: Run, base: str, secret: str, source: Path, args: argparse.Namespace) -> None:
    import httpx

    generator = FactGenerator(seed=args.seed)
    facts = iter(generator.unique_facts(args.writes + args.burst))
    questions = generator.questions(max(args.recalls, args.burst))
    seconds: dict[str, list[float]] = {}
    statuses: dict[str, Counter] = {}
    lock = threading.Lock()

    def timed(client: httpx.Client, op: str, method: str, path: str, body: dict) -> httpx.Response:
        start = time.perf_counter()
        response = client.request(method, path, json=body)
        elapsed = time.perf_counter() - start
        with lock:
            seconds.setdefault(op, []).append(elapsed)
            statuses.setdefault(op, Counter())[str(response.status_code)] += 1
        return response

    headers = {"Authorization": f"Bearer {secret}"}
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        for _ in range(args.writes):
            timed(client, "write", "POST", "/api/memories", next(facts))
        for question in questions[: args.recalls]:
            timed(client, "recall", "POST", "/api/recall", {"query": question})
        timed(client, "wiki save", "PUT", "/api/wiki", {"title": "Deploys", "content": WIKI_PAGE})
        started = time.monotonic()
        scan = timed(
            client,
            "scan request",
            "POST",
            "/api/codegraph/scan",
            {"name": "footprint", "path": str(source)},
        )
        scan.raise_for_status()
        project = scan.json()["id"]
        while True:
            state = client.get(f"/api/codegraph/projects/{project}").json()["state"]
            if state in ("done", "failed"):
                break
            if time.monotonic() - started > DRAIN_LIMIT_SECONDS:
                raise RuntimeError("the scan did not finish")
            time.sleep(0.2)
        run.scan_seconds = time.monotonic() - started
        if state != "done":
            raise RuntimeError("the scan failed")

    # The burst: every request drawn up front, so both checkouts get the same ones.
    rng = random.Random(args.seed)
    burst = [
        ("burst write", "/api/memories", next(facts))
        if rng.random() < WRITE_SHARE
        else ("burst recall", "/api/recall", {"query": rng.choice(questions)})
        for _ in range(args.burst)
    ]
    queue = iter(burst)

    def client_loop() -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            while True:
                with lock:
                    item = next(queue, None)
                if item is None:
                    return
                op, path, body = item
                timed(client, op, "POST", path, body)

    threads = [threading.Thread(target=client_loop) for _ in range(args.clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.burst_rate = args.burst / (time.perf_counter() - started)
    run.timings = {op: Timing.of(values) for op, values in seconds.items()}
    run.statuses = statuses


def _wait_until_embedded(tree: Path, env: dict[str, str]) -> None:
    deadline = time.monotonic() + DRAIN_LIMIT_SECONDS
    while int(_in_tree(tree, env, "-c", _UNEMBEDDED).strip().splitlines()[-1]):
        if time.monotonic() > deadline:
            raise RuntimeError(f"facts still unembedded after {DRAIN_LIMIT_SECONDS} s")
        time.sleep(1)


# --- Processes and their memory -----------------------------------------------------------


def stack_processes(root: int) -> list[Proc]:
    """``root`` (runall) and every process under it, each named by its part of the stack."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            # The command may hold spaces and parentheses: the fields after its ")".
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found: list[Proc] = []

    def visit(pid: int, parent_role: str | None, index: int) -> None:
        role = _role(pid, parent_role, index)
        pss, uss = _memory(pid)
        found.append(Proc(role, pid, pss, uss))
        for n, child in enumerate(sorted(children.get(pid, [])), start=1):
            visit(child, role, n)

    visit(root, None, 0)
    return found


def _role(pid: int, parent_role: str | None, index: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        argv = []
    words = set(argv)
    if parent_role is None:
        return "runall"
    if parent_role == "runall":
        if "gunicorn" in words:
            return "web (gunicorn arbiter)"
        if "uvicorn" in words:
            return "chat (uvicorn)"
        if "celery" in words and "worker" in words:
            return "worker (celery)" + (" + beat" if "-B" in words or "--beat" in words else "")
        if "celery" in words and "beat" in words:
            return "beat"
        return "runall child " + " ".join(argv[:3])
    if parent_role.startswith("web"):
        return f"web worker {index}"
    if parent_role.startswith("worker"):
        # Beat forked by the worker (--beat) has the worker's command line: it is the
        # one holding the schedule file open.
        if _holds_open(pid, "celerybeat-schedule"):
            return "beat (forked by the worker)"
        return f"worker pool process {index}"
    return f"{parent_role} child {index}"


def _holds_open(pid: int, name: str) -> bool:
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if name in str(fd.readlink()):
                    return True
    return False


def _memory(pid: int) -> tuple[float, float]:
    """PSS and USS of a process, in MB (0 for one that is gone)."""
    fields: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                fields[name] = int(rest.split()[0])
    uss = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    return fields.get("Pss", 0) / 1024, uss / 1024


# --- Report -------------------------------------------------------------------------------


def report(runs: list[Run]) -> None:
    roles: list[str] = []
    for run in runs:
        for proc in run.processes:
            if proc.role not in roles:
                roles.append(proc.role)
    headers = ["process"]
    for run in runs:
        headers += [f"PSS MB, {run.label}", "USS MB"]
    rows: list[list[object]] = []
    for role in roles:
        row: list[object] = [role]
        for run in runs:
            procs = [p for p in run.processes if p.role == role]
            row += [sum(p.pss for p in procs), sum(p.uss for p in procs)] if procs else ["-", "-"]
        rows.append(row)
    total: list[object] = ["total"]
    for run in runs:
        total += [sum(p.pss for p in run.processes), sum(p.uss for p in run.processes)]
    rows.append(total)
    print_table("Memory of the stack, idle after the load (MB)", headers, rows)

    ops: list[str] = []
    for run in runs:
        ops += [op for op in run.timings if op not in ops]
    headers = ["operation"]
    for run in runs:
        headers += [f"p50 ms, {run.label}", "p95 ms", "n", "statuses"]
    rows = []
    for op in ops:
        row = [op]
        for run in runs:
            timing = run.timings.get(op)
            if timing is None:
                row += ["-", "-", "-", "-"]
                continue
            codes = " ".join(f"{s}:{n}" for s, n in sorted(run.statuses[op].items()))
            row += [timing.p50, timing.p95, timing.n, codes]
        rows.append(row)
    rows.append(
        ["scan, request to done (s)"]
        + [v for run in runs for v in (run.scan_seconds, "-", "-", "-")]
    )
    rows.append(
        ["burst throughput (requests/s)"]
        + [v for run in runs for v in (run.burst_rate, "-", "-", "-")]
    )
    print_table("The load, timed (compare checkouts as ratios)", headers, rows)


if __name__ == "__main__":
    main()
