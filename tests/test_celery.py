"""A real worker process answers tasks on Redis and on the filesystem transport, the
health check sees it, and a write made while the broker is down is kept."""

import socket
import threading
import time

import pytest
from celery import Celery

from memoryhub.engine.queue import celery_queue_settings

pytestmark = pytest.mark.integration


def client_app(**conf: object) -> Celery:
    app = Celery("memoryhub-test-client", set_as_current=False)
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


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HangUpBroker:
    """A TCP server that counts the connections made to it and closes each at once: a
    broker that is there but never takes a task."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def post_fact(client, content: str):
    return client.post("/api/memories", {"content": content}, "application/json")


@pytest.mark.django_db(transaction=True)
def test_a_fact_written_while_the_broker_is_down_is_kept_and_embedded_later(
    owner, agent_client, redis_url, start_worker, broker_at
):
    from facts.models import Fact
    from memoryhub.engine.tasks import queue_circuit

    client = agent_client(owner)
    with broker_at(f"redis://127.0.0.1:{closed_port()}/0"):
        first = post_fact(client, "The broker is down, the fact is kept")
        assert first.status_code == 201
        # The failed send opened the circuit: the next write does not try the broker.
        assert queue_circuit.current_state == "open"
        assert queue_circuit.fail_counter == 1
        second = post_fact(client, "A second fact while the broker is still down")
        assert second.status_code == 201
        assert queue_circuit.fail_counter == 1  # no new failure: nothing was tried
    ids = [first.json()["id"], second.json()["id"]]
    assert set(Fact.objects.filter(pk__in=ids).values_list("embedding_model", flat=True)) == {""}

    # The broker is back: the periodic backfill (as beat sends it) embeds both facts.
    worker = start_worker(redis_url=redis_url)
    app = client_app(**celery_queue_settings(redis_url=redis_url, data_dir=worker.log.parent))
    done = app.send_task("facts.backfill_embeddings", queue=worker.queue).get(timeout=60)
    assert done == 2, worker.output()
    assert all(
        model.startswith("local:")
        for model in Fact.objects.filter(pk__in=ids).values_list("embedding_model", flat=True)
    )


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_hangs_up_is_tried_a_bounded_number_of_times_then_left_alone(
    owner, agent_client, broker_at
):
    from facts.models import Fact
    from memoryhub.engine.tasks import queue_circuit

    broker = HangUpBroker()
    client = agent_client(owner)
    try:
        with broker_at(f"redis://127.0.0.1:{broker.port}/0"):
            assert post_fact(client, "Written while the broker hangs up").status_code == 201
            tried = broker.connections
            assert 1 <= tried <= 4  # one connection, one retry at most, then give up
            assert queue_circuit.current_state == "open"
            for n in range(5):
                assert post_fact(client, f"Another write number {n}").status_code == 201
            assert broker.connections == tried  # the open circuit sends nothing
    finally:
        broker.close()
    assert Fact.objects.filter(owner=owner).count() == 6


@pytest.mark.django_db(transaction=True)
def test_queueing_is_tried_again_once_the_circuit_has_been_open_long_enough(
    owner, agent_client, monkeypatch, broker_at
):
    from memoryhub.engine.tasks import queue_circuit

    broker = HangUpBroker()
    try:
        with broker_at(f"redis://127.0.0.1:{broker.port}/0"):
            monkeypatch.setattr(queue_circuit, "reset_timeout", 0.3)
            client = agent_client(owner)
            assert post_fact(client, "First try").status_code == 201
            tried = broker.connections
            time.sleep(0.4)
            assert post_fact(client, "Tried again").status_code == 201
            assert broker.connections > tried
            assert queue_circuit.current_state == "open"  # and failed again
    finally:
        broker.close()
