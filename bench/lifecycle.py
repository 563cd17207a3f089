"""The memory lifecycle at scale: forgetting and distillation.

    .venv/bin/python bench/lifecycle.py [--facts 100000] [--forget 1000] [--queries 50]
        [--distill-facts 10000] [--scopes 50] [--keep]

Everything runs in a temporary MEMORYHUB_DATA_DIR, on SQLite, embeddings on. Facts are
generated sentences (``bench/_facts.py``) loaded in bulk into one user's scope; their
vectors are random unit vectors (the preview's vector step costs the same whatever the
vectors say, and embedding 100k sentences would take most of an hour here), and a
topic's vector is the local model's.

1. Forget preview over ``--facts`` facts in one scope: p50 / p95 of
   ``memory_forget_preview`` for topics naming one of the generated entities, beside
   the raw FTS5 query for the same words (the engine alone) in the same run.
   Target: p95 <= 200 ms at 100k.
2. The forget itself of ``--forget`` matching facts, a tenth of them with a summary
   drawing on them and another fact: seconds for ``memory_forget`` (facts, copies,
   summaries rebuilt, index rewritten, log emptied). Target: <= 5 s for 1,000.
3. Distillation with the offline provider over ``--distill-facts`` facts in
   ``--scopes`` scopes (a fresh store): seconds for ``facts_distill``, beside the
   provider's summarising alone. Target: <= 30 s for 10k facts in 50 scopes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import bench_env, bench_user, django_setup, machine_note, revision, temp_data_dir
from bench._facts import FactGenerator
from bench._tables import Timing, print_table

FILL_BATCH = 5_000


def load_facts(
    user, texts: list[dict], *, rng: np.random.Generator, project: str = ""
) -> list[int]:
    """Store facts in bulk with their full-text rows and random unit vectors."""
    from django.db import transaction
    from django.utils import timezone

    from facts.models import Fact
    from facts.search import FACT_FTS, FACT_VECTORS, fts_values
    from memoryhub.engine.embeddings.local import MODEL_ID

    ids: list[int] = []
    now = timezone.now()
    FACT_VECTORS.ensure_dim(384)
    for start in range(0, len(texts), FILL_BATCH):
        chunk = texts[start : start + FILL_BATCH]
        rows = [
            Fact(
                owner=user,
                visibility="private",
                project=project,
                content=item["content"],
                category=item["category"],
                tags=item["tags"],
                source_excerpt=item["content"][:200],
                created_by=user,
                embedding_model=MODEL_ID,
                created_at=now,
                updated_at=now,
                valid_from=now,
            )
            for item in chunk
        ]
        vectors = rng.normal(size=(len(rows), 384)).astype("<f4")
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with transaction.atomic():
            Fact.objects.bulk_create(rows, batch_size=500)
            FACT_FTS.upsert(((f.pk, fts_values(f.content, f.tags)) for f in rows), new=True)
            FACT_VECTORS.upsert(
                ((f.pk, v) for f, v in zip(rows, vectors, strict=True)), model=MODEL_ID
            )
        ids.extend(f.pk for f in rows)
    return ids


def preview_phase(args, rows: list[list[object]]) -> None:
    from bench.recall_latency import raw_fts
    from memoryhub.engine.config import memory_config_get
    from memoryhub.engine.search.text import match_all
    from memoryhub.surface.forget import memory_forget_preview
    from teams.services import Actor

    user, actor, _ = bench_user("forgetter")
    memory_config_get()
    generator = FactGenerator(seed=5)
    facts = generator.unique_facts(args.facts)
    started = time.perf_counter()
    load_facts(user, facts, rng=np.random.default_rng(5))
    print(f"  loaded {args.facts:,} facts in {time.perf_counter() - started:.0f} s", flush=True)
    topics = [
        " ".join(f["content"].split()[:2]) for f in facts[:: max(1, args.facts // args.queries)]
    ]
    topics = topics[: args.queries]
    actor = Actor(user=user)
    counts = []

    def preview(i: int) -> None:
        counts.append(memory_forget_preview(actor=actor, topic=topics[i])["count"])

    def baseline(i: int) -> None:
        raw_fts(match_all(topics[i], prefix_last=False, drop_stopwords=True), 5000)

    from facts.models import Fact
    from facts.search import FACT_VECTORS
    from memoryhub.engine.embeddings.configured import embedder_get

    embedder = embedder_get()
    scope = Fact.objects.filter(owner_id=user.pk)
    vectors = embedder.embed(topics)

    # Where the preview's time goes: its words, its embedding and its vector search, each
    # alone, beside the whole.
    def embedding(i: int) -> None:
        embedder.embed([topics[i]])

    def knn(i: int) -> None:
        FACT_VECTORS.knn(vectors[i], k=200, within=scope)

    for name, operation in (
        ("raw FTS5 MATCH of the topic's words", baseline),
        ("the topic's embedding alone", embedding),
        ("vector kNN within the scope alone", knn),
        ("forget preview", preview),
    ):
        for i in range(min(3, len(topics))):
            operation(i)
        samples = []
        for i in range(len(topics)):
            t = time.perf_counter()
            operation(i)
            samples.append(time.perf_counter() - t)
        timing = Timing.of(samples)
        rows.append([f"{name}, {args.facts:,} facts", len(samples), timing.p50, timing.p95])
    print(f"  preview matches per topic: median {sorted(counts)[len(counts) // 2]}")


def forget_phase(args, seconds: list[list[object]]) -> None:
    from facts.models import Fact
    from memoryhub.surface.forget import memory_forget
    from teams.services import Actor

    user, _, _ = bench_user("forgets-a-lot")
    said = "Project Zephyrine milestone {n} ships on the blue cluster"
    texts = [
        {"content": said.format(n=n), "category": "fact", "tags": ["zephyrine"]}
        for n in range(args.forget)
    ]
    ids = load_facts(user, texts, rng=np.random.default_rng(6))
    quiet = {"content": "The office has a quiet room", "category": "fact", "tags": []}
    other = load_facts(user, [quiet] * (args.forget // 10), rng=np.random.default_rng(7))
    for n, source in enumerate(ids[: args.forget // 10]):
        summary = Fact.objects.create(
            owner=user,
            visibility="private",
            layer=2,
            category="summary",
            content=f"Summary {n}: Zephyrine milestone and the quiet room",
        )
        summary.derived_from.set([source, other[n]])
    started = time.perf_counter()
    receipt = memory_forget(actor=Actor(user=user), topic="Zephyrine milestone", ids=ids)
    elapsed = time.perf_counter() - started
    seconds.append([
        f"forget {len(ids):,} facts, {len(receipt['regenerated'])} summaries rebuilt",
        elapsed, "<= 5 s", "met" if elapsed <= 5 else "MISSED",
    ])  # fmt: skip


def distill_phase(args, seconds: list[list[object]]) -> None:
    from facts.models import Fact
    from facts.services.distillation import facts_distill
    from memoryhub.engine.llm import OfflineProvider, SourceText

    user, _, _ = bench_user("distiller")
    generator = FactGenerator(seed=9)
    facts = generator.unique_facts(args.distill_facts)
    per_scope = len(facts) // args.scopes
    for scope in range(args.scopes):
        load_facts(user, facts[scope * per_scope : (scope + 1) * per_scope],
                   rng=np.random.default_rng(scope), project=f"project-{scope}")  # fmt: skip
    sources = [
        [
            SourceText(id=i, text=f["content"])
            for i, f in enumerate(facts[s * per_scope : (s + 1) * per_scope][:200])
        ]
        for s in range(args.scopes)
    ]
    provider = OfflineProvider()
    started = time.perf_counter()
    for chunk in sources:
        provider.summarize(chunk, max_summaries=5)
    alone = time.perf_counter() - started
    started = time.perf_counter()
    result = facts_distill()
    elapsed = time.perf_counter() - started
    seconds.append([
        f"offline summarising alone, {args.scopes} scopes x {min(per_scope, 200)} facts",
        alone, "", "",
    ])  # fmt: skip
    seconds.append([
        f"distill {len(facts):,} facts in {result['scopes']} scopes: "
        f"{len(result['summaries'])} summaries, {len(result['profiles'])} profiles",
        elapsed, "<= 30 s", "met" if elapsed <= 30 else "MISSED",
    ])  # fmt: skip
    assert Fact.objects.filter(layer=3).count() == result["scopes"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--forget", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--distill-facts", type=int, default=10_000)
    parser.add_argument("--scopes", type=int, default=50)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    print(f"MemoryHub lifecycle bench at {revision()}; {machine_note()}")
    with temp_data_dir("memoryhub-lifecycle-", keep=args.keep) as data_dir:
        django_setup(bench_env(data_dir))
        rows: list[list[object]] = []
        seconds: list[list[object]] = []
        preview_phase(args, rows)
        forget_phase(args, seconds)
        distill_phase(args, seconds)
    print_table("Forget preview (target: p95 <= 200 ms at 100k facts)",
                ["what", "queries", "p50 ms", "p95 ms"], rows)  # fmt: skip
    print_table("Forgetting and distillation", ["what", "seconds", "target", ""], seconds)


if __name__ == "__main__":
    main()
