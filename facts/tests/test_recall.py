"""Hybrid recall: relevance, bounds, project isolation, access and the off switches."""

import time

import pytest

from facts.models import Fact
from facts.recall import fact_recall
from facts.selectors import fact_search
from memoryhub.engine.embeddings.tests.conftest import Reply, hang, serve  # noqa: F401
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.models import MemoryConfig
from teams.models import AuditEvent
from teams.services import Actor

# Outside a test transaction, as recall runs in production (the vector search reads an
# in-memory copy of committed vectors there).
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def memories(owner, remember):
    texts = [
        ("The user prefers dark mode in every editor", "preference"),
        ("Production runs on Kubernetes in the Frankfurt region", "fact"),
        ("The team deploys every Tuesday after the standup", "pattern"),
        ("Bob is the tech lead of the payments squad", "relationship"),
        ("The user is allergic to peanuts", "fact"),
    ]
    return [remember(owner, text, category=category) for text, category in texts]


def recall(user, query: str, **kwargs):
    return fact_recall(actor=Actor(user=user), query=query, **kwargs)


def test_keyword_and_meaning_both_find_the_fact(owner, memories):
    by_words = recall(owner, "Kubernetes region")
    assert by_words.items[0].fact.content.startswith("Production runs on Kubernetes")
    assert by_words.items[0].bm25_rank == 1
    by_meaning = recall(owner, "which colour theme should the IDE use?")
    assert by_meaning.mode == "hybrid"
    assert by_meaning.items[0].fact.content == "The user prefers dark mode in every editor"
    assert by_meaning.items[0].vector_rank == 1


def test_vectors_are_searched_beside_the_words_outside_a_transaction(owner, memories, monkeypatch):
    import threading

    from django.db import transaction

    from facts.search import FACT_VECTORS

    searched_on: list[str] = []
    knn = type(FACT_VECTORS).knn

    def recording(index, *args, **kwargs):
        searched_on.append(threading.current_thread().name)
        return knn(index, *args, **kwargs)

    monkeypatch.setattr(type(FACT_VECTORS), "knn", recording)
    beside = recall(owner, "which colour theme should the IDE use?", touch=False)
    with transaction.atomic():
        in_turn = recall(owner, "which colour theme should the IDE use?", touch=False)
    assert searched_on[0].startswith("search-beside")
    assert searched_on[1] == threading.current_thread().name
    assert [i.id for i in beside.items] == [i.id for i in in_turn.items]
    assert [i.score for i in beside.items] == pytest.approx([i.score for i in in_turn.items])
    assert beside.items[0].vector_rank == 1


def test_block_is_ready_for_a_system_prompt(owner, memories):
    result = recall(owner, "food allergies")
    assert result.block.startswith("## Recalled Facts\n- [fact] The user is allergic to peanuts")


def test_score_components_are_reported(owner, memories):
    item = recall(owner, "Kubernetes").items[0].as_dict()
    assert set(item) >= {
        "id",
        "content",
        "category",
        "score",
        "bm25_rank",
        "vector_rank",
        "fused",
        "boosts",
    }
    assert set(item["boosts"]) == {"importance", "recency", "access"}
    assert item["score"] == pytest.approx(item["fused"] + sum(item["boosts"].values()), abs=1e-5)
    # The fused score is the sum of the ranking stages' shares, each reported.
    assert item["fused"] == pytest.approx(sum(item["signals"].values()), abs=1e-5)
    assert {"bm25", "vector", "coverage"} <= set(item["signals"])


def test_max_items_and_char_budget_bound_the_block(owner, remember):
    for i in range(12):
        remember(owner, f"Kubernetes cluster {i} runs workload number {i * 13} for team {i}")
    assert len(recall(owner, "Kubernetes cluster").items) == 8  # default max
    assert len(recall(owner, "Kubernetes cluster", max_items=3).items) == 3
    result = recall(owner, "Kubernetes cluster", char_budget=150)
    assert 1 <= len(result.items) < 8
    assert len(result.block) - len("## Recalled Facts\n") <= 150


def test_category_budget_limits_a_category(owner, remember):
    for i in range(4):
        remember(
            owner,
            f"Preference {i}: the user likes green tea variety {i * 11}",
            category="preference",
        )
    remember(owner, "Fact: green tea is stocked in the kitchen", category="fact")
    result = recall(owner, "green tea", category_budget={"preference": 1})
    categories = [i.fact.category for i in result.items]
    assert categories.count("preference") == 1 and "fact" in categories


