"""Production settings: behind a TLS-terminating proxy one switch turns on HSTS, the HTTPS
redirect, secure cookies and the proxy's scheme header; every response carries a
Content-Security-Policy that refuses inline script and style."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def manage(*args: str, env: dict[str, str], data_dir: Path) -> subprocess.CompletedProcess:
    import os

    # The server's environment, without the test run's own settings.
    unset = ("DEBUG", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "SESSION_COOKIE_SECURE")
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in unset and not k.startswith(("SECURE_", "MEMORYHUB_", "CSRF_"))
    }
    clean |= {"MEMORYHUB_DATA_DIR": str(data_dir), **env}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "DEBUG": "false",
    "MEMORYHUB_BEHIND_TLS_PROXY": "true",
    "ALLOWED_HOSTS": "memory.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
}

SHOW_SETTINGS = (
    "import json; from django.conf import settings as s; print(json.dumps({k: getattr(s, k) "
    "for k in ['SECURE_PROXY_SSL_HEADER', 'SECURE_SSL_REDIRECT', 'SECURE_HSTS_SECONDS', "
    "'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD', 'SESSION_COOKIE_SECURE', "
    "'CSRF_COOKIE_SECURE']}))"
)


def test_the_deploy_check_is_clean_behind_a_tls_proxy(tmp_path):
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION, data_dir=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_without_tls_the_deploy_check_names_what_is_missing(tmp_path):
    env = {k: v for k, v in PRODUCTION.items() if k != "MEMORYHUB_BEHIND_TLS_PROXY"}
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env, data_dir=tmp_path)
    assert result.returncode != 0
    for code in ("W004", "W008", "W012", "W016"):
        assert f"security.{code}" in result.stderr


def settings_of(env: dict[str, str], data_dir: Path) -> dict:
    result = manage("shell", "-c", SHOW_SETTINGS, env=env, data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_switch_sets_the_safe_group_and_each_setting_can_be_set_alone(tmp_path):
    assert settings_of(PRODUCTION, tmp_path) == {
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
    }
    alone = {
        "SECURE_HSTS_SECONDS": "3600",
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "true",
        "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_SCHEME,https",
    }
    assert settings_of(alone, tmp_path) == {
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_SCHEME", "https"],
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 3600,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": False,
    }


@pytest.mark.django_db
def test_every_page_sends_a_policy_without_inline_script_or_style(owner_client, client):
    for response in (owner_client.get("/memory/"), client.get("/login/"), client.get("/nope/")):
        policy = response["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["script-src"] == "'self'"
        assert directives["style-src"] == "'self'"
        assert directives["frame-ancestors"] == "'none'"
        assert "unsafe" not in policy


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_behind_the_proxy_the_server_speaks_only_https(start_web):
    import httpx

    url = start_web(**PRODUCTION)
    host = {"Host": "memory.example.com"}
    plain = httpx.get(f"{url}/login/", headers=host)
    assert plain.status_code == 301
    assert plain.headers["Location"] == "https://memory.example.com/login/"

    secure = httpx.get(f"{url}/login/", headers=host | {"X-Forwarded-Proto": "https"})
    assert secure.status_code == 200
    assert secure.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert "Secure" in secure.headers["Set-Cookie"]
    assert "script-src 'self'" in secure.headers["Content-Security-Policy"]

    # A health probe that comes straight to the server is answered, not redirected.
    assert httpx.get(f"{url}/api/health", headers=host).status_code in (200, 503)


def test_a_database_pool_too_small_for_the_threads_is_named_with_the_fix(tmp_path):
    postgres = {"DATABASE_URL": "postgres://memoryhub@127.0.0.1:5432/memoryhub"}
    small = manage("check", env={**postgres, "DB_POOL_MAX_SIZE": "6"}, data_dir=tmp_path)
    assert small.returncode == 0 and "memoryhub.W001" in small.stderr + small.stdout
    assert "Set DB_POOL_MAX_SIZE to 8 or more, or MEMORYHUB_WEB_THREADS to 2" in (
        small.stderr + small.stdout
    )
    fewer = {**postgres, "DB_POOL_MAX_SIZE": "6", "MEMORYHUB_WEB_THREADS": "2"}
    for env in (postgres, fewer, {}):  # the defaults fit, and SQLite has no pool
        result = manage("check", env=env, data_dir=tmp_path)
        assert "memoryhub.W001" not in result.stderr + result.stdout, env
