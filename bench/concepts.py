"""The concept graph: offline triples against a labelled set, extraction on LoCoMo, and
graph queries on a large scope.

    python bench/concepts.py [--data DIR] [--limit-conversations N] [--edges N]
        [--queries N] [--skip-locomo] [--skip-queries] [--triples] [--misses]

Offline triples (``--triples`` runs this part alone; ``--misses`` lists what went
wrong): the statements of ``bench/data/concept_triples.json``, written by hand (people
and roles, services and where they run, tools and what uses them, places, preferences,
and statements that state no relation), each with the triples it states; then those of
``concept_triples_heldout.json``, written the same way after the rules were tuned on
the first set and never used to tune them. Each
statement is read alone by the offline rules, and their triples kept as the graph
keeps them (both ends named by the statement, the two ends not one entity). A triple
extracted matches a labelled one of the same statement when the relation is the same
and both ends have the same entity key (``concepts.normalise.entity_key``: case,
spacing, leading articles and possessive words, a trailing possessive, plurals of a
name's last word, "the Atlas project" as "Atlas": what the graph itself takes for one
entity); "user" is the writer. Each labelled triple matches at most one extracted
triple. Precision is matched / extracted, recall matched / labelled, over all
statements and by kind. Types: of the names a statement's label types ("Snowflake" a
tool), the share the extracted triples type so, and how many well-known tools some
triple types as a project.

Extraction: each LoCoMo dev conversation (see the shared bench README) is stored as
facts, one per turn, owned by its speaker (so "I" is the speaker's own node), then the
graph is built with the offline rules (and with the chat model when
MEMORYHUB_BENCH_LLM_URL and MEMORYHUB_BENCH_LLM_MODEL are set). Reports facts per
second, and for the multi-hop questions (category 1) with two or more evidence turns,
the share whose evidence turns are all connected within 2 hops: two turns are when an
entity one mentions is at most 2 edges from an entity the other mentions. Beside it,
the same share in a graph of random edges with the same degree sequence (the same
mentions, edges rewired by shuffling their ends).

Queries: one scope of ``--edges`` triples (default 100,000) over a fifth as many
entities, stated by facts of one user, read through the selectors: an entity's
relations (neighbours) and a 3-hop path between two entities, p50 / p95, beside a
baseline that loads the visible edges into memory and searches there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _env import REPO_ROOT, bench_env, django_setup, machine_note, temp_data_dir
from _tables import Timing, print_table

DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench" / "locomo-dev"
LABELLED_TRIPLES = [
    Path(__file__).resolve().parent / "data" / name
    for name in ("concept_triples.json", "concept_triples_heldout.json")
]
TARGET_PRECISION, TARGET_RECALL = 0.9, 0.6


# --- Offline triples against the labelled set ---------------------------------------------


def _end(name: str) -> str:
    from concepts.normalise import USER_NAME, entity_key

    return USER_NAME if name.strip().casefold() == USER_NAME else entity_key(name)


def kept_triples(text: str) -> list:
    """The offline triples of ``text`` as the graph keeps them (see the services)."""
    from concepts.normalise import name_stated_in
    from memoryhub.engine.llm import OfflineProvider

    kept = []
    for t in OfflineProvider().extract_triples(text).triples:
        if not (name_stated_in(t.subject, text) and name_stated_in(t.object, text)):
            continue
        if _end(t.subject) == _end(t.object):
            continue
        kept.append(t)
    return kept


def triples_scored(path: Path, show_misses: bool) -> tuple[list[list[object]], list[list[object]]]:
    """Rows of the precision / recall table (by kind, then all) and of the types table."""
    statements = json.loads(path.read_text())["statements"]
    counts: dict[str, list[int]] = defaultdict(
        lambda: [0, 0, 0, 0]
    )  # statements, labelled, extracted, matched
    typed = right = 0
    tools_as_projects: set[str] = set()
    for statement in statements:
        got = kept_triples(statement["text"])
        wanted = [(_end(s), r, _end(o)) for s, r, o in statement["triples"]]
        left = list(wanted)
        wrong = []
        for t in got:
            key = (_end(t.subject), t.relation, _end(t.object))
            if key in left:
                left.remove(key)
            else:
                wrong.append(f"{t.subject} -{t.relation}-> {t.object}")
        matched = len(wanted) - len(left)
        for kind in (statement["kind"], "all"):
            row = counts[kind]
            row[0] += 1
            row[1] += len(wanted)
            row[2] += len(got)
            row[3] += matched
        types = {}
        for t in got:
            types.setdefault(_end(t.subject), t.subject_type)
            types.setdefault(_end(t.object), t.object_type)
        for name, kind in statement.get("types", {}).items():
            typed += 1
            right += types.get(_end(name)) == kind
            if kind == "tool" and types.get(_end(name)) == "project":
                tools_as_projects.add(name)
        if show_misses and (wrong or left):
            print(f"- {statement['text']}")
            for line in wrong:
                print(f"    extra:   {line}")
            for s, r, o in left:
                print(f"    missing: {s} -{r}-> {o}")

    def share(a: int, b: int) -> str:
        return f"{a / b:.3f}" if b else "-"

    rows = []
    for kind in [*(k for k in counts if k != "all"), "all"]:
        statements_n, labelled, extracted, matched = counts[kind]
        rows.append(
            [
                kind,
                statements_n,
                labelled,
                extracted,
                matched,
                share(matched, extracted),
                f">= {TARGET_PRECISION}" if kind == "all" else "",
                share(matched, labelled),
                f">= {TARGET_RECALL}" if kind == "all" else "",
            ]
        )
    type_rows = [
        ["labelled names typed as labelled", typed, share(right, typed), ""],
        ["well-known tools typed project", typed, len(tools_as_projects), "0"],
    ]
    return rows, type_rows


def triples_report(path: Path, show_misses: bool) -> None:
    rows, type_rows = triples_scored(path, show_misses)
    print_table(
        f"Offline triples against {path.name} (matched by entity key and relation)",
        ["kind", "statements", "labelled", "extracted", "matched", "precision", "target",
         "recall", "target"],
        rows,
    )  # fmt: skip
    print_table("Entity types of the labelled names", ["", "names", "figure", "target"], type_rows)


# --- LoCoMo -------------------------------------------------------------------------------


def turns_of(conversation: dict) -> list[tuple[str, str, str]]:
    """(dia_id, speaker, text) of every turn."""
    out = []
    session = 1
    while f"session_{session}" in conversation:
        for turn in conversation[f"session_{session}"]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            out.append((turn["dia_id"], turn["speaker"], text))
        session += 1
    return out


def within(adjacency: dict[int, set[int]], sources: set[int], targets: set[int], hops: int) -> bool:
    """Whether some entity of ``sources`` is at most ``hops`` edges from one of ``targets``."""
    seen, frontier = set(sources), set(sources)
    for _ in range(hops + 1):
        if seen & targets:
            return True
        frontier = {n for node in frontier for n in adjacency.get(node, ())} - seen
        seen |= frontier
    return bool(seen & targets)


def connected_share(
    questions: list[list[int]], mentions: dict[int, set[int]], edges: list[tuple[int, int]]
) -> float:
    adjacency: dict[int, set[int]] = defaultdict(set)
    for s, o in edges:
        adjacency[s].add(o)
        adjacency[o].add(s)
    good = 0
    for facts in questions:
        if all(
            within(adjacency, mentions.get(a, set()), mentions.get(b, set()), 2)
            for i, a in enumerate(facts)
            for b in facts[i + 1 :]
        ):
            good += 1
    return good / len(questions) if questions else float("nan")


def rewired(edges: list[tuple[int, int]], rng: random.Random) -> list[tuple[int, int]]:
    """Edges with the same degree sequence, their ends shuffled (configuration model)."""
    stubs = [n for edge in edges for n in edge]
    rng.shuffle(stubs)
    return list(zip(stubs[::2], stubs[1::2], strict=True))


def locomo(data: Path, limit: int, provider_name: str, provider) -> list[list[object]]:
    from django.contrib.auth import get_user_model

    from concepts.models import Mention, Triple
    from concepts.services import concept_graph_sync
    from facts.models import Fact

    rows = []
    for path in sorted(data.glob("*.json"))[:limit]:
        conversation = json.loads(path.read_text())
        turns = turns_of(conversation)
        users = {}
        for _, speaker, _ in turns:
            if speaker not in users:
                users[speaker] = get_user_model().objects.create_user(
                    username=f"{path.stem}-{speaker}"
                )
        facts = Fact.objects.bulk_create(
            Fact(owner=users[speaker], content=text, visibility="global")
            for _, speaker, text in turns
        )
        fact_of = {dia: fact.pk for (dia, _, _), fact in zip(turns, facts, strict=True)}
        ids = list(fact_of.values())
        began = time.perf_counter()
        concept_graph_sync(facts=Fact.objects.filter(pk__in=ids), provider=provider)
        seconds = time.perf_counter() - began
        mentions: dict[int, set[int]] = defaultdict(set)
        for fact_id, entity_id in Mention.objects.filter(fact_id__in=ids).values_list(
            "fact_id", "entity_id"
        ):
            mentions[fact_id].add(entity_id)
        edges = list(
            Triple.objects.filter(fact_id__in=ids).values_list("subject_id", "object_id").distinct()
        )
        questions = [
            [fact_of[e] for e in q["evidence"] if e in fact_of]
            for q in conversation["qa"]
            if q.get("category") == 1
        ]
        questions = [q for q in questions if len(set(q)) >= 2]
        graph = connected_share(questions, mentions, edges)
        shares = [connected_share(questions, mentions, rewired(edges, random.Random(s)))
                  for s in range(5)]  # fmt: skip
        rows.append(
            [
                path.stem,
                provider_name,
                len(ids),
                f"{len(ids) / seconds:.0f}",
                len(edges),
                sum(1 for f in ids if mentions.get(f)) / len(ids),
                len(questions),
                graph,
                sum(shares) / len(shares),
            ]
        )
    return rows


# --- Queries ------------------------------------------------------------------------------


def build_scope(edges: int, rng: random.Random):
    """One user's facts stating ``edges`` triples over ``edges // 5`` entities, written as
    rows directly (the extraction is measured above)."""
    from django.contrib.auth import get_user_model

    from concepts.models import Entity, EntityRefKey, Mention, Triple
    from concepts.normalise import entity_ref
    from facts.models import Fact

    user = get_user_model().objects.create_user(username="graph-owner")
    per_fact = 4
    facts = Fact.objects.bulk_create(
        Fact(owner=user, content=f"statement {n}", visibility="private")
        for n in range(edges // per_fact)
    )
    secret = EntityRefKey.current()
    entities = Entity.objects.bulk_create(
        Entity(key=f"e{n}", ref=entity_ref(f"e{n}", secret=secret))
        for n in range(max(10, edges // 5))
    )
    ids = [e.pk for e in entities]
    # A few hubs, many leaves: ends drawn with a skew, as real graphs have.
    weights = [1 / (rank + 10) for rank in range(len(ids))]
    triples, mentions = [], {}
    for fact in facts:
        for _ in range(per_fact):
            s, o = rng.choices(ids, weights=weights, k=2)
            if s == o:
                continue
            triples.append(Triple(subject_id=s, relation="uses", object_id=o, fact_id=fact.pk))
            for entity in (s, o):
                mentions[(entity, fact.pk)] = Mention(
                    entity_id=entity, fact_id=fact.pk, name=f"e{entity}", raw_key=f"e{entity}"
                )
    Triple.objects.bulk_create(triples, batch_size=5000, ignore_conflicts=True)
    Mention.objects.bulk_create(mentions.values(), batch_size=5000)
    return user, ids


def baseline_edges(user) -> dict[int, set[tuple[int, str, int]]]:
    """The in-memory alternative: every visible edge loaded, by node."""
    from concepts.selectors import concept_triples_visible

    adjacency: dict[int, set[tuple[int, str, int]]] = defaultdict(set)
    for s, r, o in concept_triples_visible(user=user).values_list(
        "subject_id", "relation", "object_id"
    ):
        adjacency[s].add((s, r, o))
        adjacency[o].add((s, r, o))
    return adjacency


def baseline_path(adjacency, start: int, end: int, hops: int) -> bool:
    seen, frontier = {start}, {start}
    for _ in range(hops):
        frontier = {n for node in frontier for s, _, o in adjacency[node] for n in (s, o)} - seen
        if end in frontier:
            return True
        seen |= frontier
    return False


def queries(edges: int, count: int) -> list[list[object]]:
    from concepts.models import Entity
    from concepts.selectors import (
        concept_entity_find_visible,
        concept_entity_get_visible,
        concept_paths,
        concept_relations,
        concept_triples_visible,
    )

    rng = random.Random(3)
    user, ids = build_scope(edges, rng)
    stored = concept_triples_visible(user=user).count()
    picks = [rng.choice(ids[: len(ids) // 2]) for _ in range(count)]
    refs = dict(Entity.objects.filter(pk__in=picks).values_list("pk", "ref"))
    views = {}
    for entity in set(picks):
        try:
            views[entity] = concept_entity_get_visible(user=user, ref=refs[entity])
        except Exception:  # an entity no triple drew
            continue
    picks = [p for p in picks if p in views]
    neighbours, queries_by_name, paths, load, base_paths = [], [], [], [], []
    for entity in picks:
        began = time.perf_counter()
        concept_relations(user=user, entity=views[entity], limit=50)
        neighbours.append(time.perf_counter() - began)
    for entity in picks:  # what GET /query?entity=NAME does: find the entity, then this
        began = time.perf_counter()
        found = concept_entity_find_visible(user=user, name=views[entity].name)
        concept_relations(user=user, entity=found, limit=50)
        queries_by_name.append(time.perf_counter() - began)
    pairs = [(rng.choice(picks), rng.choice(picks)) for _ in range(count)]
    found = 0
    for a, b in pairs:
        began = time.perf_counter()
        found += bool(concept_paths(user=user, start=views[a], end=views[b], max_hops=3, limit=1))
        paths.append(time.perf_counter() - began)
    for a, b in pairs[: max(3, count // 10)]:
        began = time.perf_counter()
        adjacency = baseline_edges(user)
        load.append(time.perf_counter() - began)
        began = time.perf_counter()
        baseline_path(adjacency, a, b, 3)
        base_paths.append(time.perf_counter() - began + load[-1])
    rows = []
    for name, seconds, target in (
        ("neighbours (selector, SQL)", neighbours, "<= 20 ms"),
        ("  the entity found by name first, as the query endpoint does", queries_by_name, ""),
        ("3-hop path (selector, BFS per hop in SQL)", paths, "<= 100 ms"),
        ("3-hop path (baseline: load visible edges + BFS)", base_paths, ""),
        ("  of which loading the edges", load, ""),
    ):
        timing = Timing.of(seconds)
        rows.append([name, stored, timing.n, f"{timing.p50:.1f}", f"{timing.p95:.1f}", target])
    rows.append(["paths found", stored, len(pairs), found, "", ""])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit-conversations", type=int, default=5)
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--skip-queries", action="store_true")
    parser.add_argument("--triples", action="store_true", help="only the offline triples")
    parser.add_argument("--misses", action="store_true", help="list the triples missed or wrong")
    parser.add_argument("--labelled", type=Path, nargs="+", default=LABELLED_TRIPLES)
    args = parser.parse_args()

    with temp_data_dir("memoryhub-bench-concepts-") as data_dir:
        django_setup(bench_env(data_dir))
        print(machine_note())
        for path in args.labelled:
            triples_report(path, args.misses)
        if args.triples:
            return
        if not args.skip_locomo:
            from memoryhub.engine.llm import OfflineProvider, get_chat_provider

            providers = [("offline", OfflineProvider())]
            url, model = (
                os.environ.get("MEMORYHUB_BENCH_LLM_URL"),
                os.environ.get("MEMORYHUB_BENCH_LLM_MODEL"),
            )
            if url and model:
                providers.append((model, get_chat_provider(url=url, model=model)))
            rows = []
            for name, provider in providers:
                rows += locomo(args.data, args.limit_conversations, name, provider)
            print_table(
                "Extraction on LoCoMo dev; multi-hop evidence connected within 2 hops",
                ["conversation", "provider", "facts", "facts/s", "edges", "facts with entities",
                 "multi-hop questions", "connected (graph)", "connected (random, same degree)"],
                rows,
            )  # fmt: skip
        if not args.skip_queries:
            print_table(
                f"Graph queries in one scope of {args.edges:,} triples (ms)",
                ["query", "visible triples", "n", "p50", "p95", "target"],
                queries(args.edges, args.queries),
            )


if __name__ == "__main__":
    main()
