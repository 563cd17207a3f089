"""Creating facts: FTS and vectors in step, one embedding task a batch, near-duplicates,
supersession and bad input."""

import numpy as np
import pytest

from facts.models import Fact, Origin, Status
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.create import fact_bulk_create
from memoryhub.engine.embeddings.configured import embedder_get
from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from teams.models import AuditEvent
from teams.services import Actor

pytestmark = pytest.mark.django_db


def embedded(fact: Fact) -> bool:
    return fact.pk in FACT_VECTORS.vectors([fact.pk])


def test_create_indexes_and_embeds(owner, remember):
    fact = remember(owner, "Our CI runs on self-hosted GitLab runners", tags=["ci"])
    assert FACT_FTS.content_of(fact.pk) == (
        "Our CI runs on self-hosted GitLab runners",
        "ci",
        "",
        "",
    )
    assert embedded(fact)
    assert fact.embedding_model == "local:all-MiniLM-L6-v2-int8"
    assert FACT_VECTORS.models()[fact.pk] == fact.embedding_model


def test_bulk_create_indexes_and_embeds_every_fact(owner, django_capture_on_commit_callbacks):
    items = [{"content": f"Service number {i} listens on port {8000 + i}"} for i in range(30)]
    with django_capture_on_commit_callbacks(execute=True):
        results = fact_bulk_create(actor=Actor(user=owner), items=items)
    ids = [r.fact.pk for r in results]
    assert len(set(ids)) == 30 and all(r.created for r in results)
    assert FACT_FTS.ids() >= set(ids)
    assert set(FACT_VECTORS.vectors(ids)) == set(ids)


def test_a_batch_queues_one_embedding_for_its_new_facts_and_merge_targets(
    owner, django_capture_on_commit_callbacks
):
    actor = Actor(user=owner)
    with django_capture_on_commit_callbacks(execute=True):
        [stored] = fact_bulk_create(
            actor=actor, items=[{"content": "The nightly backup runs at two in the morning"}]
        )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        results = fact_bulk_create(
            actor=actor,
            items=[
                {"content": "the nightly backup runs at two in the morning!"},
                {"content": "Grafana dashboards live on the ops wiki"},
            ],
        )
    # One task for the whole batch: its embedding, and its concept-graph extraction.
    assert len(callbacks) == 2
    merged, new = (r.fact.pk for r in results)
    assert merged == stored.fact.pk and not results[0].created and results[1].created
    embedder = embedder_get()
    expected = embedder.embed(
        [
            "the nightly backup runs at two in the morning!",
            "Grafana dashboards live on the ops wiki",
        ]
    )
    vectors = FACT_VECTORS.vectors([merged, new])
    assert np.allclose(vectors[merged], expected[0], atol=1e-5)
    assert np.allclose(vectors[new], expected[1], atol=1e-5)


def test_bulk_create_with_one_bad_item_writes_nothing(owner):
    items = [{"content": "fine"}, {"content": "bad", "importance": 3}]
    with pytest.raises(InvalidInput, match="Item 1: Importance must be between 0 and 1"):
        fact_bulk_create(actor=Actor(user=owner), items=items)
    assert not Fact.objects.exists()
    assert not FACT_FTS.ids()


@pytest.mark.postgresql_only("statements are pipelined on PostgreSQL alone")
@pytest.mark.django_db(transaction=True)
def test_a_batch_failing_in_a_write_no_one_waited_for_writes_nothing(owner, monkeypatch):
    from django.db import IntegrityError, connection

    from facts.services import create

    def keys_then_a_broken_row(rows):
        rows = list(rows)
        original(rows)
        with connection.cursor() as cursor:  # a check constraint fails on the server
            cursor.execute("UPDATE facts_fact SET importance = 2 WHERE id = %s", [rows[0][0]])

    original = create.fact_keys_add
    monkeypatch.setattr(create, "fact_keys_add", keys_then_a_broken_row)
    indexed = FACT_FTS.ids()  # entries an earlier test's flush may have left
    items = [{"content": f"Queue {i} drains every {i + 2} minutes"} for i in range(150)]
    with pytest.raises(IntegrityError, match="fact_importance_0_1"):
        fact_bulk_create(actor=Actor(user=owner), items=items)
    assert not Fact.objects.exists() and FACT_FTS.ids() == indexed

    monkeypatch.setattr(create, "fact_keys_add", original)
    results = fact_bulk_create(actor=Actor(user=owner), items=items)
    assert len({r.fact.pk for r in results}) == 150
    assert Fact.objects.count() == 150 and FACT_FTS.ids() - indexed == {r.fact.pk for r in results}


def test_near_duplicate_updates_the_existing_fact_with_provenance(owner, remember):
    first = remember(owner, "Alice prefers tabs over spaces in Python code", importance=0.4)
    again = remember(owner, "alice prefers tabs over spaces in python code.", importance=0.7)
    assert again.pk == first.pk
    assert again.origin == Origin.MERGED
    assert again.importance == 0.7
    [parent] = again.derived_from.all()
    assert parent.content == "Alice prefers tabs over spaces in Python code"
    assert parent.status == Status.ARCHIVED
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 1


