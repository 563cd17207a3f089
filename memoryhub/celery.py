"""The Celery app: Redis when REDIS_URL is set, else the filesystem transport."""

import os
import warnings

from celery import Celery, signals
from celery.exceptions import SecurityWarning

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

if set(app.conf.accept_content) == {"json"}:
    # Celery warns against a worker running as root because a pickled message would run
    # its code as root; it refuses pickle as root outright. This worker takes JSON only,
    # so the warning (a screenful at every start in a root container) says nothing here;
    # runall states in one line that it runs as root.
    warnings.filterwarnings(
        "ignore", message="You're running the worker with superuser", category=SecurityWarning
    )


@app.task(name="memoryhub.ping")
def ping() -> str:
    """Answer a round trip: used by the health check and the tests."""
    return "pong"


@signals.worker_init.connect
def load_shared_models(**kwargs: object) -> None:
    """Before the worker forks its pool (and beat): the local embedding model's query
    session, which every task that embeds or scans a wiki page uses, then shared by the
    forked processes instead of loaded by each."""
    from memoryhub.engine.embeddings.factory import local_embedder_load_before_fork

    local_embedder_load_before_fork()
