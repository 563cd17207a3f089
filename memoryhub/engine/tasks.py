"""Queueing background work without ever holding up the request that asked for it.

The data is always committed before its derived work is queued, and every kind of
derived work has a periodic catch-up (the embedding backfill, the scan catch-up). So
when the broker cannot take a task, the task is dropped with a log line, and for
``MEMORYHUB_QUEUE_RETRY_SECONDS`` no further send is even tried: the circuit is open.
The circuit is per process; each web or worker process finds the broker down on its
own, once.
"""

import logging
from typing import Any

import pybreaker
from celery import Task, shared_task
from django.conf import settings
from django.db import transaction

from memoryhub.engine.circuits import CircuitLog

logger = logging.getLogger(__name__)


queue_circuit = pybreaker.CircuitBreaker(
    fail_max=1,
    reset_timeout=settings.MEMORYHUB_QUEUE_RETRY_SECONDS,
    listeners=[
        CircuitLog(
            logger,
            opened="The task queue is unreachable; background work is left to the periodic "
            "catch-up, and queueing is tried again in %g s.",
            closed="The task queue answers again.",
        )
    ],
    name="task queue",
)


def _send(task: Task, args: tuple[Any, ...]) -> None:
    # Nobody waits for these results: not subscribing to them keeps the result backend
    # out of the request entirely.
    task.apply_async(args=args, ignore_result=True)


def enqueue(task: Task, *args: Any) -> bool:
    """Send ``task`` now; False (and a log line) when the broker cannot take it or has
    failed within the last ``MEMORYHUB_QUEUE_RETRY_SECONDS``. The data is already
    committed, and the periodic catch-up does the work later."""
    if task.app.conf.task_always_eager:
        try:
            _send(task, args)
        except Exception:
            logger.exception("%s failed", task.name)
            return False
        return True
    try:
        queue_circuit.call(_send, task, args)
    except pybreaker.CircuitBreakerError as exc:
        if exc.__context__ is not None:  # this send failed and opened the circuit
            logger.error("Could not queue %s: %s", task.name, exc.__context__)
        else:
            logger.info("Not queueing %s while the task queue is unreachable.", task.name)
        return False
    except Exception:
        logger.exception("Could not queue %s; the periodic catch-up will do it", task.name)
        return False
    return True


def retried_while_failing(*errors: type[Exception]) -> dict[str, Any]:
    """Task options for work that waits on an edge we do not own (the embedder, the chat
    model): retried with backoff from 5 s up to 5 min, five times, while ``errors``
    are raised; the periodic catch-up takes over after that."""
    return {
        "autoretry_for": errors,
        "retry_backoff": 5,
        "retry_backoff_max": 300,
        "max_retries": 5,
    }


def enqueue_on_commit(task: Task, *args: Any) -> None:
    """Queue ``task`` once the current transaction commits (never for rolled-back data)."""
    transaction.on_commit(lambda: enqueue(task, *args))


@shared_task(name="memoryhub.jobs_sweep")
def jobs_sweep() -> dict[str, list[int]]:
    """Queue again, or fail with the reason, the jobs whose run was lost."""
    from memoryhub.engine.jobs import jobs_sweep as sweep

    return sweep()
