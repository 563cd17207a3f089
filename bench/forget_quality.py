"""The quality of "forget a topic": what the preview ticks and what it shows.

    .venv/bin/python bench/forget_quality.py [--data FILE] [--verbose] [--json] [--keep]

The labelled set (``bench/data/forget_topics.json``) is one user's memory: facts about
their job and a former one, colleagues, projects, health, family, money, home, travel,
hobbies and habits, written in chat sessions that mix unrelated subjects, as real chats
do. It holds traps on purpose: possessives, words that share a stem with a topic's word
but mean something else ("status page" beside "paged at night"), facts about a topic
that never name it ("my previous company"), a former and a current employer, and two
people with the same first name. Each topic is phrased as people ask ("forget everything
about my old job at Acme Corp", "forget biscuit", some with nothing to find) and labelled
with the facts a careful reader would agree the user meant to remove (``certain``), and
the facts close enough that a preview should show them for review without ticking them
(``possible``).

In a temporary MEMORYHUB_DATA_DIR, on SQLite, with the local embedder: every fact is
written through ``fact_create`` with its session and tags, its queued work (the vector,
the concept graph) run as it commits, as a worker would; then every topic asks
``memory_forget_preview``, which deletes nothing. A match marked ``certain`` is ticked
in the preview; the others are shown unticked. A preview that does not mark its matches
ticks them all (the behaviour before the mark existed).

Figures over all topics, with their targets:

- certain precision: of the ticked facts, the share labelled certain (a ticked
  labelled-possible fact counts against it too). Target 1.0: nothing the user did not
  ask about is ticked.
- false removals: ticked facts labelled neither certain nor possible, the worst error.
  Listed apart, with the ticked labelled-possible ones. Target 0.
- certain recall: of the facts labelled certain, the share ticked. Target >= 0.95.
- possible-set recall: of the facts labelled certain or possible, the share shown at
  all, ticked or not. Target >= 0.99.

``--verbose`` lists, per topic, every false removal and every miss with the preview's
``why``; ``--json`` prints the figures as JSON instead of the tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import (
    bench_env,
    bench_user,
    django_setup,
    machine_note,
    revision,
    temp_data_dir,
)
from bench._tables import Timing, print_table

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "forget_topics.json"
TARGET_PRECISION = 1.0
TARGET_CERTAIN_RECALL = 0.95
TARGET_POSSIBLE_RECALL = 0.99


@dataclass(frozen=True)
class Topic:
    topic: str
    certain: frozenset[int]
    possible: frozenset[int]


@dataclass(frozen=True)
class Labelled:
    facts: list[dict]
    topics: list[Topic]


def labelled_load(path: Path) -> Labelled:
    """The facts and topics of ``path``, checked: every label names a fact, and no fact
    is both certain and possible for one topic."""
    data = json.loads(path.read_text())
    facts = data["facts"]
    topics = []
    for item in data["topics"]:
        topic = Topic(item["topic"], frozenset(item["certain"]), frozenset(item["possible"]))
        wrong = [i for i in topic.certain | topic.possible if not 0 <= i < len(facts)]
        if wrong:
            sys.exit(f"{path.name}: {topic.topic!r} labels facts {wrong} that do not exist")
        if topic.certain & topic.possible:
            sys.exit(f"{path.name}: {topic.topic!r} labels a fact both certain and possible")
        topics.append(topic)
    return Labelled(facts=facts, topics=topics)


def facts_store(user, facts: list[dict]) -> list[int]:
    """Write every fact through the write service, in order, and make sure each has its
    vector; the stored fact's id for each index. Stops if a fact merged into another:
    the labels would then point at the wrong fact."""
    from facts.models import Fact
    from facts.services.create import fact_create
    from facts.services.embedding import facts_embed, facts_needing_embedding
    from teams.services import Actor

    actor = Actor(user=user)
    ids: list[int] = []
    for index, fact in enumerate(facts):
        # Outside a transaction: the write commits, and its queued work (the vector, the
        # concept graph) runs in this process as it would on a worker.
        result = fact_create(
            actor=actor,
            data={
                "content": fact["content"],
                "tags": fact.get("tags", []),
                "session_id": fact["session"],
            },
        )
        if not result.created:
            first = ids.index(result.fact.pk)
            sys.exit(
                f"fact {index} ({fact['content']!r}) merged into fact {first} "
                f"({facts[first]['content']!r}): reword one of them"
            )
        ids.append(result.fact.pk)
    waiting = list(facts_needing_embedding().filter(pk__in=ids).values_list("pk", flat=True))
    if waiting:
        facts_embed(fact_ids=waiting)
    embedded = Fact.objects.filter(pk__in=ids).exclude(embedding_model="").count()
    if embedded != len(ids):
        sys.exit(f"only {embedded} of {len(ids)} facts have a vector")
    return ids


@dataclass
class TopicResult:
    topic: Topic
    ticked: set[int]
    shown: set[int]
    why: dict[int, list[str]]
    unmarked: int  # matches without a "certain" mark, counted as ticked
    other: int  # matches that are none of the labelled facts

    @property
    def right(self) -> set[int]:
        return self.ticked & self.topic.certain

    @property
    def false_removals(self) -> set[int]:
        return self.ticked - self.topic.certain - self.topic.possible

    @property
    def ticked_possible(self) -> set[int]:
        return self.ticked & self.topic.possible

    @property
    def certain_unticked(self) -> set[int]:
        return self.topic.certain - self.ticked

    @property
    def not_shown(self) -> set[int]:
        return (self.topic.certain | self.topic.possible) - self.shown

    @property
    def noise(self) -> set[int]:
        """Shown unticked though labelled neither: a reviewer's extra reading."""
        return self.shown - self.ticked - self.topic.certain - self.topic.possible


