"""Embedding through a real Celery worker process on Redis, writing to the same
database the test reads."""

import pytest
from celery import Celery

from facts.models import Fact, MemoryConfig
from facts.search import FACT_VECTORS
from facts.services import fact_create
from memoryhub.queue import celery_queue_settings
from teams.services import Actor

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_embeds_facts_and_backfills(owner, redis_url, start_worker):
    MemoryConfig.objects.update_or_create(pk=1, defaults={"embeddings_enabled": False})
    first = fact_create(actor=Actor(user=owner), data={"content": "Worker-embedded fact"}).fact
    second = fact_create(
        actor=Actor(user=owner), data={"content": "Another fact the backfill catches up on"}
    ).fact
    assert FACT_VECTORS.vectors([first.pk, second.pk]) == {}
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=True)

    worker = start_worker(redis_url=redis_url)
    client = Celery("memoryhub-test-client", set_as_current=False)
    client.conf.update(celery_queue_settings(redis_url=redis_url, data_dir=worker.log.parent))
    assert (
        client.send_task("facts.embed", args=[[first.pk]], queue=worker.queue).get(timeout=60) == 1
    )
    first.refresh_from_db()
    assert first.embedding_model == "local:all-MiniLM-L6-v2-int8"
    assert first.pk in FACT_VECTORS.vectors([first.pk])

    assert client.send_task("facts.backfill_embeddings", queue=worker.queue).get(timeout=60) == 1
    assert set(FACT_VECTORS.vectors([first.pk, second.pk])) == {first.pk, second.pk}
    assert not Fact.objects.filter(embedding_model="").exists()
