"""A real worker process answers tasks on Redis and on the filesystem transport, and the
health check sees it."""

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
