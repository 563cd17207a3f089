"""Throughput and load time of the local embedder.

Run from the repository root: ``python bench/embedder.py [--sentences N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memoryhub.engine.embeddings import LocalEmbedder

BATCH_SIZES = (1, 16, 64)

# Fact-sized sentences of the lengths agents actually store.
SUBJECTS = ["Alice", "Bob", "Charlie", "The billing team", "The nightly job"]
FACTS = [
    "prefers dark mode in every editor",
    "deploys the API on Fridays only after the smoke tests pass",
    "keeps the staging database on PostgreSQL 16 with pgvector enabled",
    "asked to be reminded about the quarterly security review two weeks ahead",
    "writes commit messages in the imperative mood and squashes fixups before merging",
    "uses Redis on port 6379 for the Celery broker and runs two workers per machine, "
    "one for embeddings and one for distillation",
]


def corpus(size: int) -> list[str]:
    """``size`` distinct sentences, cycling through subjects and facts."""
    return [
        f"{SUBJECTS[i % len(SUBJECTS)]} {FACTS[i % len(FACTS)]} (note {i})." for i in range(size)
    ]


def measure_load(repeats: int) -> list[float]:
    """Seconds to verify and load the model files into a fresh embedder, per repeat."""
    times = []
    for _ in range(repeats):
        embedder = LocalEmbedder()
        started = time.perf_counter()
        embedder.load()
        times.append(time.perf_counter() - started)
    return times


def measure_throughput(
    embedder: LocalEmbedder, texts: list[str], batch_size: int, repeats: int
) -> float:
    """Best sentences per second over ``repeats`` passes at ``batch_size``."""
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        for start in range(0, len(texts), batch_size):
            embedder.embed(texts[start : start + batch_size])
        best = max(best, len(texts) / (time.perf_counter() - started))
    return best


def main() -> None:
    """Print a table of load time and throughput per batch size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=256, help="sentences per pass")
    parser.add_argument("--repeats", type=int, default=3, help="passes; the best one counts")
    args = parser.parse_args()

    load_times = measure_load(args.repeats)
    embedder = LocalEmbedder()
    embedder.load()
    texts = corpus(args.sentences)
    embedder.embed(texts[:16])  # warm-up: first runs allocate onnxruntime's buffers

    print(f"local embedder {embedder.model_id}, dim {embedder.dim}, {os.cpu_count()} CPUs")
    print(
        f"load (verify hashes + tokenizer + session): "
        f"median {statistics.median(load_times) * 1000:.0f} ms, "
        f"first {load_times[0] * 1000:.0f} ms"
    )
    print()
    print(f"{'batch size':>10} | {'sentences/s':>11} | {'ms per batch':>12}")
    print(f"{'-' * 10}-+-{'-' * 11}-+-{'-' * 12}")
    for batch_size in BATCH_SIZES:
        rate = measure_throughput(embedder, texts, batch_size, args.repeats)
        print(f"{batch_size:>10} | {rate:>11.1f} | {batch_size / rate * 1000:>12.1f}")


if __name__ == "__main__":
    main()
