"""Background work of the agent surface: large imports, run as jobs."""

from celery import shared_task

from memoryhub.engine.jobs import job_progress, job_run
from memoryhub.engine.models import Job
from memoryhub.surface.imports import memories_import as import_document
from teams.models import AgentToken
from teams.services import Actor


# The name is what queued messages carry: it stays the one the task had in the fact
# store, so an import queued before this task moved still runs.
@shared_task(name="facts.import", acks_late=True)
def memories_import(job_id: int) -> dict | None:
    """Import a large document, for a job: all of it in one transaction, or nothing
    (a job done does not run again; a run cut short is safe to repeat, as importing is
    idempotent)."""
    return job_run(job_id=job_id, work=_import_for_job)


def _import_for_job(job: Job) -> dict:
    args = job.arguments
    token = AgentToken.objects.filter(pk=args.get("token")).first() if args.get("token") else None
    return import_document(
        actor=Actor(user=job.owner, token=token),
        document=args["document"],
        progress=lambda done, total: job_progress(job_id=job.pk, done=done, total=total),
    )
