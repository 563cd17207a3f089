"""Jobs: long work's state and progress, read by its owner and staff only."""

import pytest

from memoryhub.engine.jobs import job_create, job_fail, job_finish, job_progress, job_start
from memoryhub.engine.models import Job

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
