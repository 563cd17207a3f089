"""Embedding through a real Celery worker process on Redis, writing to the same
database the test reads."""

import pytest
from celery import Celery

from facts.models import Fact
from facts.search import FACT_VECTORS
from facts.services.create import fact_create
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.queue import celery_queue_settings
from teams.services import Actor

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_embeds_facts_and_backfills(owner, redis_url, start_worker):
    def write(content: str) -> Fact:
        return fact_create(actor=Actor(user=owner), data={"content": content}).fact

    MemoryConfig.objects.update_or_create(pk=1, defaults={"embeddings_enabled": False})
    first = write("Worker-embedded fact")
    second = write("Another fact waiting for its vector")
    assert FACT_VECTORS.vectors([first.pk, second.pk]) == {}
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=True)

    worker = start_worker(redis_url=redis_url)
    client = Celery("memoryhub-test-client", set_as_current=False)
    client.conf.update(celery_queue_settings(redis_url=redis_url, data_dir=worker.log.parent))
    # The first fact's task takes the fact waiting behind it along.
    embedded = client.send_task("facts.embed", args=[[first.pk]], queue=worker.queue)
    assert embedded.get(timeout=60) == 2
    first.refresh_from_db()
    assert first.embedding_model == "local:all-MiniLM-L6-v2-int8"
    assert set(FACT_VECTORS.vectors([first.pk, second.pk])) == {first.pk, second.pk}

    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=False)
    third = write("A fact the backfill catches up on")
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=True)
    assert client.send_task("facts.backfill_embeddings", queue=worker.queue).get(timeout=60) == 1
    assert third.pk in FACT_VECTORS.vectors([third.pk])
    assert not Fact.objects.filter(embedding_model="").exists()