def topic_preview(actor, topic: Topic, index_of: dict[int, int]) -> TopicResult:
    from memoryhub.surface.forget import memory_forget_preview

    answer = memory_forget_preview(actor=actor, topic=topic.topic)
    ticked, shown, why, unmarked, other = set(), set(), {}, 0, 0
    for match in answer["matches"]:
        index = index_of.get(match["id"])
        if index is None:  # a row the load did not write (a summary, a profile)
            other += 1
            continue
        shown.add(index)
        why[index] = match["why"]
        if "certain" not in match:
            unmarked += 1
        if match.get("certain", True):
            ticked.add(index)
    return TopicResult(
        topic=topic, ticked=ticked, shown=shown, why=why, unmarked=unmarked, other=other
    )


@dataclass
class Figures:
    topics: int = 0
    facts: int = 0
    ticked: int = 0
    right: int = 0
    labelled_certain: int = 0
    labelled_any: int = 0
    shown_labelled: int = 0
    false_removals: int = 0
    ticked_possible: int = 0
    noise: int = 0
    exact_topics: int = 0
    topics_with_false_removal: int = 0
    unmarked: int = 0
    other: int = 0
    preview_ms: dict[str, float] = field(default_factory=dict)

    def add(self, result: TopicResult) -> None:
        labelled = result.topic.certain | result.topic.possible
        self.topics += 1
        self.ticked += len(result.ticked)
        self.right += len(result.right)
        self.labelled_certain += len(result.topic.certain)
        self.labelled_any += len(labelled)
        self.shown_labelled += len(result.shown & labelled)
        self.false_removals += len(result.false_removals)
        self.ticked_possible += len(result.ticked_possible)
        self.noise += len(result.noise)
        self.exact_topics += result.ticked == result.topic.certain
        self.topics_with_false_removal += bool(result.false_removals)
        self.unmarked += result.unmarked
        self.other += result.other

    @property
    def certain_precision(self) -> float:
        return self.right / self.ticked if self.ticked else float("nan")

    @property
    def certain_recall(self) -> float:
        return self.right / self.labelled_certain if self.labelled_certain else float("nan")

    @property
    def possible_recall(self) -> float:
        return self.shown_labelled / self.labelled_any if self.labelled_any else float("nan")

    def as_dict(self) -> dict:
        return {
            "topics": self.topics,
            "facts": self.facts,
            "certain_precision": round(self.certain_precision, 4),
            "certain_recall": round(self.certain_recall, 4),
            "possible_set_recall": round(self.possible_recall, 4),
            "ticked": self.ticked,
            "ticked_right": self.right,
            "false_removals": self.false_removals,
            "ticked_possible": self.ticked_possible,
            "topics_with_false_removal": self.topics_with_false_removal,
            "topics_exactly_right": self.exact_topics,
            "shown_unlabelled": self.noise,
            "matches_without_certain_mark": self.unmarked,
            "matches_outside_the_labelled_facts": self.other,
            "preview_ms": self.preview_ms,
            "targets": {
                "certain_precision": TARGET_PRECISION,
                "certain_recall": TARGET_CERTAIN_RECALL,
                "possible_set_recall": TARGET_POSSIBLE_RECALL,
                "false_removals": 0,
            },
        }


def met(ok: bool) -> str:
    return "yes" if ok else "no"


