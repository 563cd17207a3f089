"""Settings from the environment: a value that cannot be read stops start-up with the
variable's name, and reading the settings alone writes nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def start(tmp_path, code: str = "import django; django.setup()", **env: str):
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MEMORYHUB_", "DATABASE_URL", "REDIS_URL", "SECRET_KEY"))
    }
    environment.update(MEMORYHUB_DATA_DIR=str(tmp_path / "data"), **env)
    environment["DJANGO_SETTINGS_MODULE"] = "memoryhub.settings"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=environment, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("DEBUG", "treu", "use true or false"),
        ("MEMORYHUB_EMBEDDINGS_ENABLED", "maybe", "use true or false"),
        ("MEMORYHUB_RECALL_MAX_ITEMS", "eight", "use a whole number"),
        ("MEMORYHUB_WEB_WORKERS", "0", "at least 1"),
        ("MEMORYHUB_BACKFILL_EVERY_SECONDS", "soon", "use a number"),
        ("MEMORYHUB_EMBEDDINGS_PROVIDER", "torch", "use one of local, openai, legacy"),
        ("LOG_LEVEL", "loud", "use one of debug"),
        ("TIME_ZONE", "Mars/Olympus", "use a zone"),
        ("DB_CONN_MAX_AGE", "-1", "at least 0"),
        ("MEMORYHUB_LLM_CONCURRENCY", "0", "at least 1"),
        ("MEMORYHUB_LLM_TIMEOUT_SECONDS", "-5", "at least 0.1"),
    ],
)
def test_an_unreadable_value_stops_start_up_naming_the_variable(tmp_path, name, value, says):
    done = start(tmp_path, **{name: value})
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert f"{name}={value!r}" in done.stderr and says in done.stderr, done.stderr[-600:]


def test_an_engine_other_than_sqlite_or_postgresql_is_refused_at_start_up(tmp_path):
    done = start(tmp_path, DATABASE_URL="mysql://memoryhub@127.0.0.1:3306/memoryhub")
    assert done.returncode != 0
    assert "runs on SQLite or PostgreSQL" in done.stderr, done.stderr[-600:]


SHOW_DATABASE = (
    "import json; from django.conf import settings; db = settings.DATABASES['default']; "
    "print(json.dumps({k: db[k] for k in ('ENGINE', 'NAME', 'HOST', 'PORT', 'CONN_MAX_AGE')}"
    " | {'pool': db.get('OPTIONS', {}).get('pool')}))"
)


def test_a_postgresql_url_runs_on_a_pool_of_connections_per_process(tmp_path):
    url = "postgres://memoryhub@db.internal:5433/memoryhub"
    done = start(tmp_path, code=SHOW_DATABASE, DATABASE_URL=url, DB_POOL_MAX_SIZE="4")
    assert done.returncode == 0, done.stderr[-600:]
    db = json.loads(done.stdout)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["HOST"], db["PORT"]) == ("memoryhub", "db.internal", 5433)
    assert db["pool"] == {"min_size": 1, "max_size": 4, "timeout": 30}
    assert db["CONN_MAX_AGE"] == 0  # pooled connections go back after each request
    done = start(tmp_path, code=SHOW_DATABASE, DATABASE_URL=url, DB_POOL="false")
    db = json.loads(done.stdout)
    assert (db["pool"], db["CONN_MAX_AGE"]) == (None, 60)  # one per thread, as behind PgBouncer


def test_readable_values_start(tmp_path):
    done = start(tmp_path, DEBUG="false", MEMORYHUB_RECALL_MAX_ITEMS="12", LOG_LEVEL="warning")
    assert done.returncode == 0, done.stderr[-600:]


def test_reading_the_settings_writes_nothing_and_start_up_makes_the_folders(tmp_path):
    data = tmp_path / "data"
    done = start(tmp_path, code="from django.conf import settings; settings.DATABASES")
    assert done.returncode == 0, done.stderr[-600:]
    assert not data.exists()
    done = start(tmp_path)
    assert done.returncode == 0, done.stderr[-600:]
    assert (data / "static").is_dir() and (data / "queue" / "messages").is_dir()


def test_the_secret_key_is_made_once_and_kept(tmp_path):
    read = (
        "import django; django.setup(); "
        "from django.conf import settings; print(settings.SECRET_KEY)"
    )
    first, second = start(tmp_path, code=read), start(tmp_path, code=read)
    assert first.returncode == 0, first.stderr[-600:]
    assert first.stdout.strip() == second.stdout.strip() != ""
    assert (tmp_path / "data" / "secret_key").stat().st_mode & 0o777 == 0o600
