"""Queueing background work safely."""

import logging
from typing import Any

from celery import Task
from django.db import transaction

logger = logging.getLogger(__name__)


def enqueue(task: Task, *args: Any) -> bool:
    """Send ``task`` now; if the broker is unreachable, log it and return False. The
    data is already committed, and the periodic backfill picks the work up later."""
    try:
        task.delay(*args)
    except Exception:
        logger.exception("Could not queue %s; the periodic catch-up will retry it", task.name)
        return False
    return True


def enqueue_on_commit(task: Task, *args: Any) -> None:
    """Queue ``task`` once the current transaction commits (never for rolled-back data)."""
    transaction.on_commit(lambda: enqueue(task, *args))