def totals_print(figures: Figures) -> None:
    f = figures
    print_table(
        f"Forget preview over {f.topics} topics, {f.facts} facts",
        ["figure", "value", "target", "met"],
        [
            [
                "certain precision (ticked and labelled certain / ticked)",
                f"{f.certain_precision:.3f}",
                f"{TARGET_PRECISION:.2f}",
                met(f.certain_precision >= TARGET_PRECISION),
            ],
            [
                "false removals (ticked, labelled neither)",
                f.false_removals,
                "0",
                met(f.false_removals == 0),
            ],
            [
                "labelled-possible facts ticked",
                f.ticked_possible,
                "0",
                met(f.ticked_possible == 0),
            ],
            [
                "certain recall (labelled certain and ticked / labelled certain)",
                f"{f.certain_recall:.3f}",
                f">= {TARGET_CERTAIN_RECALL:.2f}",
                met(f.certain_recall >= TARGET_CERTAIN_RECALL),
            ],
            [
                "possible-set recall (certain or possible, shown / labelled)",
                f"{f.possible_recall:.3f}",
                f">= {TARGET_POSSIBLE_RECALL:.2f}",
                met(f.possible_recall >= TARGET_POSSIBLE_RECALL),
            ],
            ["ticked / labelled certain", f"{f.ticked} / {f.labelled_certain}", "", ""],
            ["topics with a false removal", f.topics_with_false_removal, "0", ""],
            ["topics ticked exactly right", f"{f.exact_topics} / {f.topics}", "", ""],
            ["shown unticked, labelled neither (review noise)", f.noise, "", ""],
        ],
    )


def topics_print(results: list[TopicResult]) -> None:
    print_table(
        "Per topic",
        [
            "topic",
            "certain",
            "possible",
            "ticked",
            "right",
            "false removals",
            "possible ticked",
            "certain unticked",
            "not shown",
            "noise",
        ],
        [
            [
                r.topic.topic,
                len(r.topic.certain),
                len(r.topic.possible),
                len(r.ticked),
                len(r.right),
                len(r.false_removals),
                len(r.ticked_possible),
                len(r.certain_unticked),
                len(r.not_shown),
                len(r.noise),
            ]
            for r in results
        ],
    )


def errors_print(results: list[TopicResult], facts: list[dict]) -> None:
    """Every false removal and every miss, topic by topic, with the preview's why."""

    def line(kind: str, index: int, why: list[str] | None) -> str:
        reason = "; ".join(why) if why else "not in the preview"
        return f"    {kind} #{index}: {facts[index]['content']}  [{reason}]"

    print("\nErrors per topic\n")
    for r in results:
        lines = [line("FALSE REMOVAL", i, r.why.get(i)) for i in sorted(r.false_removals)]
        lines += [line("possible ticked", i, r.why.get(i)) for i in sorted(r.ticked_possible)]
        lines += [
            line("certain unticked" if i in r.shown else "certain missed", i, r.why.get(i))
            for i in sorted(r.certain_unticked)
        ]
        lines += [line("possible missed", i, None) for i in sorted(r.not_shown - r.topic.certain)]
        if lines:
            print(f"  {r.topic.topic!r}")
            print("\n".join(lines))
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--verbose", action="store_true", help="per topic: misses and errors")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data dir")
    args = parser.parse_args()
    labelled = labelled_load(args.data)
    # With --json, stdout is the JSON alone.
    log = sys.stderr if args.json else sys.stdout

    with temp_data_dir("memoryhub-forget-quality-", keep=args.keep) as data_dir:
        # Queued work runs in this process as each write commits, as the tests run it.
        django_setup(bench_env(data_dir, CELERY_TASK_ALWAYS_EAGER="true"))
        from teams.services import Actor

        user, _, _ = bench_user("forgetter")
        started = time.perf_counter()
        ids = facts_store(user, labelled.facts)
        print(
            f"stored and embedded {len(ids)} facts in {time.perf_counter() - started:.0f} s",
            file=log,
            flush=True,
        )
        index_of = {fact_id: index for index, fact_id in enumerate(ids)}
        actor = Actor(user=user)
        topic_preview(actor, labelled.topics[0], index_of)  # warm-up: loads the model
        figures = Figures(facts=len(ids))
        results, seconds = [], []
        for topic in labelled.topics:
            t = time.perf_counter()
            result = topic_preview(actor, topic, index_of)
            seconds.append(time.perf_counter() - t)
            results.append(result)
            figures.add(result)
        timing = Timing.of(seconds)
        figures.preview_ms = {"p50": round(timing.p50, 1), "p95": round(timing.p95, 1)}

    if args.json:
        print(json.dumps({"revision": revision(), **figures.as_dict()}, indent=2))
        return
    print(f"\nForget quality at {revision()}: {machine_note()}")
    if figures.unmarked:
        print(
            f'{figures.unmarked} matches carry no "certain" mark and count as ticked '
            "(every match of the preview is removed on confirmation)."
        )
    if figures.other:
        print(f"{figures.other} matches are rows the load did not write; left out of the figures.")
    totals_print(figures)
    print(f"\npreview p50 {timing.p50:.0f} ms, p95 {timing.p95:.0f} ms per topic")
    if args.verbose:
        topics_print(results)
        errors_print(results, labelled.facts)


if __name__ == "__main__":
    main()
