"""Queued messages carry task names: a task that moved between packages keeps its name,
so what was queued before runs after, on a real worker."""

import pytest
from celery import Celery

from facts.models import Fact
from memoryhub.celery import app
from memoryhub.engine.jobs import job_create
from memoryhub.engine.models import Job, JobState
from memoryhub.engine.queue import celery_queue_settings

# Every name a message in a queue may carry, and the ones beat's schedule sends.
QUEUED_NAMES = {
    "codegraph.scan",
    "codegraph.scans_catch_up",
    "concepts.build",
    "concepts.catch_up",
    "concepts.extract",
    "facts.backfill_embeddings",
    "facts.distill",
    "facts.distill_due",
    "facts.embed",
    "facts.extract",
    "facts.import",
    "facts.undo_purge",
    "memoryhub.jobs_sweep",
    "memoryhub.ping",
    "wiki.embed",
    "wiki.embed_waiting",
    "wiki.rescan",
}


def test_every_task_name_a_queue_or_the_schedule_may_hold_has_a_task():
    app.autodiscover_tasks(force=True)  # as a worker does when it starts
    assert set(app.tasks) >= QUEUED_NAMES
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert scheduled <= QUEUED_NAMES


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_an_import_queued_under_the_fact_stores_task_name_runs_on_a_real_worker(
    owner, redis_url, start_worker
):
    document = [{"id": "m-1", "memory": "The release train leaves on Thursdays"}]  # Mem0
    job = job_create(owner=owner, kind="import", arguments={"document": document})
    worker = start_worker(redis_url=redis_url)
    client = Celery("memoryhub-test-client", set_as_current=False)
    client.conf.update(celery_queue_settings(redis_url=redis_url, data_dir=worker.log.parent))

    client.send_task("facts.import", args=[job.pk], queue=worker.queue).get(timeout=60)

    job = Job.objects.get(pk=job.pk)
    assert (job.state, job.result["created"]) == (JobState.DONE, 1), (job.error, job.result)
    assert Fact.objects.get(owner=owner).content == "The release train leaves on Thursdays"