def test_project_isolation(owner, remember):
    remember(owner, "The web app uses React with Vite", project="web")
    remember(owner, "The mobile app uses React Native", project="mobile")
    remember(owner, "The user prefers TypeScript everywhere")
    web = [i.fact.content for i in recall(owner, "React app TypeScript", project="web").items]
    assert "The web app uses React with Vite" in web
    assert "The user prefers TypeScript everywhere" in web  # personal facts come along
    assert "The mobile app uses React Native" not in web
    personal = [i.fact.content for i in recall(owner, "React app").items]
    assert personal == [] or all("app uses" not in c for c in personal)


def test_outsider_never_recalls_private_or_team_facts(owner, teammate, outsider, team, remember):
    remember(owner, "Private: the launch code is kiwi", visibility="private")
    remember(owner, "Team: the launch date is March 3rd", visibility="team")
    remember(owner, "Global: launches are announced in #general", visibility="global")
    seen = {i.fact.content for i in recall(outsider, "launch code date announced").items}
    assert seen == {"Global: launches are announced in #general"}
    seen = {i.fact.content for i in recall(teammate, "launch code date announced").items}
    assert seen == {
        "Team: the launch date is March 3rd",
        "Global: launches are announced in #general",
    }


def test_cross_scope_reads_are_audited(owner, teammate, team, remember):
    remember(owner, "Team: the launch date is March 3rd", visibility="team")
    recall(teammate, "launch date")
    event = AuditEvent.objects.get(action="recall.cross_scope")
    assert event.actor == teammate and event.details["ids"]


@pytest.mark.postgresql_only("the commit's flush to disk is PostgreSQL's setting")
def test_counting_access_waits_for_no_flush_but_an_audited_read_does(
    owner, teammate, team, remember
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    remember(owner, "Team: the launch date is March 3rd", visibility="team")
    relaxed = "SET LOCAL synchronous_commit = off"
    with CaptureQueriesContext(connection) as own:
        assert recall(owner, "launch date").items
    with CaptureQueriesContext(connection) as audited:
        assert recall(teammate, "launch date").items
    assert any(q["sql"] == relaxed for q in own.captured_queries)
    assert not any(q["sql"] == relaxed for q in audited.captured_queries)
    assert AuditEvent.objects.filter(action="recall.cross_scope", actor=teammate).exists()


def test_recall_counts_access(owner, memories):
    recall(owner, "Kubernetes")
    fact = Fact.objects.get(content__startswith="Production runs")
    assert fact.access_count == 1 and fact.last_accessed_at is not None


def test_each_recall_served_is_counted_for_its_user_and_day(owner, teammate, memories):
    from datetime import timedelta

    from django.utils import timezone

    from facts.models import RecallDay

    recall(owner, "Kubernetes")
    recall(owner, "nothing here matches at all")  # served, if empty
    recall(teammate, "Kubernetes")
    fact_recall(actor=Actor(user=owner), query="Kubernetes", touch=False)  # Test recall
    today = timezone.localdate()
    counts = dict(RecallDay.objects.filter(day=today).values_list("user_id", "count"))
    assert counts == {owner.pk: 2, teammate.pk: 1}

    RecallDay.objects.filter(day=today).update(day=today - timedelta(days=1))
    recall(owner, "Kubernetes")
    assert RecallDay.objects.get(user=owner, day=today).count == 1


def test_a_recall_of_a_day_whose_row_another_recall_just_wrote_adds_to_it(owner, monkeypatch):
    from django.db.models import QuerySet
    from django.utils import timezone

    from facts.models import RecallDay
    from facts.services.access import recall_day_count

    # The other recall inserts the day's row between this one's UPDATE and INSERT.
    update = QuerySet.update
    raced = []

    def update_then_race(self, **kwargs):
        done = update(self, **kwargs)
        if self.model is RecallDay and not raced:
            raced.append(RecallDay.objects.create(user=owner, day=timezone.localdate(), count=1))
        return done

    monkeypatch.setattr(QuerySet, "update", update_then_race)
    recall_day_count(user_id=owner.pk)
    assert RecallDay.objects.get(user=owner).count == 2


def test_recall_with_memory_switched_off_counts_nothing(owner, memories):
    from facts.models import RecallDay

    MemoryConfig.objects.update(memory_enabled=False)
    assert recall(owner, "Kubernetes").mode == "disabled"
    assert not RecallDay.objects.exists()


def test_superseded_and_archived_facts_are_not_recalled(owner, remember):
    old = remember(owner, "The VPN endpoint is vpn1.example.com")
    remember(owner, "The VPN endpoint moved to vpn2.example.com", supersedes=old.pk)
    archived = remember(owner, "The VPN password rotates monthly")
    Fact.objects.filter(pk=archived.pk).update(status="archived")
    contents = [i.fact.content for i in recall(owner, "VPN endpoint password").items]
    assert contents == ["The VPN endpoint moved to vpn2.example.com"]


def test_keyword_only_when_embeddings_are_off(owner, memories):
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=False)
    result = recall(owner, "Kubernetes")
    assert result.mode == "keyword"
    assert all(i.vector_rank is None for i in result.items)
    assert recall(owner, "which colour theme should the IDE use?").items == []


