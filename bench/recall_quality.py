"""Recall quality on LoCoMo conversations (see the shared bench README).

Each conversation is one user's memory: every turn is written as one fact through the
write services, with its session, its place in the session (the session's date, one
minute a turn), its speaker and any shared photo's caption; then every question of
categories 1-4 with evidence asks the recall service for the top 10. Prints R@k and
Hit@k overall and per category beside plain FTS5 bm25, vector-only retrieval and
textbook RRF (k = 60) of the two, measured in the same run; the same for the
conversations weights are fitted on and the two they are not; an ablation table (each
ranking stage switched off in turn); and the recall service's time per query.

    .venv/bin/python bench/recall_quality.py [--data DIR] [--conversations 26,30]
        [--tuning '{"weight_time": 0.2}'] [--no-ablation] [--fit]

``--tuning`` measures other settings than the defaults (``facts.ranking.RecallTuning``).
``--fit`` fits the ranking weights on the fitting conversations (see ``fit``) and
prints the settings found, with their figures on the held-out ones beside.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import bench_env, django_setup, machine_note, revision, temp_data_dir
from bench._tables import Timing, print_table

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo-dev"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
FIT = ("conv-26", "conv-30", "conv-41")
HELD_OUT = ("conv-42", "conv-43")
K = 10


def session_time(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023"."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turns_of(conversation: dict) -> list[tuple[str, dict]]:
    """(dia_id, the fact to write) for every turn, in order."""
    out = []
    session = 1
    while f"session_{session}" in conversation:
        start = session_time(conversation[f"session_{session}_date_time"])
        for index, turn in enumerate(conversation[f"session_{session}"]):
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            item = {
                "content": text[:2000],
                "speaker": turn["speaker"],
                "session_id": f"session-{session}",
                "occurred_at": start + timedelta(minutes=index),
            }
            out.append((turn["dia_id"], item))
        session += 1
    return out


@dataclass
class Conversation:
    name: str
    actor: object
    holds: dict[int, set[str]]  # fact id -> the dia_ids it holds
    questions: list[tuple[str, int, set[str]]]  # (question, category, evidence)


def load(path: Path) -> Conversation:
    from django.contrib.auth import get_user_model

    from facts.services.create import fact_bulk_create
    from facts.services.embedding import facts_embed
    from teams.services import Actor

    data = json.loads(path.read_text())
    conversation = data.get("conversation", data)
    user = get_user_model().objects.create_user(path.stem)
    actor = Actor(user=user)
    turns = turns_of(conversation)
    results = fact_bulk_create(actor=actor, items=[item for _, item in turns])
    holds: dict[int, set[str]] = {}
    for (dia_id, _), result in zip(turns, results, strict=True):
        holds.setdefault(result.fact.pk, set()).add(dia_id)
    facts_embed(fact_ids=list(holds))
    questions = [
        (qa["question"], qa["category"], set(qa["evidence"]))
        for qa in data["qa"]
        if qa.get("category") in CATEGORIES and qa.get("evidence")
    ]
    return Conversation(name=path.stem, actor=actor, holds=holds, questions=questions)


def score(ranked: list[int], holds: dict[int, set[str]], evidence: set[str], k: int):
    found: set[str] = set()
    for fact_id in ranked[:k]:
        found |= holds.get(fact_id, set()) & evidence
    return len(found) / len(evidence), 1.0 if found else 0.0


@dataclass
class Scores:
    """R@5, Hit@5, R@10, Hit@10 per question, by conversation and category."""

    rows: list[tuple[str, str, tuple[float, float, float, float]]] = field(default_factory=list)

    def add(self, conversation: str, category: str, ranked, holds, evidence) -> None:
        self.rows.append(
            (
                conversation,
                category,
                (*score(ranked, holds, evidence, 5), *score(ranked, holds, evidence, 10)),
            )
        )

    def mean(self, metric: int, *, conversations=None, category=None) -> float:
        values = [
            v[metric]
            for c, cat, v in self.rows
            if (conversations is None or c in conversations) and (category in (None, cat))
        ]
        return statistics.fmean(values) if values else float("nan")

    def worst_category(self, metric: int = 2) -> float:
        return min(self.mean(metric, category=c) for c in CATEGORIES.values())


def run_recall(conversations: list[Conversation], tuning, timings: list[float] | None = None):
    from facts.recall import fact_recall

    scores = Scores()
    for conv in conversations:
        for question, category, evidence in conv.questions:
            t0 = time.perf_counter()
            result = fact_recall(
                actor=conv.actor,
                query=question,
                max_items=K,
                char_budget=100_000,
                touch=False,
                tuning=tuning,
            )
            if timings is not None:
                timings.append(time.perf_counter() - t0)
            ranked = [item.id for item in result.items]
            scores.add(conv.name, CATEGORIES[category], ranked, conv.holds, evidence)
    return scores


def run_baselines(conversations: list[Conversation]) -> dict[str, Scores]:
    """bm25 over the facts' own words, vector similarity alone, and RRF (k = 60) of the
    two: the textbook hybrid."""
    from facts.recall import recall_scope
    from facts.search import FACT_FTS, FACT_VECTORS
    from memoryhub.engine.config import memory_config_get
    from memoryhub.engine.embeddings.configured import embedder_get
    from memoryhub.engine.search import match_any, rrf

    embedder = embedder_get(memory_config_get())
    out = {name: Scores() for name in ("bm25", "vector only", "RRF k=60")}
    for conv in conversations:
        scope = recall_scope(user=conv.actor.user, project=None)
        for question, category, evidence in conv.questions:
            match = match_any(question)
            bm25 = (
                [h.id for h in FACT_FTS.search(f"content : ({match})", limit=50, within=scope)]
                if match
                else []
            )
            vector = [
                h.id for h in FACT_VECTORS.knn(embedder.embed([question])[0], k=50, within=scope)
            ]
            fused = rrf([bm25, vector], k=60)
            both = sorted(fused, key=lambda i: -fused[i])
            for name, ranked in (("bm25", bm25), ("vector only", vector), ("RRF k=60", both)):
                out[name].add(conv.name, CATEGORIES[category], ranked, conv.holds, evidence)
    return out


def ablations(base) -> dict[str, object]:
    """Two references (each retriever's fusion alone, every other stage off), then the
    default settings with one stage switched off at a time."""
    alone = replace(
        base,
        weight_coverage=0,
        weight_window=0,
        weight_speaker=0,
        weight_time=0,
        weight_date=0,
        weight_session=0,
        weight_session_coverage=0,
        weight_informative=0,
        weight_question=0,
        query_without_speakers=0,
        neighbour_share=0,
        answer_share=0,
        neighbour_candidates=0,
        context_weight=0,
    )
    return {
        "textbook RRF, every other stage off": replace(alone, fusion="rrf"),
        "min-max fusion, every other stage off": alone,
        "- neighbours' words in the full-text entry": replace(base, context_weight=0),
        "- soft AND (coverage)": replace(base, weight_coverage=0),
        "- session window (dense)": replace(base, weight_window=0),
        "- every dense channel": replace(base, weight_vector=0, weight_window=0),
        "- speakers' names kept in the query's vector": replace(base, query_without_speakers=0),
        "- speaker prior": replace(base, weight_speaker=0),
        "- time prior": replace(base, weight_time=0),
        "- date prior": replace(base, weight_date=0),
        "- session prior": replace(base, weight_session=0),
        "- session soft AND (session coverage)": replace(base, weight_session_coverage=0),
        "- informativeness prior": replace(base, weight_informative=0),
        "- question penalty": replace(base, weight_question=0),
        "- neighbour boost": replace(
            base, neighbour_share=0, answer_share=0, neighbour_candidates=0
        ),
        "- answer boost": replace(base, answer_share=0),
    }


def summary_cells(scores: Scores, names) -> list[str]:
    return [
        f"{scores.mean(0, conversations=names):.3f}",
        f"{scores.mean(2, conversations=names):.3f}",
    ]


def gather(conversations: list[Conversation], tuning) -> list[tuple]:
    """Each question's candidates with their signals, gathered once: a weight only
    changes how they are ranked."""
    from facts.recall import recall_candidates
    from memoryhub.engine.config import memory_config_get

    config = memory_config_get()
    out = []
    for conv in conversations:
        for question, category, evidence in conv.questions:
            gathered = recall_candidates(
                actor=conv.actor,
                query=question,
                project=None,
                config=config,
                tuning=tuning,
                notes=[],
            )
            out.append((conv, question, category, evidence, gathered.candidates))
    return out


def rank_only(questions: list[tuple], tuning) -> Scores:
    from facts.ranking import rank

    scores = Scores()
    for conv, question, category, evidence, candidates in questions:
        ranked = [c.id for c in rank(candidates, query=question, tuning=tuning)]
        scores.add(conv.name, CATEGORIES[category], ranked, conv.holds, evidence)
    return scores


# Each ranking weight and the part of a candidate's score it scales.
FITTED = {
    "weight_bm25": "bm25",
    "weight_vector": "vector",
    "weight_window": "window",
    "weight_coverage": "coverage",
    "weight_session_coverage": "session_coverage",
    "weight_speaker": "speaker",
    "weight_time": "time",
    "weight_date": "date",
    "weight_session": "session",
    "weight_informative": "informative",
    "weight_question": "question",
    "neighbour_share": "neighbour",
    "answer_share": "answer",
}
FUSED = ("weight_bm25", "weight_vector", "weight_window")


def signals(questions: list[tuple], tuning):
    """Each question's candidates as a matrix of their signals (each part of the score
    divided by its weight) and whether each holds evidence."""
    import numpy as np

    from facts.ranking import rank

    weights = np.array([getattr(tuning, name) for name in FITTED])
    out = []
    for conv, question, _, evidence, candidates in questions:
        ranked = rank(candidates, query=question, tuning=tuning)
        x = np.array([[(c.parts or {}).get(part, 0.0) for part in FITTED.values()] for c in ranked])
        y = np.array([1.0 if conv.holds.get(c.id, set()) & evidence else 0.0 for c in ranked])
        if 0 < y.sum() < len(y):
            out.append((x / weights, y))
    return weights, out


def fit(conversations: list[Conversation], base, *, rounds: int = 4, steps: int = 300):
    """The weights on FIT that give the evidence the most of a softmax over each
    question's candidates (gradient descent on that cross-entropy, each weight held near
    where it starts and above zero), rather than a search for the best R@10 on FIT, which
    fits those conversations' ties and overfits. The neighbour and answer boosts depend
    on the other weights, so the signals are read again with each round's weights. The
    scale is free (the ranking only sees the weights' ratios): the fused retrievers'
    weights keep the sum they had, beside the importance, recency and access boosts."""
    import numpy as np

    if any(getattr(base, name) <= 0 for name in FITTED):
        sys.exit("--fit needs every fitted weight above zero to start from")
    fitting = gather([c for c in conversations if c.name in FIT], base)
    tuning = base
    print(f"fit start: R@10 {rank_only(fitting, tuning).mean(2):.4f} on {', '.join(FIT)}")
    fused = [list(FITTED).index(name) for name in FUSED]
    for round_ in range(1, rounds + 1):
        start, questions = signals(fitting, tuning)
        w = start.copy()
        for _ in range(steps):
            gradient = np.zeros_like(w)
            for x, y in questions:
                s = x @ w
                p = np.exp(s - s.max())
                gradient += x.T @ (p / p.sum() - y / y.sum())
            w = np.maximum(w - 0.5 * (gradient / len(questions) + 0.01 * (w - start)), 0.001)
        w *= start[fused].sum() / w[fused].sum()
        tuning = replace(
            tuning,
            **{name: max(0.01, round(float(v), 2)) for name, v in zip(FITTED, w, strict=True)},
        )
        print(f"  round {round_}: R@10 {rank_only(fitting, tuning).mean(2):.4f}", flush=True)
    return tuning


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", default="", help="e.g. 26,30 (default: all)")
    parser.add_argument("--tuning", default="", help="JSON overrides of the recall settings")
    parser.add_argument("--no-ablation", action="store_true")
    parser.add_argument("--fit", action="store_true", help="fit the weights on " + ", ".join(FIT))
    args = parser.parse_args()
    files = sorted(args.data.glob("*.json"))
    if args.conversations:
        wanted = {f"conv-{n.strip()}" for n in args.conversations.split(",")}
        files = [f for f in files if f.stem in wanted]
    if not files:
        sys.exit(f"No conversations under {args.data}")

    with temp_data_dir("memoryhub-quality-") as data_dir:
        django_setup(bench_env(data_dir, CELERY_TASK_ALWAYS_EAGER="true"))
        from facts.models import Fact
        from facts.ranking import RecallTuning

        started = time.perf_counter()
        conversations = [load(path) for path in files]
        loaded = time.perf_counter() - started
        tuning = RecallTuning.from_settings(json.loads(args.tuning) if args.tuning else {})
        if args.fit:
            tuning = fit(conversations, tuning)
            print("fitted settings:", json.dumps(tuning.as_dict()))
        print(
            f"\nLoCoMo retrieval at {revision()}: {len(files)} conversations, "
            f"{Fact.objects.count()} facts, "
            f"{sum(len(c.questions) for c in conversations)} questions; loaded and embedded "
            f"in {loaded:.0f} s; {machine_note()}"
        )
        print("settings:", json.dumps(tuning.as_dict()))
        run_recall(conversations[:1], tuning)  # warm-up: the first queries load the model
        timings: list[float] = []
        recall = run_recall(conversations, tuning, timings)
        retrievers = {"memoryhub recall": recall, **run_baselines(conversations)}

        labels = ["all", *CATEGORIES.values()]
        rows = []
        for name, scores in retrievers.items():
            for metric, metric_name in enumerate(("R@5", "Hit@5", "R@10", "Hit@10")):
                rows.append(
                    [
                        name,
                        metric_name,
                        *(
                            f"{scores.mean(metric, category=None if label == 'all' else label):.3f}"
                            for label in labels
                        ),
                    ]
                )
        print_table("Recall, every conversation", ["retriever", "metric", *labels], rows)

        names = {c.name for c in conversations}
        fitted, held = names & set(FIT), names & set(HELD_OUT)
        print_table(
            "Fitted on vs held out (R@5, R@10)",
            [
                "retriever",
                f"R@5 fit ({len(fitted)})",
                "R@10 fit",
                f"R@5 held out ({len(held)})",
                "R@10 held out",
            ],
            [
                [name, *summary_cells(s, fitted), *summary_cells(s, held)]
                for name, s in retrievers.items()
            ],
        )

        if not args.no_ablation:
            base_r10, base_held = recall.mean(2), recall.mean(2, conversations=held)
            rows = [
                [
                    "default settings",
                    f"{recall.mean(0):.3f}",
                    f"{base_r10:.3f}",
                    "",
                    f"{base_held:.3f}",
                    "",
                ]
            ]
            for name, variant in ablations(tuning).items():
                scores = run_recall(conversations, variant)
                r10, r10_held = scores.mean(2), scores.mean(2, conversations=held)
                rows.append(
                    [
                        name,
                        f"{scores.mean(0):.3f}",
                        f"{r10:.3f}",
                        f"{r10 - base_r10:+.3f}",
                        f"{r10_held:.3f}",
                        f"{r10_held - base_held:+.3f}",
                    ]
                )
            print_table(
                "Ablation: each stage switched off in turn",
                ["recall", "R@5", "R@10", "change", "R@10 held out", "change held out"],
                rows,
            )

        t = Timing.of(timings)
        print(
            f"\nrecall service time per query: p50 {t.p50:.1f} ms, p95 {t.p95:.1f} ms "
            f"({t.n} queries)"
        )
        print(
            f"worst category R@10: {recall.worst_category():.3f}; target: R@10 >= 0.85, "
            "R@5 >= 0.78, no category below 0.55, p95 <= 30 ms at 100k facts"
        )


if __name__ == "__main__":
    main()
