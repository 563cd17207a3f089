"""Login throttling: failed passwords are counted by account and by address, failed agent
tokens by address. Past the limit an account is refused even its right password, with a
message saying when to come back, until the cool-off has passed; an address has its
failures refused, while right passwords of other accounts and valid tokens still get in."""

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"  # make_user's
LIMIT = 10  # the default MEMORYHUB_LOGIN_FAILURE_LIMIT


def log_in(username: str, password: str, address: str = "203.0.113.7", **headers: str):
    return Client(REMOTE_ADDR=address, headers=headers).post(
        "/login/", {"username": username, "password": password}
    )


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == "/"


def test_fifty_wrong_passwords_then_the_right_one_is_refused(owner):
    answers = [log_in("alice", f"guess-{i}").status_code for i in range(50)]
    assert answers[: LIMIT - 1] == [200] * (LIMIT - 1)  # the form again, with its error
    assert set(answers[LIMIT - 1 :]) == {429}

    response = log_in("alice", PASSWORD)
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 15 * 60
    page = response.content.decode()
    assert "Too many failed logins for this account. Try again after" in page
    assert "(in 15 minutes at most)" in page
    assert 'id="id_username"' in page  # still the login page, in the layout


def test_an_account_is_locked_from_every_address(owner, teammate):
    for i in range(LIMIT):
        log_in("alice", "wrong", address=f"198.51.100.{i}")
    assert log_in("alice", PASSWORD, address="192.0.2.1").status_code == 429
    assert logged_in(log_in("bob", PASSWORD, address="192.0.2.1"))


def test_after_ten_failures_for_alice_bob_still_logs_in_from_her_address(owner, teammate, staff):
    for i in range(LIMIT):
        log_in("alice", f"guess-{i}")
    assert log_in("alice", PASSWORD).status_code == 429
    assert logged_in(log_in("bob", PASSWORD))
    admin = Client(REMOTE_ADDR="203.0.113.7").post(
        "/admin/login/?next=/admin/", {"username": "dana", "password": PASSWORD}
    )
    assert admin.status_code == 302 and admin["Location"] == "/admin/"


def test_an_address_past_the_limit_has_its_failures_refused_not_its_right_passwords(
    owner, teammate
):
    for i in range(LIMIT):
        log_in(f"nobody{i}", "wrong", address="198.51.100.9")
    assert log_in("somebody", "wrong", address="198.51.100.9").status_code == 429
    response = log_in("bob", "wrong", address="198.51.100.9")
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 15 * 60
    assert "Too many failed logins from this address." in response.content.decode()
    assert logged_in(log_in("bob", PASSWORD, address="198.51.100.9"))
    assert log_in("somebody", "wrong", address="192.0.2.1").status_code == 200


def test_failures_from_a_locked_out_address_still_count_against_their_account(owner, teammate):
    for i in range(LIMIT):
        log_in(f"nobody{i}", "wrong", address="198.51.100.9")
    for i in range(LIMIT):
        assert log_in("bob", f"guess-{i}", address="198.51.100.9").status_code == 429
    assert log_in("bob", PASSWORD, address="192.0.2.1").status_code == 429


def test_after_the_cool_off_the_right_password_logs_in(owner, settings):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=1)
    for _ in range(LIMIT):
        log_in("alice", "wrong")
    assert log_in("alice", PASSWORD).status_code == 429
    time.sleep(1.1)
    assert logged_in(log_in("alice", PASSWORD))


def test_staff_lift_a_lock_out_early_from_the_command_line(owner):
    from django.core.management import call_command

    for i in range(LIMIT):
        log_in("alice", "wrong", address=f"198.51.100.{i}")
    assert log_in("alice", PASSWORD, address="192.0.2.1").status_code == 429
    call_command("axes_reset_username", "alice", verbosity=0)
    assert logged_in(log_in("alice", PASSWORD, address="192.0.2.1"))


def test_the_admin_login_is_throttled_too(staff):
    for _ in range(LIMIT):
        Client().post("/admin/login/", {"username": "dana", "password": "wrong"})
    response = Client().post("/admin/login/", {"username": "dana", "password": PASSWORD})
    assert response.status_code == 429


def bearer(secret: str, address: str = "203.0.113.7") -> Client:
    return Client(REMOTE_ADDR=address, headers={"Authorization": f"Bearer {secret}"})


def test_failed_tokens_are_refused_past_the_limit_and_valid_ones_are_not(owner, make_token):
    _, secret = make_token(owner)
    answers = [bearer(f"mh_wrong{i}").get("/api/me").status_code for i in range(LIMIT + 5)]
    assert answers[: LIMIT - 1] == [401] * (LIMIT - 1)
    assert set(answers[LIMIT - 1 :]) == {429}

    response = bearer("mh_wrong").get("/api/me")
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 15 * 60
    assert response.json()["detail"].startswith(
        "Too many failed authentication attempts from this address. Try again after"
    )
    assert bearer(secret).get("/api/me").status_code == 200
    assert bearer("mh_wrong", address="192.0.2.1").get("/api/me").status_code == 401


