"""The environment a benchmark runs in: a throwaway data directory with Django set up
in it, a user with an agent token, and a note of the machine and the code measured."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@contextlib.contextmanager
def temp_data_dir(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A fresh MEMORYHUB_DATA_DIR, removed afterwards unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            print(f"(kept {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)


def bench_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment the bench and its server run with: the temp data dir, no cap on
    active facts (a bulk load would otherwise be archived down to the default 1,000),
    quiet logs, plus ``extra``."""
    env = dict(os.environ)
    env.update(
        {
            # Never the user's own database or broker.
            "DATABASE_URL": "",
            "REDIS_URL": "",
            "MEMORYHUB_DATA_DIR": str(data_dir),
            "MEMORYHUB_MAX_ACTIVE_FACTS": "0",
            "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings",
        }
    )
    env.update(extra)
    return env


def django_setup(env: dict[str, str]) -> None:
    """Configure Django in this process with ``env`` and migrate its database."""
    os.environ.update(env)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)


def bench_user(username: str = "bench"):
    """A user who owns the benchmark's facts, with an agent token. Returns
    ``(user, actor, secret)``."""
    from django.contrib.auth import get_user_model

    from teams.services import Actor, agent_token_create

    user = get_user_model().objects.create_user(username=username, password=None)
    actor = Actor(user=user)
    _, secret = agent_token_create(actor=actor, name=f"{username}-agent", scopes=["read", "write"])
    return user, actor, secret


def machine_note() -> str:
    """CPU count and load, since other work on a small box skews every figure."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return f"{os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"


def revision() -> str:
    """The checkout's commit, marked when it has local changes: the code measured."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "an unknown revision"
    return commit + (" + local changes" if dirty else "")
