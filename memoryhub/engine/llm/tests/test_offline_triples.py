"""Pattern triples on small hand-made texts."""

from __future__ import annotations

import pytest

from memoryhub.engine.llm import OfflineProvider, SourceText

offline = OfflineProvider()


def triples_of(text: str) -> list[tuple[str, str, str, str, str]]:
    result = offline.extract_triples(text)
    assert result.provider == "offline"
    return [
        (t.subject, t.subject_type, t.relation, t.object, t.object_type) for t in result.triples
    ]


@pytest.mark.parametrize(
    ("text", "triple"),
    [
        (
            "Alice Smith works at Acme Corp.",
            ("Alice Smith", "person", "works_at", "Acme Corp", "organisation"),
        ),
        ("Carol lives in Berlin.", ("Carol", "other", "located_in", "Berlin", "place")),
        (
            "The billing service runs on Kubernetes.",
            ("billing service", "concept", "runs_on", "Kubernetes", "tool"),
        ),
        ("I use vim every day.", ("user", "person", "uses", "vim", "tool")),
        (
            "I'm working on Project Atlas.",
            ("user", "person", "works_on", "Project Atlas", "project"),
        ),
        (
            "Stripe is a payment processor.",
            ("Stripe", "organisation", "is_a", "payment processor", "concept"),
        ),
        (
            "The checkout-api depends on the ledger-api.",
            ("checkout-api", "other", "depends_on", "ledger-api", "other"),
        ),
        ("Bob is my manager.", ("Bob", "person", "manager_of", "user", "person")),
        ("Redis was replaced by Valkey.", ("Valkey", "tool", "replaced", "Redis", "tool")),
    ],
)
def test_a_verb_pattern_between_named_things_is_a_triple(
    text: str, triple: tuple[str, str, str, str, str]
) -> None:
    assert triples_of(text) == [triple]


@pytest.mark.parametrize(
    ("text", "triple"),
    [
        ("I went to Lisbon last week.", ("user", "person", "visited", "Lisbon", "place")),
        ("Caroline has been to Sweden.", ("Caroline", "person", "visited", "Sweden", "place")),
        ("We travelled to Japan in May.", ("user", "person", "visited", "Japan", "place")),
        ("I took up pottery.", ("user", "person", "does", "pottery", "concept")),
        ("Melanie plays the violin.", ("Melanie", "person", "does", "violin", "concept")),
        ("I attended a Pride parade.", ("user", "person", "attends", "Pride parade", "concept")),
        (
            "I adopted a puppy named Oscar.",
            ("user", "person", "has", "puppy named oscar", "concept"),
        ),
        (
            "I want to become a counselor.",
            ("user", "person", "plans", "become a counselor", "concept"),
        ),
        ("I really enjoy hiking.", ("user", "person", "prefers", "hiking", "concept")),
    ],
)
def test_what_people_say_they_did_in_a_conversation_is_a_triple(
    text: str, triple: tuple[str, str, str, str, str]
) -> None:
    assert triples_of(text) == [triple]


@pytest.mark.parametrize(
    "text",
    [
        "Looks like you had a great day!",
        "It feels like home.",
        "I had a lot of fun last year.",
        "We have been busy.",
    ],
)
def test_comparisons_and_small_talk_in_a_conversation_give_no_triple(text: str) -> None:
    assert triples_of(text) == []


def test_a_second_verb_shares_the_subject_and_types_stay_consistent() -> None:
    assert triples_of("Alice works at Acme Corp and uses PostgreSQL.") == [
        ("Alice", "person", "works_at", "Acme Corp", "organisation"),
        ("Alice", "person", "uses", "PostgreSQL", "tool"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "I no longer use Windows.",
        "Dana doesn't work at Initech.",
        "Django is great.",
        "the weather is nice and it is sunny.",
        "Is Bob my manager?",
        "",
    ],
)
def test_negations_adjectives_and_unnamed_things_give_no_triple(text: str) -> None:
    assert triples_of(text) == []


def test_each_triple_names_the_source_it_came_from_and_repeats_count_once() -> None:
    result = offline.extract_triples(
        [
            SourceText(id=4, text="Alice works at Acme Corp. Alice works at Acme Corp."),
            SourceText(id=9, text="Acme Corp uses Kafka."),
        ]
    )

    assert [(t.subject, t.relation, t.object, t.source_id) for t in result.triples] == [
        ("Alice", "works_at", "Acme Corp", 4),
        ("Acme Corp", "uses", "Kafka", 9),
    ]
    assert all(0 < t.confidence <= 1 for t in result.triples)


@pytest.mark.parametrize(
    ("text", "things"),
    [
        ("Deploys go through Argo CD.", {"Argo CD": "", "Deploys": "Deploys"}),
        ("Prefers Vim over Emacs.", {"Prefers Vim": "Prefers", "Emacs": ""}),
        ("Note: Atlas is down.", {"Atlas": "Atlas"}),
        ("Incidents:\n1) Atlas is down", {"Incidents": "Incidents", "Atlas": "Atlas"}),
        ("- Kafka is slow", {"Kafka": ""}),
        ("Marta Kowalski joined in May.", {"Marta Kowalski": "Marta"}),
        ("The Atlas project uses PostgreSQL.", {"Atlas": "", "PostgreSQL": ""}),
        ("We moved Atlas to k8s. Atlas is down.", {"Atlas": "", "k8s": ""}),
    ],
)
def test_a_name_capitalised_only_by_its_place_carries_its_first_word(text, things) -> None:
    from memoryhub.engine.llm.offline.triples import named_things

    found = named_things(text)
    assert {t.name: t.opener for t in found} == things
    runs = {t.name: (t.rest.name, t.ordinary) for t in found if t.rest is not None}
    assert runs == {
        "Prefers Vim over Emacs.": {"Prefers Vim": ("Vim", True)},
        "Marta Kowalski joined in May.": {"Marta Kowalski": ("Kowalski", False)},
    }.get(text, {})


def test_a_name_led_or_ended_by_project_is_a_project() -> None:
    from memoryhub.engine.llm.offline.triples import extract_triples, named_things

    text = "Marta leads Project Atlas. We moved the Hermes Project to k8s. Atlas uses Redis."
    types = {thing.name: thing.type for thing in named_things(text)}
    assert types["Project Atlas"] == types["Hermes Project"] == "project"
    assert types["Redis"] == "tool"
    (leads,) = [t for t in extract_triples(text) if t.subject == "Marta"]
    assert leads.object == "Project Atlas" and leads.object_type == "project"
