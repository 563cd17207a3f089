"""Jobs: long work's state and progress, read by its owner and staff only."""

from datetime import timedelta

import pytest
from django.utils import timezone

from concepts.tasks import concept_graph_build
from facts.tasks import facts_distill
from memoryhub.engine.jobs import (
    job_create,
    job_fail,
    job_finish,
    job_progress,
    job_start,
    jobs_sweep,
)
from memoryhub.engine.models import Job
from memoryhub.surface.tasks import memories_import

pytestmark = pytest.mark.django_db


def test_a_job_reports_its_progress_and_result_to_its_owner(owner, agent_client):
    job = job_create(owner=owner, kind="import")
    client = agent_client(owner)
    assert client.get(f"/api/jobs/{job.pk}").json()["state"] == "queued"
    assert job_start(job_id=job.pk)
    job_progress(job_id=job.pk, done=3, total=4)
    body = client.get(f"/api/jobs/{job.pk}").json()
    assert (body["state"], body["progress"]) == ("running", 0.75)
    job_finish(job_id=job.pk, result={"created": 3})
    body = client.get(f"/api/jobs/{job.pk}").json()
    assert (body["state"], body["progress"], body["result"]) == ("done", 1.0, {"created": 3})


def test_it_refuses_outsider_and_shows_staff(owner, outsider, staff, agent_client):
    job = job_create(owner=owner, kind="import")
    assert agent_client(outsider).get(f"/api/jobs/{job.pk}").status_code == 404
    assert agent_client(staff).get(f"/api/jobs/{job.pk}").status_code == 200
    assert agent_client(owner).get("/api/jobs/999999").status_code == 404


def test_a_jobs_address_opens_a_page_and_its_poll_gets_the_card(owner, owner_client):
    job = job_create(owner=owner, kind="import")
    page = owner_client.get(f"/jobs/{job.pk}/")
    assert page.status_code == 200 and "HX-Request" in page["Vary"]
    body = page.content.decode()
    assert "<html" in body and 'class="nav"' in body and f'id="job-{job.pk}"' in body
    card = owner_client.get(f"/jobs/{job.pk}/", headers={"HX-Request": "true"})
    body = card.content.decode()
    assert body.lstrip().startswith(f'<div class="job" id="job-{job.pk}"')
    assert "<html" not in body and 'hx-trigger="every 1s"' in body


def test_a_finished_job_stays_finished(owner):
    job = job_create(owner=owner, kind="distill")
    job_start(job_id=job.pk)
    job_finish(job_id=job.pk, result={"summaries": 2})
    assert not job_start(job_id=job.pk)  # its task delivered again: nothing to do
    job_fail(job_id=job.pk, error="late failure")
    job_progress(job_id=job.pk, done=1, total=2)
    job.refresh_from_db()
    assert (job.state, job.progress, job.error) == ("done", 1.0, "")
    failed = job_create(owner=owner, kind="distill")
    job_start(job_id=failed.pk)
    job_fail(job_id=failed.pk, error="the chat model answered garbage")
    assert Job.objects.get(pk=failed.pk).as_dict()["error"] == "the chat model answered garbage"


# --- A run that was lost ---------------------------------------------------------------------


def lose_its_run(job: Job, settings) -> None:
    """As a killed worker leaves it: running, its last sign of life older than the stale
    time."""
    long_ago = timezone.now() - timedelta(seconds=settings.MEMORYHUB_JOB_STALE_SECONDS + 1)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=long_ago)


def test_a_job_whose_worker_died_is_queued_again_once_then_failed_with_the_reason(
    owner, agent_client, settings, django_capture_on_commit_callbacks
):
    client = agent_client(owner)
    job = job_create(owner=owner, kind="distill", task=facts_distill)
    assert job_start(job_id=job.pk) == 1
    lose_its_run(job, settings)

    with django_capture_on_commit_callbacks() as sent:
        assert jobs_sweep()["queued_again"] == [job.pk]
    assert len(sent) == 1  # its task, sent again
    body = client.get(f"/api/jobs/{job.pk}").json()
    assert (body["state"], body["attempts"]) == ("queued", 1)
    assert "worker stopped while running it" in body["note"]

    assert job_start(job_id=job.pk) == 2  # the task sent again starts it
    lose_its_run(job, settings)
    with django_capture_on_commit_callbacks() as sent:
        assert jobs_sweep()["failed"] == [job.pk]
    assert not sent
    body = client.get(f"/api/jobs/{job.pk}").json()
    assert (body["state"], body["attempts"]) == ("failed", 2)
    assert "stopped while running it 2 times" in body["error"]
    assert body["finished_at"] is not None


def test_a_job_showing_signs_of_life_is_left_running_and_not_started_twice(owner, settings):
    job = job_create(owner=owner, kind="distill", task=facts_distill)
    assert job_start(job_id=job.pk) == 1
    job_progress(job_id=job.pk, done=1, total=3)  # a sign of life

    assert jobs_sweep() == {"queued_again": [], "sent_again": [], "failed": []}
    assert job_start(job_id=job.pk) is None  # its task delivered twice: runs once
    lose_its_run(job, settings)
    assert job_start(job_id=job.pk) == 2  # handed out again after its worker died
    assert Job.objects.get(pk=job.pk).progress == 0.0


def test_a_task_handed_out_again_after_the_last_attempt_fails_the_job(owner, settings):
    settings.MEMORYHUB_JOB_ATTEMPTS = 1
    job = job_create(owner=owner, kind="import", task=memories_import)
    assert job_start(job_id=job.pk) == 1
    lose_its_run(job, settings)

    assert job_start(job_id=job.pk) is None  # as the broker hands it out once more

    job.refresh_from_db()
    assert job.state == "failed" and "stopped while running it once" in job.error


def test_a_queued_job_whose_task_was_lost_is_sent_again_and_runs(
    owner, settings, django_capture_on_commit_callbacks
):
    job = job_create(owner=owner, kind="concept_build", task=concept_graph_build)
    lose_its_run(job, settings)  # queued that long: its message is gone

    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_sweep()["sent_again"] == [job.pk]

    job.refresh_from_db()
    assert (job.state, job.attempts, job.note) == ("done", 1, "")
