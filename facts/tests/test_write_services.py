"""The write path: FTS and vectors in step, near-duplicates, supersession, the cap,
and the embedder failing."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from facts.models import Fact, MemoryConfig, Origin, Status
from facts.search import FACT_FTS, FACT_VECTORS
from facts.selectors import memory_config_get
from facts.services.config import memory_config_update
from facts.services.create import fact_bulk_create
from facts.services.embedding import current_embedder, facts_backfill, facts_embed
from facts.services.update import fact_delete, fact_update
from memoryhub.errors import Forbidden, InvalidInput, NotFound
from teams.models import AuditEvent
from teams.services import Actor

pytestmark = pytest.mark.django_db


def indexed(fact: Fact) -> bool:
    return FACT_FTS.content_of(fact.pk) is not None


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


def test_update_reindexes_and_reembeds(owner, remember, django_capture_on_commit_callbacks):
    fact = remember(owner, "The office is in Berlin")
    before = FACT_VECTORS.vectors([fact.pk])[fact.pk].copy()
    with django_capture_on_commit_callbacks(execute=True):
        fact_update(
            actor=Actor(user=owner),
            fact=fact,
            changes={"content": "The office moved to Lisbon", "tags": ["office"]},
        )
    assert FACT_FTS.content_of(fact.pk) == ("The office moved to Lisbon", "office", "", "")
    after = FACT_VECTORS.vectors([fact.pk])[fact.pk]
    assert float(before @ after) < 0.99
    assert not FACT_FTS.search('"berlin"', limit=5)


def test_facts_are_embedded_chunk_after_chunk(owner, monkeypatch):
    """Each chunk is embedded while the one before it is stored: every fact of every
    chunk gets its vector, and an id that is gone is skipped."""
    monkeypatch.setattr("facts.services.embedding.EMBED_BATCH", 2)
    results = fact_bulk_create(
        actor=Actor(user=owner),
        items=[
            {"content": f"Service {name} listens on port {port}"}
            for name, port in [
                ("alpha", 8001),
                ("bravo", 8002),
                ("charlie", 8003),
                ("delta", 8004),
                ("echo", 8005),
            ]
        ],
    )
    facts = [r.fact for r in results]
    assert not any(embedded(f) for f in facts)  # queued for after the commit
    ids = [f.pk for f in facts]
    assert facts_embed(fact_ids=[*ids[:2], 999_999, *ids[2:]]) == 5
    assert all(embedded(f) for f in facts)
    assert set(Fact.objects.filter(pk__in=ids).values_list("embedding_model", flat=True)) == {
        "local:all-MiniLM-L6-v2-int8"
    }


def test_an_embedding_task_takes_the_facts_waiting_behind_it_along(owner):
    from django.core.cache import cache

    from facts import tasks
    from facts.services.embedding import EMBED_SWEEP_LOCK

    results = fact_bulk_create(
        actor=Actor(user=owner),
        items=[{"content": f"Queue {name} is drained nightly"} for name in ("red", "blue", "gray")],
    )
    facts = [r.fact for r in results]
    # Another sweep is running: the task embeds its own fact only.
    cache.add(EMBED_SWEEP_LOCK, True)
    try:
        assert tasks.facts_embed([facts[0].pk]) == 1
    finally:
        cache.delete(EMBED_SWEEP_LOCK)
    assert [embedded(f) for f in facts] == [True, False, False]
    # The next task's sweep takes the other two along, such as those of writes whose
    # own task was never queued.
    assert tasks.facts_embed([facts[1].pk]) == 2
    assert all(embedded(f) for f in facts)


def test_an_embedding_task_delivered_again_skips_the_facts_it_already_embedded(owner):
    results = fact_bulk_create(
        actor=Actor(user=owner),
        items=[{"content": f"Queue {name} is drained nightly"} for name in ("red", "blue")],
    )
    ids = [r.fact.pk for r in results]
    assert facts_embed(fact_ids=ids[:1]) == 1  # the worker died after the first one
    stored = FACT_VECTORS.vectors(ids[:1])[ids[0]].copy()
    assert facts_embed(fact_ids=ids) == 1  # delivered again: only the second is left
    assert facts_embed(fact_ids=ids) == 0
    assert np.array_equal(FACT_VECTORS.vectors(ids[:1])[ids[0]], stored)
    assert set(FACT_VECTORS.vectors(ids)) == set(ids)


def test_delete_leaves_no_fts_row_and_no_vector(owner, remember):
    fact = remember(owner, "Temporary note about the hackathon")
    fact_id = fact.pk
    fact_delete(actor=Actor(user=owner), fact=fact)
    assert FACT_FTS.content_of(fact_id) is None
    assert FACT_VECTORS.vectors([fact_id]) == {}
    event = AuditEvent.objects.get(action="fact.delete", target_id=str(fact_id))
    assert fact.content not in str(event.details)


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
    embedder = current_embedder()
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


def test_near_duplicate_updates_the_existing_fact_with_provenance(owner, remember):
    first = remember(owner, "Alice prefers tabs over spaces in Python code", importance=0.4)
    again = remember(owner, "alice prefers tabs over spaces in python code.", importance=0.7)
    assert again.pk == first.pk
    assert again.origin == Origin.MERGED
    assert again.importance == 0.7
    parents = list(again.derived_from.order_by("pk"))
    assert [p.content for p in parents] == [
        "Alice prefers tabs over spaces in Python code",
        "alice prefers tabs over spaces in python code.",
    ]
    assert all(p.status == Status.ARCHIVED for p in parents)
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 1


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


def test_cap_archives_the_least_valuable_and_audits(owner, remember):
    config = memory_config_get()
    config.max_active_facts = 3
    config.save()
    low = remember(owner, "Trivia: the coffee machine is on floor two", importance=0.05)
    for text in (
        "Prod database is PostgreSQL",
        "On-call rotates weekly",
        "Releases are tagged with semver",
    ):
        remember(owner, text, importance=0.9)
    low.refresh_from_db()
    assert low.status == Status.ARCHIVED
    assert Fact.objects.filter(owner=owner, status=Status.ACTIVE).count() == 3
    assert Fact.objects.count() == 4  # archived, never destroyed
    event = AuditEvent.objects.get(action="fact.archive")
    assert event.details["ids"] == [low.pk]


def test_cap_zero_means_no_cap(owner, remember):
    config = memory_config_get()
    config.max_active_facts = 0
    config.save()
    for i in range(5):
        remember(owner, f"Distinct fact number {i} about topic {i * 7}")
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 5


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


class FlakyEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /embeddings endpoint that fails until told otherwise."""

    failing = True
    calls = 0

    def do_POST(self) -> None:
        type(self).calls += 1
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if type(self).failing:
            self.send_response(503)
            self.end_headers()
            return
        data = [{"index": i, "embedding": [1.0] + [0.0] * 383} for i, _ in enumerate(body["input"])]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky_server():
    FlakyEmbeddings.failing, FlakyEmbeddings.calls = True, 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FlakyEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_fact_is_kept_when_the_embedder_fails_and_the_backfill_embeds_it_later(
    owner, staff, remember, flaky_server, django_capture_on_commit_callbacks
):
    MemoryConfig.objects.update_or_create(
        pk=1,
        defaults={
            "embeddings_provider": "openai",
            "embeddings_url": flaky_server,
            "embeddings_model": "flaky-1",
        },
    )
    fact = remember(owner, "Kept even though the embedder is down")
    assert FlakyEmbeddings.calls >= 1
    assert Fact.objects.filter(pk=fact.pk).exists()
    assert indexed(fact) and not embedded(fact)
    assert fact.embedding_model == ""
    FlakyEmbeddings.failing = False
    assert facts_backfill() == 1
    fact.refresh_from_db()
    assert embedded(fact) and fact.embedding_model == "openai:flaky-1"


def test_changing_the_model_queues_a_backfill_that_reembeds(
    owner, staff, remember, flaky_server, django_capture_on_commit_callbacks
):
    FlakyEmbeddings.failing = False
    MemoryConfig.objects.update_or_create(
        pk=1,
        defaults={
            "embeddings_provider": "openai",
            "embeddings_url": flaky_server,
            "embeddings_model": "flaky-1",
        },
    )
    fact = remember(owner, "Embedded twice over its life")
    assert fact.embedding_model == "openai:flaky-1"
    with django_capture_on_commit_callbacks(execute=True):
        memory_config_update(
            actor=Actor(user=staff),
            changes={"embeddings_provider": "local", "embeddings_url": "", "embeddings_model": ""},
        )
    fact.refresh_from_db()
    assert fact.embedding_model == "local:all-MiniLM-L6-v2-int8"


def test_only_staff_change_instance_settings(owner):
    with pytest.raises(Forbidden):
        memory_config_update(actor=Actor(user=owner), changes={"recall_max_items": 3})


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
