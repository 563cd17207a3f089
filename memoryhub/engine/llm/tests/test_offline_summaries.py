"""Offline summaries on small hand-made sets of facts."""

from __future__ import annotations

from memoryhub.engine.llm import OfflineProvider, SourceText

offline = OfflineProvider()

EDITOR = [
    "The user prefers dark mode in VS Code.",
    "The user uses VS Code with the Vim keybindings.",
    "The user's VS Code theme is Solarized Dark.",
    "The user dislikes light themes in VS Code.",
]
BILLING = [
    "The billing service runs on Kubernetes.",
    "The billing service stores invoices in PostgreSQL 16.",
    "Invoices of the billing service are generated every night.",
    "The billing service staging host is dbstage01.",
]
DOG = [
    "The user has a dog named Rex.",
    "Rex the dog is three years old.",
    "The user walks Rex every morning.",
    "Rex likes the park near the office.",
]


def sources(*groups: list[str]) -> list[SourceText]:
    texts = [text for group in groups for text in group]
    return [SourceText(id=100 + i, text=text) for i, text in enumerate(texts)]


def ids_of(items: list[SourceText], group: list[str]) -> set[int]:
    return {s.id for s in items if s.text in group}


def test_related_facts_are_summarised_together_and_every_fact_is_cited_once() -> None:
    items = sources(EDITOR, BILLING, DOG)

    result = offline.summarize(items, max_summaries=5)

    assert result.provider == "offline"
    cited = [i for summary in result.summaries for i in summary.source_ids]
    assert sorted(cited) == [s.id for s in items]
    groups = {frozenset(summary.source_ids) for summary in result.summaries}
    assert groups == {
        frozenset(ids_of(items, EDITOR)),
        frozenset(ids_of(items, BILLING)),
        frozenset(ids_of(items, DOG)),
    }


def test_a_summary_names_its_subject_once_and_states_what_each_fact_says() -> None:
    items = sources(BILLING)

    (summary,) = offline.summarize(items, max_summaries=3).summaries

    assert summary.text.startswith("Billing service: runs on Kubernetes; stores invoices in ")
    assert sorted(summary.source_ids) == [s.id for s in items]
    for words in ("Kubernetes", "PostgreSQL 16", "every night", "dbstage01"):
        assert words in summary.text


def test_one_summary_covers_every_topic() -> None:
    items = sources(EDITOR, BILLING, DOG)

    (profile,) = offline.summarize(items, max_summaries=1).summaries

    assert sorted(profile.source_ids) == [s.id for s in items]
    for words in ("Solarized Dark", "dbstage01", "three years old", "park near the office"):
        assert words in profile.text


def test_repeated_sentences_are_not_picked_twice() -> None:
    items = [
        SourceText(id=1, text="The user prefers tea."),
        SourceText(id=2, text="The user prefers tea."),
        SourceText(id=3, text="The user prefers green tea in the morning."),
        SourceText(id=4, text="The user drinks tea with lemon."),
    ]

    (summary,) = offline.summarize(items).summaries

    assert summary.text.count("The user prefers tea.") <= 1
    assert sorted(summary.source_ids) == [1, 2, 3, 4]


def test_the_same_input_gives_the_same_summaries() -> None:
    items = sources(DOG, EDITOR, BILLING)

    assert offline.summarize(items) == offline.summarize(items)


def test_no_text_gives_no_summary_and_odd_text_gives_one() -> None:
    assert offline.summarize([]).summaries == []
    assert offline.summarize([SourceText(id=1, text=" ")]).summaries == []
    assert offline.summarize(sources(EDITOR), max_summaries=0).summaries == []
    (odd,) = offline.summarize([SourceText(id=5, text="!!! ??? ...")]).summaries
    assert odd.source_ids == [5]
    long = "word " * 3000
    (clipped,) = offline.summarize([SourceText(id=6, text=long)]).summaries
    assert len(clipped.text) <= 2000


def test_odd_and_huge_texts_give_results_for_every_job() -> None:
    odd = [
        "I prefer " + "very " * 5000 + "long answers.",
        "a " * 20000,
        "Alice " * 5000 + "works at Acme.",
        "I prefer \ud800 tea. Remember that \udfff is odd.",
        "\n\n\n",
        "Ich bevorzuge Kaffee. Ёжик живёт в Москве. 東京は大きい。",
    ]
    for text in odd:
        facts = offline.extract_facts(text).facts
        triples = offline.extract_triples(text).triples
        summaries = offline.summarize([SourceText(id=1, text=text)]).summaries
        for fact in facts:
            assert 0 < len(fact.content) <= 2000 and len(fact.excerpt) <= 200
            assert "\ud800" not in fact.content
        assert all(len(t.subject) <= 200 and len(t.object) <= 200 for t in triples)
        assert all(len(s.text) <= 2000 for s in summaries)
