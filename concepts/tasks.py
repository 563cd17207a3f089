"""Background work of the concept graph: thin entry points over the services."""

from celery import shared_task

from concepts import services
from memoryhub.engine.jobs import job_progress, job_run
from memoryhub.engine.llm import ChatModelUnavailable
from memoryhub.engine.tasks import retried_while_failing

# Facts the periodic catch-up extracts per run.
CATCH_UP_LIMIT = 2000


@shared_task(
    name="concepts.extract",
    acks_late=True,
    **retried_while_failing(ChatModelUnavailable),
)
def concept_facts_extract(fact_ids: list[int]) -> int:
    """Extract these facts into the graph; retried with backoff while the chat model
    cannot be reached."""
    return services.concept_facts_extract(fact_ids=fact_ids).facts


@shared_task(name="concepts.catch_up", acks_late=True)
def concept_graph_catch_up() -> int:
    """Extract the facts the graph lacks or holds an older version of."""
    return services.concept_graph_sync(limit=CATCH_UP_LIMIT).facts


@shared_task(name="concepts.build", acks_late=True)
def concept_graph_build(job_id: int) -> dict | None:
    """Build the graph of what a job's owner can see (a job done does not run again)."""
    return job_run(
        job_id=job_id,
        work=lambda job: services.concept_graph_build(
            owner_id=job.owner_id,
            project=job.arguments.get("project"),
            progress=lambda done, total: job_progress(job_id=job_id, done=done, total=total),
        ),
    )
