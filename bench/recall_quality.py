"""Recall quality on LoCoMo conversations (see shared bench README).

Each conversation is one user's memory: every turn is stored as one fact (speaker and
session date included), then each question of categories 1-4 with evidence asks the
recall service for the top k. Reports R@k and Hit@k overall and per category, beside a
plain FTS5 bm25 baseline and vector-only retrieval measured in the same run.

    .venv/bin/python bench/recall_quality.py [--data DIR] [--limit-conversations N]
        [--rrf-k K]

``--rrf-k`` runs recall with that fusion constant instead of the setting's default.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo-dev"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def setup_django(data_dir: str) -> None:
    os.environ["MEMORYHUB_DATA_DIR"] = data_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "true"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def turns_of(conversation: dict) -> list[tuple[str, str]]:
    """(dia_id, fact text) for every turn, with the speaker and session date."""
    out = []
    session = 1
    while f"session_{session}" in conversation:
        when = conversation.get(f"session_{session}_date_time", "")
        for turn in conversation[f"session_{session}"]:
            text = f"{turn['speaker']} ({when}): {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            out.append((turn["dia_id"], text))
        session += 1
    return out


def load_conversation(user, turns: list[tuple[str, str]]) -> dict[int, set[str]]:
    """Store the turns as facts; returns fact id -> the dia_ids it holds."""
    from facts.services import fact_bulk_create, facts_embed
    from teams.services import Actor

    results = fact_bulk_create(
        actor=Actor(user=user), items=[{"content": text[:2000]} for _, text in turns]
    )
    holds: dict[int, set[str]] = {}
    for (dia_id, _), result in zip(turns, results, strict=True):
        holds.setdefault(result.fact.pk, set()).add(dia_id)
    facts_embed(fact_ids=list(holds))
    return holds


def score(ranked: list[int], holds: dict[int, set[str]], evidence: set[str], k: int):
    found = set()
    for fact_id in ranked[:k]:
        found |= holds.get(fact_id, set()) & evidence
    return len(found) / len(evidence), 1.0 if found else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit-conversations", type=int, default=0)
    parser.add_argument("--rrf-k", type=int, default=0, help="the recall setting rrf_k")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.json"))
    if args.limit_conversations:
        files = files[: args.limit_conversations]
    if not files:
        sys.exit(f"No conversations under {args.data}")

    with tempfile.TemporaryDirectory(prefix="memoryhub-quality-") as tmp:
        setup_django(tmp)
        from django.contrib.auth import get_user_model

        from facts.models import Fact, MemoryConfig
        from facts.recall import fact_recall, recall_scope
        from facts.search import FACT_FTS, FACT_VECTORS
        from facts.services import current_embedder, memory_config_get
        from memoryhub.search import match_any
        from teams.services import Actor

        config = memory_config_get()
        config.max_active_facts = 0
        config.save()
        MemoryConfig.objects.filter(pk=1).update(max_active_facts=0)
        if args.rrf_k:
            MemoryConfig.objects.filter(pk=1).update(rrf_k=args.rrf_k)
        embedder = current_embedder(config)
        rows: dict[str, dict[str, list[float]]] = {}
        latencies: list[float] = []
        started = time.perf_counter()
        for path in files:
            data = json.loads(path.read_text())
            conversation = data.get("conversation", data)
            user = get_user_model().objects.create_user(path.stem)
            holds = load_conversation(user, turns_of(conversation))
            actor = Actor(user=user)
            scope = recall_scope(user=user, project=None)
            for qa in data["qa"]:
                category = qa.get("category")
                evidence = set(qa.get("evidence") or [])
                if category not in CATEGORIES or not evidence:
                    continue
                t0 = time.perf_counter()
                result = fact_recall(
                    actor=actor,
                    query=qa["question"],
                    max_items=10,
                    char_budget=100_000,
                    touch=False,
                )
                latencies.append((time.perf_counter() - t0) * 1000)
                hybrid = [item.fact.pk for item in result.items]
                bm25 = [
                    h.id for h in FACT_FTS.search(match_any(qa["question"]), limit=10, within=scope)
                ]
                vector = [
                    h.id
                    for h in FACT_VECTORS.knn(
                        embedder.embed([qa["question"]])[0], k=10, within=scope
                    )
                ]
                for name, ranked in (
                    ("memoryhub recall", hybrid),
                    ("bm25 baseline", bm25),
                    ("vector only", vector),
                ):
                    for label in (CATEGORIES[category], "all"):
                        bucket = rows.setdefault(name, {}).setdefault(label, [])
                        bucket.append(
                            (
                                *score(ranked, holds, evidence, 5),
                                *score(ranked, holds, evidence, 10),
                            )
                        )
        elapsed = time.perf_counter() - started
        questions = len(rows["memoryhub recall"]["all"])
        print(
            f"\nLoCoMo retrieval: {len(files)} conversations, {Fact.objects.count()} facts, "
            f"{questions} questions, {elapsed:.0f} s, recall with rrf_k "
            f"{memory_config_get().rrf_k}\n"
        )
        labels = ["all", *CATEGORIES.values()]
        print("| retriever | metric | " + " | ".join(labels) + " |")
        print("|---|---|" + "---|" * len(labels))
        for name, buckets in rows.items():
            for index, metric in enumerate(("R@5", "Hit@5", "R@10", "Hit@10")):
                cells = [
                    f"{statistics.mean(v[index] for v in buckets[label]):.3f}"
                    if buckets.get(label)
                    else "-"
                    for label in labels
                ]
                print(f"| {name} | {metric} | " + " | ".join(cells) + " |")
        latencies.sort()
        p95 = latencies[int(len(latencies) * 0.95) - 1]
        print(
            f"\nrecall service latency: p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms"
        )
        print("target: R@10 >= 0.85, R@5 >= 0.78, no category below 0.55, p95 < 30 ms")


if __name__ == "__main__":
    main()
