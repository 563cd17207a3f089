"""Embedding: chunk after chunk, the sweep of facts waiting, a task delivered again, the
embedder failing, and the backfill after a change of model."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from facts.models import Fact
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.config import memory_config_update
from facts.services.create import fact_bulk_create
from facts.services.embedding import facts_backfill, facts_embed
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor

pytestmark = pytest.mark.django_db


def indexed(fact: Fact) -> bool:
    return FACT_FTS.content_of(fact.pk) is not None


def embedded(fact: Fact) -> bool:
    return fact.pk in FACT_VECTORS.vectors([fact.pk])


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


def test_without_the_shared_cache_a_task_embeds_its_own_facts_and_leaves_the_sweep(
    owner, settings, tmp_path
):
    import socket

    from facts import tasks
    from memoryhub.engine.cache import cache_settings

    with socket.socket() as sock:  # a port where nothing listens: Redis is down
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.CACHES = cache_settings(redis_url=f"redis://127.0.0.1:{port}/0", data_dir=tmp_path)
    results = fact_bulk_create(
        actor=Actor(user=owner),
        items=[{"content": f"Backups of {name} run hourly"} for name in ("billing", "search")],
    )
    facts = [r.fact for r in results]

    assert tasks.facts_embed([facts[0].pk]) == 1
    assert [embedded(f) for f in facts] == [True, False]  # the backfill takes the other


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
