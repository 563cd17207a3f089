"""Jobs: a row per piece of long work, written as the work goes.

Every change is an UPDATE of the fields it touches (``filter(pk=...).update``), so a
worker reporting progress never writes back a row someone deleted, nor overwrites a
state another process set (a job finished stays finished).

Work that writes everything in one transaction (an import) cannot show its progress
through the row until it commits, so progress also goes to the shared cache, which
readers of a running job consult.
"""

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any

from celery import Task, current_app
from django.conf import settings
from django.core.cache import cache
from django.db import connection, models, transaction
from django.utils import timezone

from memoryhub.engine.errors import ApplicationError, Forbidden, NotFound
from memoryhub.engine.models import Job, JobState
from memoryhub.engine.tasks import enqueue_on_commit

logger = logging.getLogger(__name__)


def job_create(
    *, owner: Any, kind: str, task: Task | None = None, arguments: dict[str, Any] | None = None
) -> Job:
    """A queued job of ``kind`` for ``owner``, whose ``task`` is sent with its id once
    this commits (and sent again by :func:`jobs_sweep` when that run is lost)."""
    job = Job.objects.create(
        owner=owner,
        kind=kind,
        task=task.name if task is not None else "",
        arguments=arguments or {},
        heartbeat_at=timezone.now(),
    )
    if task is not None:
        enqueue_on_commit(task, job.pk)
    return job


def stale_after() -> timedelta:
    """How long a job may show no sign of life before it counts as lost."""
    return timedelta(seconds=settings.MEMORYHUB_JOB_STALE_SECONDS)


def _no_sign_of_life(now: datetime) -> models.Q:
    return models.Q(heartbeat_at__isnull=True) | models.Q(heartbeat_at__lt=now - stale_after())


def _stopped_reason(attempts: int) -> str:
    seconds = settings.MEMORYHUB_JOB_STALE_SECONDS
    times = "once" if attempts == 1 else f"{attempts} times"
    return (
        f"Its worker stopped while running it {times} (no sign of life for {seconds:g} s "
        "each time: killed, or out of memory); it is not tried again."
    )


def job_start(*, job_id: int) -> int | None:
    """Claim a job for a run: a queued one, or a running one whose run shows no sign of
    life (its worker died and the broker handed the task out again). Returns which
    attempt this is; None when the job is gone, finished, or alive in another run (a
    task delivered twice runs once). A job whose runs died ``MEMORYHUB_JOB_ATTEMPTS``
    times is failed with the reason instead."""
    now = timezone.now()
    claimable = models.Q(state=JobState.QUEUED) | (
        models.Q(state=JobState.RUNNING) & _no_sign_of_life(now)
    )
    with transaction.atomic():
        row = (
            Job.objects.select_for_update()
            .filter(pk=job_id)
            .filter(claimable)
            .values_list("attempts", flat=True)
            .first()
        )
        if row is None:
            return None
        if row >= settings.MEMORYHUB_JOB_ATTEMPTS:
            _job_end(job_id, state=JobState.FAILED, error=_stopped_reason(row))
            return None
        Job.objects.filter(pk=job_id).update(
            state=JobState.RUNNING,
            started_at=now,
            heartbeat_at=now,
            attempts=row + 1,
            progress=0.0,
        )
    return row + 1


class _Heartbeat:
    """While a job runs, a thread shows every ``MEMORYHUB_JOB_HEARTBEAT_SECONDS`` that
    it is alive, whatever the work is doing (waiting on a model, one long transaction)."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"job-{job_id}-heartbeat")
        self._thread.daemon = True

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=settings.MEMORYHUB_JOB_HEARTBEAT_SECONDS)

    def _run(self) -> None:
        try:
            while not self._stop.wait(settings.MEMORYHUB_JOB_HEARTBEAT_SECONDS):
                try:
                    Job.objects.filter(pk=self.job_id, state=JobState.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except Exception:  # the database is busy or away: the next beat may pass
                    logger.warning("Could not record that job %s is alive", self.job_id)
        finally:
            connection.close()  # this thread's own connection


# How long a progress report outside the row is kept: longer than any pause between two.
PROGRESS_SECONDS = 3600


def _progress_key(job_id: int) -> str:
    return f"job-progress:{job_id}"


def _cached(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A cache call that never fails the job or its reader: with the cache unreachable,
    the row's progress (committed with the work) is what shows."""
    try:
        return call(*args, **kwargs)
    except Exception:  # Redis down or a cache folder unwritable: an edge we do not own
        logger.warning("The cache is unreachable; job progress shows once the work commits")
        return None


def job_progress(*, job_id: int, done: int, total: int) -> None:
    """Report ``done`` of ``total`` steps (a running job only), seen at once even when
    the work reports from inside its own transaction."""
    share = min(1.0, done / total) if total else 0.0
    _cached(cache.set, _progress_key(job_id), share, timeout=PROGRESS_SECONDS)
    Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(
        progress=share, heartbeat_at=timezone.now()
    )


def _progress_reported(job: Job) -> None:
    """Give a running job the latest progress its work reported, committed or not."""
    if job.state != JobState.RUNNING:
        return
    reported = _cached(cache.get, _progress_key(job.pk))
    if isinstance(reported, float):
        job.progress = max(job.progress, reported)


def job_finish(*, job_id: int, result: dict[str, Any]) -> None:
    """Mark a job done with its result; the input it held until it ran goes."""
    _job_end(job_id, state=JobState.DONE, progress=1.0, result=result)


def job_fail(*, job_id: int, error: str) -> None:
    _job_end(job_id, state=JobState.FAILED, error=error[:2000])


# Arguments that carry a job's input (a conversation, a document), dropped when it ends.
_HELD = frozenset({"messages", "text", "document"})


