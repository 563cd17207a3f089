"""What the OpenAI-compatible endpoint adds to a chat call: time to the first token and to
the whole answer, through MemoryHub and straight to the same chat model, side by side.

    .venv/bin/python bench/proxy_overhead.py [--sizes 10000,100000] [--calls 100]
        [--unique 10000] [--events 200] [--pace-ms 5] [--vector-cache DIR] [--keep]

In a temporary MEMORYHUB_DATA_DIR on SQLite with the local embedder, one user's store is
filled to each size (bulk, as ``bench/recall_latency.py`` fills it: the same generated
sentences and vectors), the whole store being the recall scope. The chat model is a
local server speaking the protocol that streams ``--events`` content events per answer:
first as fast as it can (what the relay itself costs per event), then one every
``--pace-ms`` (a fast model; the throughput users see). The endpoint runs as ``make run``
serves it (uvicorn in its own process).

For each size, ``--calls`` streamed calls with a question each (new words every time),
alternating between going through MemoryHub (recall injected, capture off: the
extraction runs after the answer, on the worker) and going straight to the model:
time to the first content event, total time, and events per second after the first.
Recall alone (the per-turn recall the endpoint runs, in process, for the same questions)
is timed beside them. Targets: the first token no later than recall's p95 + 10 ms more
than straight to the model, and the paced stream within 5 % of straight.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import (
    REPO_ROOT,
    bench_env,
    bench_user,
    django_setup,
    machine_note,
    revision,
    temp_data_dir,
)
from bench._facts import FactGenerator
from bench._server import free_port, stop_process_group
from bench._tables import Timing, print_table

ADDED_TTFT_SLACK_MS = 10.0
THROUGHPUT_TOLERANCE = 0.05
WARMUP = 5


def model_server(events: int) -> tuple[ThreadingHTTPServer, dict[str, float]]:
    """A chat model on 127.0.0.1 streaming ``events`` content events per answer, paced by
    ``pace["seconds"]`` between them."""
    pace = {"seconds": 0.0}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "bench-model"}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Each event is sent as it is made, as a model server sends its tokens.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def handle(self) -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                super().handle()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for index in range(events):
                delta = {"content": f" word{index}"}
                event = {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                self._send(f"data: {json.dumps(event)}\n\n".encode())
                if pace["seconds"]:
                    time.sleep(pace["seconds"])
            self._send(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _send(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, pace


@contextlib.contextmanager
def chat_endpoint(env: dict[str, str]) -> Iterator[str]:
    """The endpoint under uvicorn, as ``make run`` serves it; yields its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "memoryhub.asgi:chat", "--port", str(port),
         "--no-access-log"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/models", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the chat endpoint did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        stop_process_group(process)


def server_timing(header: str) -> dict[str, float]:
    """``auth;dur=1.9, recall;dur=20.8`` as {step: seconds}."""
    steps: dict[str, float] = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";dur=")
        with contextlib.suppress(ValueError):
            steps[name] = float(rest) / 1000
    return steps


def streamed(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    question: str,
    steps: dict[str, list[float]] | None = None,
):
    """One streamed call: (seconds to the first content event, seconds in all, events);
    the endpoint's own account of its steps (Server-Timing) added to ``steps``."""
    body = {
        "model": "bench-model",
        "stream": True,
        "messages": [{"role": "user", "content": question}],
    }
    started = time.perf_counter()
    first, count = None, 0
    with client.stream("POST", f"{url}/chat/completions", json=body, headers=headers) as answer:
        assert answer.status_code == 200, answer.read()
        if steps is not None:
            for step, seconds in server_timing(answer.headers.get("server-timing", "")).items():
                steps.setdefault(step, []).append(seconds)
        for line in answer.iter_lines():
            if line.startswith("data: {"):
                if first is None:
                    first = time.perf_counter() - started
                count += 1
    return first, time.perf_counter() - started, count


