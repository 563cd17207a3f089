"""Background work of the fact store: thin entry points over the services."""

from celery import shared_task

from facts.services import curation, distillation, embedding, extraction
from memoryhub.engine.embeddings import EmbeddingError
from memoryhub.engine.jobs import job_progress, job_run
from memoryhub.engine.models import Job
from memoryhub.engine.tasks import retried_while_failing
from teams.models import AgentToken
from teams.services import Actor


@shared_task(
    name="facts.embed",
    acks_late=True,
    **retried_while_failing(EmbeddingError),
)
def facts_embed(fact_ids: list[int]) -> int:
    """Embed these facts, and those waiting behind them; retried with backoff while
    the embedder fails."""
    return embedding.facts_embed(fact_ids=fact_ids) + embedding.facts_embed_waiting()


@shared_task(name="facts.backfill_embeddings", acks_late=True)
def facts_backfill_embeddings() -> int:
    """Embed every fact lacking a vector from the configured model."""
    return embedding.facts_backfill()


@shared_task(name="facts.undo_purge", acks_late=True)
def fact_undo_purge() -> int:
    """Drop the undo records whose time ran out, with the deleted facts they held."""
    return curation.fact_undo_purge()


@shared_task(name="facts.distill", acks_late=True)
def facts_distill(job_id: int) -> dict | None:
    """Distill now, for a job: the owner's scopes that are due (a job done does not run
    again). A chat model failure fails the job and writes nothing."""
    return job_run(
        job_id=job_id,
        work=lambda job: distillation.facts_distill(
            owner_id=job.owner_id,
            project=job.arguments.get("project"),
            progress=lambda done, total: job_progress(job_id=job_id, done=done, total=total),
        ),
    )


@shared_task(name="facts.distill_due", acks_late=True)
def facts_distill_due() -> dict | None:
    """The scheduled distillation of every scope, when switched on and due."""
    return distillation.facts_distill_due()


@shared_task(name="facts.extract", acks_late=True)
def memory_extract(job_id: int) -> dict | None:
    """Extract a long conversation, for a job (a job done does not run again). A chat
    model failure fails the job and writes nothing."""
    return job_run(job_id=job_id, work=_extract_for_job)


def _extract_for_job(job: Job) -> dict:
    args = job.arguments
    token = AgentToken.objects.filter(pk=args.get("token")).first() if args.get("token") else None
    return extraction.memory_extract(
        actor=Actor(user=job.owner, token=token),
        conversation=extraction.Conversation(messages=args["messages"], text=args["text"]),
        session_id=args["session_id"],
        project=args["project"],
        visibility=args["visibility"],
        team=args["team"],
    )
