"""A real worker process answers tasks on Redis and on the filesystem transport, the
health check sees it, and a write made while the broker is down is kept."""

import contextlib
from collections.abc import Iterator

import pytest
from celery import Celery

from memoryhub.queue import celery_queue_settings

pytestmark = pytest.mark.integration


def client_app(**conf: object) -> Celery:
    app = Celery("memoryhub-test-client")
    app.conf.update(conf)
    return app


def test_round_trip_through_a_real_worker_on_redis(redis_url, start_worker):
    worker = start_worker(redis_url=redis_url)
    app = client_app(**celery_queue_settings(redis_url=redis_url, data_dir=worker.log.parent))
    result = app.send_task("memoryhub.ping", queue=worker.queue)
    assert result.get(timeout=30) == "pong"
    assert "memoryhub.ping" in worker.output()


def test_round_trip_through_a_real_worker_on_the_filesystem_queue(start_worker):
    worker = start_worker()
    app = client_app(**celery_queue_settings(redis_url="", data_dir=worker.log.parent))
    result = app.send_task("memoryhub.ping", queue=worker.queue)
    assert result.get(timeout=30) == "pong"


def test_worker_ping_sees_a_live_worker_on_redis(redis_url, start_worker):
    worker = start_worker(redis_url=redis_url)
    app = client_app(**celery_queue_settings(redis_url=redis_url, data_dir=worker.log.parent))
    replies = app.control.ping(destination=[worker.queue + "@" + _hostname()], timeout=5)
    assert replies and worker.queue in next(iter(replies[0]))


def _hostname() -> str:
    import socket

    return socket.gethostname()


def test_health_reports_broker_down_instead_of_failing(monkeypatch, db):
    from memoryhub import health
    from memoryhub.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:1/0")
    report = health.check_broker()
    assert report["ok"] is False and report["error"]


@contextlib.contextmanager
def broker_down() -> Iterator[None]:
    """The app's broker is an address where nothing listens, and tasks are sent to it
    rather than run in-process; both are put back afterwards."""
    from memoryhub.celery import app

    saved = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager, app.conf.broker_url = False, "redis://127.0.0.1:1/0"
    app._pool = None  # connections are pooled per broker URL
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.broker_url = saved
        app._pool = None


@pytest.mark.django_db(transaction=True)
def test_a_fact_written_while_the_broker_is_down_is_kept_and_embedded_later(owner, agent_client):
    from facts.models import Fact
    from facts.services import facts_backfill

    with broker_down():
        response = agent_client(owner).post(
            "/api/memories", {"content": "The broker is down, the fact is kept"}, "application/json"
        )
    assert response.status_code == 201
    fact = Fact.objects.get(pk=response.json()["id"])
    assert fact.embedding_model == ""  # its embedding could not be queued
    assert facts_backfill() == 1  # what the periodic catch-up runs once the broker is back
    fact.refresh_from_db()
    assert fact.embedding_model.startswith("local:")