def measure(size: int, *, questions: list[str], actor, secret: str, env, model: str, pace,
            pace_seconds: float, calls: int) -> list[list[object]]:  # fmt: skip
    from memoryhub.surface.chat import turn_recall

    recall = []
    for question in questions[:WARMUP]:
        turn_recall(actor=actor, query=question)
    for question in questions[WARMUP : WARMUP + calls]:
        started = time.perf_counter()
        turn_recall(actor=actor, query=question)
        recall.append(time.perf_counter() - started)
    recall_timing = Timing.of(recall)

    rows: list[list[object]] = []
    ours = {"Authorization": f"Bearer {secret}", "X-MemoryHub-Capture": "off"}
    with chat_endpoint(env) as through, httpx.Client(timeout=60) as client:
        for label, seconds in (
            ("unpaced", 0.0),
            (f"{pace_seconds * 1000:g} ms pace", pace_seconds),
        ):
            pace["seconds"] = seconds
            figures: dict[str, list[tuple[float, float, int]]] = {"direct": [], "memoryhub": []}
            steps: dict[str, list[float]] = {}
            asked = questions[WARMUP + calls :]
            for index in range(WARMUP):
                streamed(client, through, ours, asked[index])
                streamed(client, model, {}, asked[index])
            for index in range(calls if not seconds else max(10, calls // 5)):
                question = asked[WARMUP + index]
                pair = [("memoryhub", through, ours), ("direct", model, {})]
                for name, url, headers in pair if index % 2 else reversed(pair):
                    kept = steps if name == "memoryhub" else None
                    figures[name].append(streamed(client, url, headers, question, kept))
            for name in ("direct", "memoryhub"):
                first = Timing.of([f for f, _, _ in figures[name]])
                total = Timing.of([t for _, t, _ in figures[name]])
                rate = sum(n - 1 for _, _, n in figures[name]) / sum(
                    t - f for f, t, _ in figures[name]
                )
                rows.append([f"{size:,}", label, name, first.p50, first.p95, total.p50, total.p95,
                             f"{rate:,.0f}", first.n])  # fmt: skip
            if not seconds:
                parts = {step: Timing.of(values) for step, values in steps.items()}
                print(
                    f"at {size:,} facts, where the endpoint's time goes before the model "
                    "answers (Server-Timing p50 / p95 ms): "
                    + ", ".join(f"{step} {t.p50:.1f} / {t.p95:.1f}" for step, t in parts.items()),
                    flush=True,
                )
    direct_first = rows[0][4]
    ours_first = rows[1][4]
    added = ours_first - direct_first
    paced_direct, paced_ours = (
        float(rows[2][7].replace(",", "")),
        float(rows[3][7].replace(",", "")),
    )
    alone = "recall alone, as the endpoint runs it (in process)"
    rows.append([f"{size:,}", "", alone, recall_timing.p50, recall_timing.p95, "", "", "",
                 recall_timing.n])  # fmt: skip
    print(
        f"\nat {size:,} facts: first token p95 added {added:.1f} ms against a target of "
        f"{recall_timing.p95 + ADDED_TTFT_SLACK_MS:.1f} ms (recall p95 + 10): "
        f"{'met' if added <= recall_timing.p95 + ADDED_TTFT_SLACK_MS else 'NOT met'}; "
        f"paced stream {paced_ours / paced_direct:.3f} of straight "
        f"({'met' if paced_ours >= (1 - THROUGHPUT_TOLERANCE) * paced_direct else 'NOT met'})"
    )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--unique", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument("--vector-cache", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())

    from bench.recall_latency import Store, embed_texts

    server, pace = model_server(args.events)
    model = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with temp_data_dir("memoryhub-bench-proxy-", args.keep) as data_dir:
        env = bench_env(data_dir, MEMORYHUB_EMBEDDINGS_ENABLED="true")
        django_setup(env)
        from memoryhub.engine.models import MemoryConfig

        MemoryConfig.objects.update_or_create(
            pk=1, defaults={"llm_url": model, "llm_model": "bench-model"}
        )
        user, _, secret = bench_user()
        from teams.services import agent_token_authenticate, agent_token_reads

        agent = agent_token_reads(agent_token_authenticate(secret=secret))
        pool = FactGenerator(seed=args.seed).unique_facts(min(args.unique, sizes[-1]))
        vectors = embed_texts(
            [f["content"] for f in pool], args.vector_cache or data_dir / "vectors"
        )
        store = Store(user=user, pool=pool, vectors=vectors, seed=args.seed)
        print(
            f"\nchat endpoint overhead at {revision()}, {machine_note()}; {args.calls} calls "
            f"per row, {args.events} events per answer"
        )
        rows: list[list[object]] = []
        for position, size in enumerate(sizes):
            # Questions of its own at each size: one asked before (recall alone at an
            # earlier size) would find its words' pages cached.
            questions = FactGenerator(seed=args.seed + 1 + position).questions(
                4 * (args.calls + 2 * WARMUP)
            )
            seconds = store.fill_to(size)
            print(f"filled to {size:,} facts in {seconds:.1f} s", flush=True)
            rows += measure(
                size, questions=questions, actor=agent, secret=secret, env=env, model=model,
                pace=pace, pace_seconds=args.pace_ms / 1000, calls=args.calls,
            )  # fmt: skip
        print_table(
            "Streamed chat calls: through MemoryHub (recall injected) and straight to the model",
            ["facts", "stream", "path", "first token p50 ms", "p95 ms", "total p50 ms",
             "total p95 ms", "events/s", "n"],
            rows,
        )  # fmt: skip
    server.shutdown()
    os.environ.pop("MEMORYHUB_DATA_DIR", None)


if __name__ == "__main__":
    main()