def test_a_hanging_remote_embedder_leaves_recall_to_keywords_within_its_deadline(
    owner,
    memories,
    serve,  # noqa: F811
    hang,  # noqa: F811
    settings,
):
    settings.EMBEDDINGS_QUERY_DEADLINE_SECONDS = 0.5
    server = serve(lambda request, count: Reply(hold=hang))
    MemoryConfig.objects.filter(pk=1).update(
        embeddings_provider="openai", embeddings_url=server.url, embeddings_model="hangs"
    )
    started = time.monotonic()

    result = recall(owner, "Kubernetes region")

    assert time.monotonic() - started < 1.5
    assert result.mode == "keyword"
    assert result.notes == ["the embedder did not answer within 0.5 s; keyword recall only"]
    assert result.items[0].fact.content.startswith("Production runs on Kubernetes")
    assert all(i.vector_rank is None for i in result.items)
    assert len(server.requests) == 1
    found = fact_search(user=owner, query="Kubernetes")
    assert found.mode == "keyword" and found.facts[0].content.startswith("Production")


def test_memory_switched_off_returns_nothing(owner, memories):
    MemoryConfig.objects.filter(pk=1).update(memory_enabled=False)
    result = recall(owner, "Kubernetes")
    assert (result.block, result.items, result.mode) == ("", [], "disabled")


@pytest.mark.parametrize(
    "query", ['"unbalanced', "a AND (b OR", "col:value*", "NEAR(x y)", "*", "-- drop table"]
)
def test_fts_syntax_in_queries_never_fails(owner, memories, query):
    recall(owner, query)  # must not raise


def test_empty_or_huge_query_is_refused(owner):
    with pytest.raises(InvalidInput):
        recall(owner, "   ")
    with pytest.raises(InvalidInput):
        recall(owner, "x" * 5000)


def test_each_access_is_counted_in_the_request(owner, memories):
    first = recall(owner, "which colour theme should the IDE use?").items[0].fact
    recall(owner, "dark mode in the editor")
    assert Fact.objects.get(pk=first.pk).access_count == 2


def test_recall_fields_are_named_in_model_order():
    """Candidates are built with ``Fact.from_db``, which reads a partial row in the
    order of the model's fields."""
    from facts.recall import LOADED_FIELDS

    order = [f.attname for f in Fact._meta.concrete_fields]
    assert list(LOADED_FIELDS) == sorted(LOADED_FIELDS, key=order.index)


def test_a_block_never_spends_slots_on_a_summary_and_the_facts_it_states(owner, remember):
    first = remember(owner, "Atlas deploys run through the blue pipeline")
    second = remember(owner, "Atlas deploys need a change ticket first")
    summary = remember(
        owner, "Atlas deploys: the blue pipeline runs them, and each needs a change ticket first"
    )
    Fact.objects.filter(pk=summary.pk).update(layer=2)
    summary.derived_from.set([first, second])
    other = remember(owner, "Atlas dashboards live in Grafana")
    everything = recall(owner, "Atlas deploys pipeline change ticket", touch=False)

    shown = {item.id for item in everything.items}

    # The best of the summary and its sources stays; what restates it gives its slot
    # away (to the dashboards fact, here).
    best = everything.items[0].id
    assert best in {summary.pk, first.pk, second.pk} and other.pk in shown
    if best == summary.pk:
        assert not {first.pk, second.pk} & shown
    else:
        assert summary.pk not in shown
