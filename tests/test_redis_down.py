"""With Redis stopped, requests answer as usual: agents write and recall, people log in,
a wrong token is still a 401, and failed logins are counted in the database until Redis
answers again."""

import socket
import threading
import time
from collections.abc import Callable

import httpx
import pytest
from django.test import Client

PASSWORD = "correct horse battery staple"  # make_user's
LIMIT = 10  # the default MEMORYHUB_LOGIN_FAILURE_LIMIT


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log_in(base_url: str, username: str, password: str) -> httpx.Response:
    """One login through the real form: a fresh session, its CSRF token, the post."""
    with httpx.Client(base_url=base_url, timeout=30) as browser:
        page = browser.get("/login/").text
        token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        return browser.post(
            "/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
        )


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_server_whose_redis_is_down_answers_as_usual(owner, make_token, start_web, settings):
    from django.conf import global_settings

    from facts.models import Fact

    # The server checks passwords with the hashers it is configured with.
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    owner.set_password(PASSWORD)
    owner.save(update_fields=["password"])
    _, secret = make_token(owner)
    base_url = start_web(redis_url=f"redis://127.0.0.1:{closed_port()}/0")
    agent = {"Authorization": f"Bearer {secret}"}
    with httpx.Client(base_url=base_url, timeout=30, headers=agent) as http:
        written = [
            http.post("/api/memories", json={"content": f"Deploy step {n} runs without Redis"})
            for n in range(5)
        ]
        assert [r.status_code for r in written] == [201] * 5, written[0].text
        recalled = http.post("/api/recall", json={"query": "deploy step without Redis"})
        assert recalled.status_code == 200, recalled.text
        assert recalled.json()["items"]
        found = http.get("/api/memories/search", params={"q": "deploy", "mode": "exact"})
        assert found.status_code == 200 and found.json()["count"] == 5
        distilling = http.post("/api/memories/distill-now", json={})
        assert distilling.status_code == 202
        job = http.get(f"/api/jobs/{distilling.json()['job']}")
        assert job.status_code == 200, job.text

        wrong = http.get("/api/me", headers={"Authorization": "Bearer mh_not-a-token"})
        assert wrong.status_code == 401, wrong.text
        health = http.get("/api/health")
        assert health.status_code == 200
        assert health.json()["database"]["ok"] is True
        assert health.json()["broker"]["ok"] is False

    assert Fact.objects.filter(owner=owner).count() == 5
    assert log_in(base_url, "alice", "wrong").status_code == 200  # the form, with its error
    logged_in = log_in(base_url, "alice", PASSWORD)
    assert logged_in.status_code == 302 and logged_in.headers["Location"] == "/"


class SilentRedis:
    """A TCP server that takes connections and never answers: a Redis that hangs. It
    counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"redis://127.0.0.1:{self.sock.getsockname()[1]}/0"
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def cache_at(settings, tmp_path) -> Callable[[str], None]:
    """``cache_at(url)``: the shared cache is the Redis at ``url``, as REDIS_URL sets it."""
    from memoryhub.engine.cache import cache_settings

    def use(url: str) -> None:
        settings.CACHES = cache_settings(redis_url=url, data_dir=tmp_path)
        settings.CACHES["default"]["KEY_PREFIX"] = "memoryhub-test-redis-down"

    return use


def bearer(secret: str, address: str = "203.0.113.7") -> Client:
    return Client(REMOTE_ADDR=address, headers={"Authorization": f"Bearer {secret}"})


def log_in_here(username: str, password: str, address: str = "203.0.113.7"):
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password})


@pytest.mark.django_db
def test_failed_logins_are_counted_in_the_database_while_redis_is_down(
    owner, teammate, make_token, cache_at
):
    from axes.models import AccessAttempt

    cache_at(f"redis://127.0.0.1:{closed_port()}/0")
    _, secret = make_token(owner)

    answers = [log_in_here("alice", f"guess-{n}").status_code for n in range(LIMIT + 2)]
    assert answers == [200] * (LIMIT - 1) + [429] * 3
    assert log_in_here("alice", PASSWORD, address="192.0.2.1").status_code == 429
    assert AccessAttempt.objects.filter(username="alice").exists()
    assert log_in_here("bob", PASSWORD, address="192.0.2.1").status_code == 302
    assert bearer(secret, address="192.0.2.1").get("/api/me").status_code == 200
    wrong = [bearer(f"mh_wrong{n}", address="198.51.100.1").get("/api/me") for n in range(LIMIT)]
    assert [r.status_code for r in wrong] == [401] * (LIMIT - 1) + [429]


@pytest.mark.django_db
def test_a_redis_that_never_answers_holds_up_one_request_for_half_a_second(
    owner, teammate, cache_at
):
    from memoryhub.engine.cache import TIMEOUT_SECONDS, cache_circuit

    bearer("mh_wrong").get("/api/me")  # loads the URLs and the API
    redis = SilentRedis()
    try:
        cache_at(redis.url)
        started = time.monotonic()
        assert bearer("mh_wrong").get("/api/me").status_code == 401
        first = time.monotonic() - started
        assert TIMEOUT_SECONDS <= first < TIMEOUT_SECONDS + 2
        assert cache_circuit.current_state == "open"
        tried = len(redis.held)

        started = time.monotonic()
        for n in range(3):  # below the address's limit
            assert bearer(f"mh_wrong{n}").get("/api/me").status_code == 401
            assert log_in_here("bob", "wrong").status_code == 200
        assert log_in_here("bob", PASSWORD).status_code == 302
        assert time.monotonic() - started < 5 * TIMEOUT_SECONDS  # no call waited on Redis
        assert len(redis.held) == tried
    finally:
        redis.close()


@pytest.mark.django_db
def test_redis_is_tried_again_once_the_circuit_has_been_open_long_enough(
    owner, cache_at, monkeypatch
):
    from memoryhub.engine.cache import cache_circuit

    redis = SilentRedis()
    try:
        cache_at(redis.url)
        assert bearer("mh_wrong").get("/api/me").status_code == 401
        tried = len(redis.held)
        monkeypatch.setattr(cache_circuit, "reset_timeout", 0.3)
        time.sleep(0.4)
        assert bearer("mh_wrong").get("/api/me").status_code == 401
        assert len(redis.held) > tried
        assert cache_circuit.current_state == "open"  # and it failed again
    finally:
        redis.close()


@pytest.mark.integration
@pytest.mark.django_db
def test_a_lock_out_counted_while_redis_was_down_holds_once_it_is_back(owner, cache_at, redis_url):
    from django.core.cache import cache

    from memoryhub.engine.cache import cache_circuit

    cache_at(f"redis://127.0.0.1:{closed_port()}/0")
    for n in range(LIMIT):
        log_in_here("alice", f"guess-{n}")

    cache_at(redis_url)
    cache_circuit.close()  # Redis is back
    cache.clear()
    try:
        assert log_in_here("alice", PASSWORD, address="192.0.2.1").status_code == 429
        assert cache_circuit.current_state == "closed"
    finally:
        cache.clear()
