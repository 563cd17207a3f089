"""What MCP over streamable HTTP adds to a tool call, beside the same call over REST.

    .venv/bin/python bench/mcp_overhead.py [--calls 200] [--facts 200] [--keep]

A gunicorn server (as ``make run`` starts it) on a temporary data directory with one
user, an agent token and ``--facts`` generated facts. Each round calls every tool below
once per way, in turn, so drift in the machine's load hits every way alike:

- REST: ``POST /api/tools/{name}`` with httpx (one kept-alive connection);
- MCP, one POST: the JSON-RPC ``tools/call`` message an MCP client sends to ``/mcp``,
  with httpx on a kept-alive connection (the server's side of MCP alone);
- MCP, SDK client: ``Client.call_tool`` of the official SDK over streamable HTTP (the
  per-request protocol, which also checks the answer against the tool's output schema).

The tools: ``memory_get`` of one id (the cheapest: the figure is mostly overhead) and
``recall`` of a question (the call agents make every turn). The target: MCP adds at
most 10 ms p95 over REST.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import bench_env, bench_user, django_setup, machine_note, revision, temp_data_dir
from bench._facts import FactGenerator
from bench._server import gunicorn_server
from bench._tables import Timing, print_table

WARMUP = 10
TARGET_MS = 10.0


def fill(actor, count: int) -> list[int]:
    from facts.services.create import fact_create

    facts = FactGenerator(seed=7).unique_facts(count)
    return [fact_create(actor=actor, data=data).fact.pk for data in facts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="timed calls per tool and way")
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the temp data directory")
    options = parser.parse_args()

    with temp_data_dir("mh-bench-mcp-", keep=options.keep) as data_dir:
        env = bench_env(data_dir, MEMORYHUB_EMBEDDINGS_ENABLED="False")
        django_setup(env)
        _, actor, secret = bench_user()
        ids = fill(actor, options.facts)
        with gunicorn_server(env, log_path=data_dir / "web.log") as base:
            timings = measure(base, secret, ids, options.calls)
        print(f"\n{machine_note()}; {revision()}; {options.facts} facts, embeddings off")
        rows = []
        for tool, ways in timings.items():
            rest = Timing.of(ways["REST"])
            for way, seconds in ways.items():
                t = Timing.of(seconds)
                added = "" if way == "REST" else f"{t.p95 - rest.p95:+.1f}"
                rows.append(
                    (tool, way, t.n, f"{t.p50:.1f}", f"{t.p95:.1f}", f"{t.mean:.1f}", added)
                )
        print_table(
            f"A tool call over REST and over MCP (ms; target: MCP adds <= {TARGET_MS:.0f} ms p95)",
            ["tool", "way", "n", "p50", "p95", "mean", "p95 added"],
            rows,
        )


def measure(base: str, secret: str, ids: list[int], calls: int) -> dict[str, dict[str, list]]:
    import anyio
    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {secret}"}
    tools = {
        "memory_get": {"ids": [ids[len(ids) // 2]]},
        "recall": {"query": "Who reviewed the billing migration last spring?"},
    }
    timings: dict[str, dict[str, list]] = {
        name: {"REST": [], "MCP, one POST": [], "MCP, SDK client": []} for name in tools
    }

    async def run() -> None:
        rest = httpx.Client(base_url=base, headers=headers, timeout=60)
        raw = httpx.Client(
            base_url=base,
            headers={**headers, "Accept": "application/json, text/event-stream"},
            timeout=60,
        )
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as sdk:
            await sdk.list_tools()
            for round_ in range(WARMUP + calls):
                for name, arguments in tools.items():
                    message = {
                        "jsonrpc": "2.0",
                        "id": round_,
                        "method": "tools/call",
                        "params": {"name": name, "arguments": arguments},
                    }
                    started = time.perf_counter()
                    answer = rest.post(f"/api/tools/{name}", json=arguments)
                    rest_s = time.perf_counter() - started
                    assert answer.status_code == 200, answer.text
                    started = time.perf_counter()
                    answer = raw.post("/mcp", json=message)
                    raw_s = time.perf_counter() - started
                    assert answer.status_code == 200 and "result" in answer.json(), answer.text
                    started = time.perf_counter()
                    result = await sdk.call_tool(name, arguments)
                    sdk_s = time.perf_counter() - started
                    assert not result.is_error, result.content
                    if round_ >= WARMUP:
                        timings[name]["REST"].append(rest_s)
                        timings[name]["MCP, one POST"].append(raw_s)
                        timings[name]["MCP, SDK client"].append(sdk_s)
        rest.close()
        raw.close()

    anyio.run(run)
    return timings


if __name__ == "__main__":
    main()
