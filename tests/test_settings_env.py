"""Settings from the environment: a value that cannot be read stops start-up with the
variable's name, and reading the settings alone writes nothing."""

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


def test_a_postgresql_database_is_refused_at_start_up_until_it_is_supported(tmp_path):
    done = start(tmp_path, DATABASE_URL="postgres://memoryhub@127.0.0.1:5432/memoryhub")
    assert done.returncode != 0
    assert "runs on SQLite only for now" in done.stderr, done.stderr[-600:]


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
