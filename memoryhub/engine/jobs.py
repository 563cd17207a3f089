"""Jobs: a row per piece of long work, written as the work goes.

Every change is an UPDATE of the fields it touches (``filter(pk=...).update``), so a
worker reporting progress never writes back a row someone deleted, nor overwrites a
state another process set (a job finished stays finished).

Work that writes everything in one transaction (an import) cannot show its progress
through the row until it commits, so progress also goes to the shared cache, which
readers of a running job consult.
"""

import logging
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.utils import timezone

from memoryhub.engine.errors import ApplicationError, NotFound
from memoryhub.engine.models import Job, JobState

logger = logging.getLogger(__name__)


def job_create(*, owner: Any, kind: str, arguments: dict[str, Any] | None = None) -> Job:
    """A queued job of ``kind`` for ``owner``; queue its task on commit with its id."""
    return Job.objects.create(owner=owner, kind=kind, arguments=arguments or {})


def job_start(*, job_id: int) -> bool:
    """Mark a queued job running; False when it is gone or already finished (a task
    delivered again after its job completed does nothing)."""
    unfinished = [JobState.QUEUED, JobState.RUNNING]
    return bool(
        Job.objects.filter(pk=job_id, state__in=unfinished).update(
            state=JobState.RUNNING, started_at=timezone.now()
        )
    )


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
    Job.objects.filter(pk=job_id, state=JobState.RUNNING).update(progress=share)


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