def test_after_ten_failures_for_alice_valid_tokens_work_and_bogus_ones_do_not(
    owner, teammate, make_token
):
    _, alices = make_token(owner)
    _, bobs = make_token(teammate)
    for i in range(LIMIT):
        log_in("alice", f"guess-{i}")
    assert bearer(alices).get("/api/me").status_code == 200  # her agents are not locked out
    assert bearer(bobs).get("/api/me").json()["username"] == "bob"
    assert bearer("mh_wrong").get("/api/me").status_code == 429
    assert bearer(bobs).get("/api/me").status_code == 200


def test_a_flood_of_failed_tokens_from_a_locked_out_address_is_not_counted(owner):
    from axes.models import AccessAttempt

    for i in range(LIMIT + 20):
        bearer(f"mh_wrong{i}").get("/api/me")
    assert AccessAttempt.objects.get().failures_since_start == LIMIT


def test_a_flood_while_locked_out_does_not_stretch_the_lock_out(owner, settings):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=2)
    for _ in range(LIMIT):
        log_in("alice", "wrong")
    locked_at = time.monotonic()
    while time.monotonic() < locked_at + 1.5:
        status = log_in("alice", "wrong").status_code
        # An answer given before the two seconds ran out was given while locked out
        # (a slow machine may answer the last one after them).
        if time.monotonic() < locked_at + 1.95:
            assert status == 429
    time.sleep(max(0.0, locked_at + 2.1 - time.monotonic()))
    assert logged_in(log_in("alice", PASSWORD))


def test_forwarded_addresses_count_only_behind_a_tls_proxy(owner, teammate, settings):
    # Without the proxy switch a client cannot dodge the count by naming other addresses.
    for i in range(LIMIT):
        log_in(f"nobody{i}", "wrong", X_Forwarded_For=f"192.0.2.{i}")
    assert log_in("somebody", "wrong", X_Forwarded_For="192.0.2.99").status_code == 429

    # Behind the proxy, clients sharing the proxy's address are counted apart, by the
    # address the proxy appended (what the client put before it is ignored).
    settings.MEMORYHUB_BEHIND_TLS_PROXY = True
    proxy = "10.0.0.2"
    for i in range(LIMIT):
        log_in(f"nobody{i}", "wrong", address=proxy, X_Forwarded_For=f"1.2.3.4, 198.51.100.{i}")
    assert (
        log_in("somebody", "wrong", address=proxy, X_Forwarded_For="198.51.100.77").status_code
        == 200
    )
    for i in range(LIMIT):
        log_in(f"anybody{i}", "wrong", address=proxy, X_Forwarded_For="192.0.2.50")
    spoofed = "198.51.100.78, 192.0.2.50"
    assert log_in("somebody", "wrong", address=proxy, X_Forwarded_For=spoofed).status_code == 429
    assert logged_in(log_in("bob", PASSWORD, address=proxy, X_Forwarded_For=spoofed))


@pytest.fixture
def redis_cache(settings, redis_url, tmp_path) -> Iterator[None]:
    """The shared cache on Redis, as REDIS_URL makes it (under a prefix of the tests)."""
    from django.core.cache import cache

    from memoryhub.engine.cache import cache_settings

    settings.CACHES = cache_settings(redis_url=redis_url, data_dir=tmp_path)
    settings.CACHES["default"]["KEY_PREFIX"] = "memoryhub-test-throttle"
    cache.clear()
    yield
    cache.clear()


@pytest.mark.integration
def test_counts_live_in_redis_when_it_is_configured(owner, redis_cache, redis_url):
    import redis
    from axes.models import AccessAttempt

    for _ in range(LIMIT):
        log_in("alice", "wrong")
    assert log_in("alice", PASSWORD).status_code == 429
    assert not AccessAttempt.objects.exists()
    keys = redis.Redis.from_url(redis_url).keys("memoryhub-test-throttle:*")
    assert len(keys) == 2  # one count for the account, one for the address


@pytest.mark.integration
def test_staff_lift_a_lock_out_counted_in_redis_from_the_command_line(owner, redis_cache):
    from django.core.management import call_command

    for i in range(LIMIT):
        log_in("alice", "wrong", address=f"198.51.100.{i}")
    assert log_in("alice", PASSWORD, address="192.0.2.1").status_code == 429
    call_command("axes_reset_username", "alice", verbosity=0)
    assert logged_in(log_in("alice", PASSWORD, address="192.0.2.1"))


def post_login(base_url: str, username: str, password: str) -> int:
    """One login through the real form: a fresh session, its CSRF token, the post."""
    import httpx

    with httpx.Client(base_url=base_url, timeout=10) as browser:
        page = browser.get("/login/").text
        token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        return browser.post(
            "/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
        ).status_code


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("store", ["database", "redis"])
def test_web_processes_share_the_counts(owner, start_web, store, request):
    redis_url = request.getfixturevalue("redis_url") if store == "redis" else ""
    if redis_url:
        import redis

        server = redis.Redis.from_url(redis_url)
        for key in server.scan_iter("memoryhub:*axes-*"):
            server.delete(key)
    first, second = start_web(redis_url=redis_url), start_web(redis_url=redis_url)

    assert {post_login(first, "alice", "wrong") for _ in range(LIMIT - 1)} == {200}
    assert post_login(second, "alice", "wrong") == 429
    assert post_login(first, "alice", PASSWORD) == 429
    assert post_login(second, "alice", PASSWORD) == 429
