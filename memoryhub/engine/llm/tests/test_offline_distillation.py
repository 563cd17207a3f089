"""Offline summaries and profile on a labelled set: one user's mixed facts (their
preferences, habits, tools and role, a couple of services, people they know)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memoryhub.engine.llm import OfflineProvider, SourceText
from memoryhub.engine.llm.offline import NOTHING_KNOWN

offline = OfflineProvider()

# (topic, category, fact, the words of it a summary must state)
LABELLED = [
    ("ui", "preference", "I prefer minimal UIs.", "minimal UIs"),
    ("ledgerd", "fact", "Ledgerd is written in Rust.", "written in Rust"),
    ("ui", "preference", "The user likes structured logging.", "structured logging"),
    ("ledgerd", "fact", "Ledgerd runs on Kubernetes in us-east-1.", "us-east-1"),
    ("people", "relationship", "Alice is my manager.", "manager"),
    ("work", "fact", "I build Rust backends.", "builds Rust backends"),
    ("gateway", "fact", "The API gateway is Envoy.", "Envoy"),
    ("ledgerd", "fact", "Ledgerd is owned by the payments team.", "owned by the payments team"),
    ("work", "pattern", "I usually deploy with Docker on Kubernetes.", "Docker on Kubernetes"),
    ("work", "fact", "I work as a backend engineer at Acme.", "backend engineer at Acme"),
    ("ui", "personality", "I am direct and patient.", "direct and patient"),
    ("people", "relationship", "Bob leads the payments team.", "Bob leads"),
    ("gateway", "fact", "The API gateway terminates TLS for every service.", "terminates TLS"),
    ("ledgerd", "fact", "Ledgerd stores its ledger in PostgreSQL 16.", "PostgreSQL 16"),
    ("ui", "preference", "I prefer dark mode in VS Code.", "dark mode in VS Code"),
    ("people", "relationship", "Alice works in Berlin.", "Berlin"),
    ("work", "fact", "My editor is Neovim.", "Neovim"),
    ("work", "pattern", "I review pull requests every morning.", "pull requests every morning"),
]
TOPICS = sorted({topic for topic, *_ in LABELLED})


def labelled(*, vectors: bool) -> list[SourceText]:
    """The set, with vectors that place each fact near its topic's when asked."""
    rng = np.random.default_rng(7)
    items = []
    for n, (topic, category, text, _) in enumerate(LABELLED, 1):
        vector = None
        if vectors:
            base = np.zeros(32)
            base[TOPICS.index(topic)] = 1.0
            vector = tuple(float(x) for x in base + rng.normal(0, 0.15, 32))
        items.append(SourceText(id=n, text=text, category=category, vector=vector))
    return items


@pytest.mark.parametrize("vectors", [True, False], ids=["vectors", "words"])
def test_every_summary_states_every_fact_it_cites(vectors: bool) -> None:
    summaries = offline.summarize(labelled(vectors=vectors), max_summaries=5).summaries

    assert 1 <= len(summaries) <= 5
    cited = [i for summary in summaries for i in summary.source_ids]
    assert sorted(cited) == list(range(1, len(LABELLED) + 1))  # each once, none left out
    for summary in summaries:
        for source_id in summary.source_ids:
            assert LABELLED[source_id - 1][3] in summary.text, summary.text


@pytest.mark.parametrize("vectors", [True, False], ids=["vectors", "words"])
def test_facts_about_one_thing_are_summarised_together_under_its_name(vectors: bool) -> None:
    summaries = offline.summarize(labelled(vectors=vectors), max_summaries=5).summaries

    ledgerd = {n for n, (topic, *_) in enumerate(LABELLED, 1) if topic == "ledgerd"}
    (home,) = [s for s in summaries if ledgerd & set(s.source_ids)]
    assert ledgerd <= set(home.source_ids)
    assert "Ledgerd: written in Rust; runs on Kubernetes in us-east-1; owned by the " in home.text
    assert home.text.count("Ledgerd") == 1  # named once
    gateway = next(s for s in summaries if 7 in s.source_ids)
    assert 13 in gateway.source_ids and "API gateway: Envoy; terminates TLS" in gateway.text


def test_with_vectors_each_summary_keeps_to_one_topic() -> None:
    summaries = offline.summarize(labelled(vectors=True), max_summaries=5).summaries

    for summary in summaries:
        assert len({LABELLED[i - 1][0] for i in summary.source_ids}) == 1, summary.text


def test_the_profile_is_about_the_user_not_the_services() -> None:
    profile = offline.describe_user(labelled(vectors=False))

    assert profile.startswith("Works as a backend engineer at Acme.")
    assert "Prefers minimal UIs and dark mode in VS Code; likes structured logging." in profile
    for words in ("Direct and patient", "Docker on Kubernetes", "Builds Rust backends", "Neovim"):
        assert words in profile
    for unrelated in ("Ledgerd", "Envoy", "gateway", "Alice", "Bob", "Berlin", "PostgreSQL"):
        assert unrelated not in profile


def test_a_profile_says_so_when_nothing_is_known_about_the_user() -> None:
    about_others = [s for s in labelled(vectors=False) if s.text.startswith(("Ledgerd", "The API"))]

    assert offline.describe_user(about_others) == NOTHING_KNOWN
    assert offline.describe_user([]) == NOTHING_KNOWN


def test_a_preference_naming_nothing_else_is_the_users() -> None:
    items = [
        SourceText(id=1, text="Tabs over spaces.", category="preference"),
        SourceText(id=2, text="Ledgerd prefers Postgres.", category="preference"),
    ]

    assert offline.describe_user(items) == "Tabs over spaces."


def test_what_does_not_fit_is_not_cited() -> None:
    items = [
        SourceText(id=n, text=f"Ledgerd handles payment batch number {n} for the bank.")
        for n in range(1, 40)
    ]

    summaries = offline.summarize(items, max_summaries=1, max_characters=300).summaries

    (summary,) = summaries
    assert len(summary.text) <= 300
    assert summary.source_ids and len(summary.source_ids) < len(items)
    for source_id in summary.source_ids:
        assert f"batch number {source_id} " in summary.text


def test_five_hundred_facts_are_distilled_quickly_and_alike_every_time() -> None:
    rng = np.random.default_rng(3)
    topics = ["Ledgerd", "the billing service", "Alice", "the API gateway", "I"]
    items = []
    for n in range(500):
        topic = topics[n % len(topics)]
        verb = "use" if topic == "I" else "uses"
        vector = tuple(float(x) for x in rng.normal(0, 1, 384))
        items.append(
            SourceText(id=n + 1, text=f"{topic} {verb} tool{n} — ünïcode ✓ 東京.", vector=vector)
        )

    started = time.perf_counter()
    first = offline.summarize(items, max_summaries=5)
    profile = offline.describe_user(items)
    elapsed = time.perf_counter() - started

    assert elapsed < 2.0
    assert first == offline.summarize(items, max_summaries=5)
    assert 1 <= len(first.summaries) <= 5
    assert all(len(s.text) <= 2000 for s in first.summaries)
    assert profile.startswith("Uses tool4")
