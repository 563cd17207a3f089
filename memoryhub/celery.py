"""The Celery app: Redis when REDIS_URL is set, else the filesystem transport."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="memoryhub.ping")
def ping() -> str:
    """Answer a round trip: used by the health check and the tests."""
    return "pong"