def _job_end(job_id: int, **fields: Any) -> None:
    unfinished = Job.objects.filter(pk=job_id).exclude(state=JobState.DONE)
    arguments = unfinished.values_list("arguments", flat=True).first()
    if arguments is None:
        return
    kept = {k: v for k, v in arguments.items() if k not in _HELD}
    unfinished.update(arguments=kept, finished_at=timezone.now(), **fields)
    _cached(cache.delete, _progress_key(job_id))


def job_run(*, job_id: int, work: Callable[[Job], dict[str, Any]]) -> dict[str, Any] | None:
    """Run a job's work (a task's body): start it (nothing to do when it is done or
    gone), then finish it with the result, or fail it with the reason when the chat
    model or the input let it down. Any other error propagates: the task fails loudly
    and the job shows no result."""
    from memoryhub.engine.llm import ChatModelError

    if not job_start(job_id=job_id):
        return None
    job = Job.objects.select_related("owner").get(pk=job_id)
    try:
        with _Heartbeat(job_id):
            result = work(job)
    except ChatModelError as exc:
        job_fail(job_id=job_id, error=f"The chat model failed ({exc.kind}): {exc.message}")
        return None
    except ApplicationError as exc:  # e.g. the owner left the team the work was for
        job_fail(job_id=job_id, error=exc.message)
        return None
    job_finish(job_id=job_id, result=result)
    return result


def job_get_visible(*, user: Any, job_id: int) -> Job:
    """A job its owner (or staff) may read; NotFound for anyone else."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or not (user.is_authenticated and (job.owner_id == user.pk or user.is_staff)):
        raise NotFound(f"No job {job_id}.")
    _progress_reported(job)
    return job


def _jobs_readable(*, user: Any, instance: bool) -> models.QuerySet[Job]:
    """The jobs ``user`` started or, for staff asking for the whole instance, every job
    (staff read anyone's: ``job_get_visible``)."""
    if not instance:
        return Job.objects.filter(owner_id=user.pk)
    if not (user.is_authenticated and user.is_active and user.is_staff):
        raise Forbidden("Only staff read the jobs of the whole instance.")
    return Job.objects.all()


def jobs_unfinished(*, user: Any, instance: bool = False, limit: int = 5) -> tuple[list[Job], int]:
    """The latest queued or running jobs (with the progress their work reported) and
    how many there are in all."""
    unfinished = _jobs_readable(user=user, instance=instance).filter(
        state__in=(JobState.QUEUED, JobState.RUNNING)
    )
    jobs = list(unfinished.select_related("owner").order_by("-created_at", "-id")[:limit])
    for job in jobs:
        _progress_reported(job)
    return jobs, unfinished.count()


def jobs_failed_since(
    *, user: Any, since: datetime, instance: bool = False, limit: int = 5
) -> tuple[list[Job], int]:
    """The latest jobs that failed since ``since`` and how many did in all."""
    failed = _jobs_readable(user=user, instance=instance).filter(
        state=JobState.FAILED, finished_at__gte=since
    )
    jobs = list(failed.select_related("owner").order_by("-finished_at", "-id")[:limit])
    return jobs, failed.count()


def _task_named(name: str) -> Task | None:
    if not name:
        return None
    if name not in current_app.tasks:
        # A process that has not loaded every app's tasks yet (a worker has).
        current_app.loader.import_default_modules()
    return current_app.tasks.get(name)


def jobs_sweep() -> dict[str, list[int]]:
    """Find the jobs whose run was lost, as beat does every half minute: a running job
    with no sign of life for ``MEMORYHUB_JOB_STALE_SECONDS`` (its worker was killed) is
    queued again and its task sent, or failed with the reason once it was started
    ``MEMORYHUB_JOB_ATTEMPTS`` times; a queued job that long untaken (its task was lost
    while the broker was down, or with a killed worker of the filesystem queue) has its
    task sent again. A task delivered twice runs once, so sending again is safe."""
    now = timezone.now()
    stale = _no_sign_of_life(now)
    swept: dict[str, list[int]] = {"queued_again": [], "sent_again": [], "failed": []}
    with transaction.atomic():
        candidates = Job.objects.filter(
            models.Q(state__in=(JobState.QUEUED, JobState.RUNNING)) & stale
        ).values_list("pk", "state", "attempts", "task")
        for pk, state, attempts, task_name in list(candidates):
            # The same test again, so a job that beat meanwhile keeps its run.
            row = Job.objects.filter(pk=pk, state=state).filter(stale)
            task = _task_named(task_name)
            if state == JobState.RUNNING and (
                attempts >= settings.MEMORYHUB_JOB_ATTEMPTS or task is None
            ):
                why = (
                    _stopped_reason(attempts)
                    if task is not None
                    else f"Its worker stopped while running it, and no task "
                    f"'{task_name}' is known here to run it again."
                )
                if row.exists():
                    _job_end(pk, state=JobState.FAILED, error=why)
                    swept["failed"].append(pk)
                continue
            if task is None:
                continue  # queued for a task this process does not know: left alone
            fields: dict[str, Any] = {"state": JobState.QUEUED, "heartbeat_at": now}
            if state == JobState.RUNNING:
                fields["note"] = (
                    f"Its worker stopped while running it (no sign of life for "
                    f"{settings.MEMORYHUB_JOB_STALE_SECONDS:g} s); queued again."
                )
            if not row.update(**fields):
                continue
            enqueue_on_commit(task, pk)
            swept["queued_again" if state == JobState.RUNNING else "sent_again"].append(pk)
    for what, ids in swept.items():
        if ids:
            logger.warning("Jobs with no sign of life, %s: %s", what.replace("_", " "), ids)
    return swept