def test_each_repeat_keeps_one_archived_row_with_the_wording_it_replaced(owner, remember):
    wordings = [
        "The staging cluster restarts every Sunday at 03:00",
        "the staging cluster restarts every sunday at 03:00.",
        "The staging cluster restarts every Sunday at 03:00!",
    ]
    facts = [remember(owner, text) for text in wordings]
    assert len({f.pk for f in facts}) == 1
    current = Fact.objects.get(pk=facts[0].pk)
    assert current.content == wordings[2]
    history = Fact.objects.filter(owner=owner, status=Status.ARCHIVED).order_by("pk")
    # One row per merge, each the wording the merge replaced; none repeats the current one.
    assert [f.content for f in history] == wordings[:2]
    assert set(current.derived_from.all()) == set(history)
    events = AuditEvent.objects.filter(action="fact.merge").order_by("pk")
    assert [e.details["parents"] for e in events] == [[f.pk] for f in history]


def test_same_subject_with_most_tags_shared_merges(owner, remember):
    first = remember(
        owner,
        "Deploy window for the billing service is Tuesday morning",
        tags=["billing", "deploy"],
    )
    second = remember(
        owner,
        "Billing service deploy window moved to Thursday",
        tags=["billing", "deploy", "schedule"],
    )
    assert second.pk == first.pk
    assert second.content == "Billing service deploy window moved to Thursday"
    assert second.tags == ["billing", "deploy", "schedule"]


def test_different_facts_or_scopes_do_not_merge(owner, teammate, team, remember):
    a = remember(owner, "Alice prefers tabs over spaces in Python code")
    b = remember(owner, "Alice runs the weekly incident review")
    c = remember(owner, "Alice prefers tabs over spaces in Python code", project="web")
    d = remember(teammate, "Alice prefers tabs over spaces in Python code")
    assert len({a.pk, b.pk, c.pk, d.pk}) == 4


@pytest.mark.parametrize(
    ("source", "origin"),
    [
        ("explicit", Origin.USER_STATED),
        ("extracted", Origin.EXTRACTED),
        ("observed", Origin.INFERRED),
    ],
)
def test_the_origin_follows_the_source(owner, remember, source, origin):
    fact = remember(owner, f"The build cache lives on the {source} volume", source=source)
    assert (fact.source, fact.origin) == (source, origin)


def test_an_origin_given_with_the_source_is_kept(owner, remember):
    # Extraction says itself where a fact came from ("remember that ..." is explicit).
    fact = remember(owner, "Standups start at 09:30", source="extracted", origin="user_stated")
    assert fact.origin == Origin.USER_STATED


def test_supersedes_closes_the_old_fact(owner, remember):
    old = remember(owner, "The API rate limit is 100 requests per minute")
    new = remember(owner, "The API rate limit is now 500 requests per minute", supersedes=old.pk)
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk
    assert old.valid_until == new.created_at
    assert list(new.derived_from.all()) == [old]
    assert old not in Fact.objects.recallable()


def test_supersedes_a_fact_the_caller_cannot_see_is_404_and_writes_nothing(
    owner, outsider, remember
):
    secret = remember(owner, "private thing")
    with pytest.raises(NotFound):
        remember(outsider, "my replacement", supersedes=secret.pk)
    assert Fact.objects.count() == 1


def test_supersedes_a_visible_fact_of_someone_else_is_403(owner, teammate, team, remember):
    shared = remember(owner, "team thing", visibility="team")
    with pytest.raises(Forbidden):
        remember(teammate, "my replacement", supersedes=shared.pk)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"content": ""}, "must not be empty"),
        ({"content": "   "}, "must not be empty"),
        ({"content": "x" * 2001}, "the maximum is 2000"),
        ({"content": "x", "category": "gossip"}, "Unknown category 'gossip'"),
        ({"content": "x", "importance": 1.5}, "between 0 and 1"),
        ({"content": "x", "importance": -0.1}, "between 0 and 1"),
        ({"content": "x", "confidence": 2}, "between 0 and 1"),
        ({"content": "x", "tags": "not-a-list"}, "list of strings"),
        ({"content": "x", "visibility": "public"}, "Unknown visibility"),
        ({"content": "x", "team": "Nope"}, "Unknown team"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(owner, remember, data, message):
    content = data.pop("content")
    with pytest.raises(InvalidInput, match=message):
        remember(owner, content, **data)
    assert not Fact.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="fact.").exists()


def test_same_tags_about_different_people_do_not_merge(owner, remember):
    rosa = remember(
        owner,
        "Rosa Quinn reviews pull requests for the search-indexer quickly",
        tags=["review", "search-indexer"],
    )
    kofi = remember(
        owner,
        "Kofi Ivanova reviews pull requests for the search-indexer quickly",
        tags=["review", "search-indexer"],
    )
    assert rosa.pk != kofi.pk
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 2


def test_numbered_members_of_a_series_do_not_merge_but_updates_of_one_do(owner, remember):
    one = remember(owner, "Service 1 listens on port 9001 in rack 4", tags=["services"])
    two = remember(owner, "Service 2 listens on port 9002 in rack 4", tags=["services"])
    assert one.pk != two.pk
    moved = remember(owner, "Service 2 now listens on port 9102 in rack 5", tags=["services"])
    assert moved.pk == two.pk and moved.content.startswith("Service 2 now")
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 2
