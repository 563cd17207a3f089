"""The scan catch-up: scans whose task was lost or whose worker died are queued again,
once, and a scan taken for dead stops writing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from codegraph import services
from codegraph.models import CodeProject, ScanState, SourceFile, Symbol
from codegraph.services import scan as scan_module
from codegraph.tasks import codegraph_scan
from teams.services import Actor

from . import test_scan as scan_helpers

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(owner, tree, settings) -> CodeProject:
    settings.CODEGRAPH_SCAN_STALE_SECONDS = 60
    # Registered and queued, but its task never reached a worker.
    return services.code_project_register(actor=Actor(user=owner), name="shop", path=str(tree))


tree = scan_helpers.tree


def quiet_for(project: CodeProject, seconds: float, **fields: object) -> None:
    CodeProject.objects.filter(pk=project.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=seconds), **fields
    )


def catch_up(django_capture_on_commit_callbacks) -> list[int]:
    with django_capture_on_commit_callbacks(execute=True):
        return services.code_project_scans_catch_up()


def test_a_scan_whose_task_was_lost_is_queued_again_and_runs(
    project, django_capture_on_commit_callbacks
):
    quiet_for(project, 61)
    assert catch_up(django_capture_on_commit_callbacks) == [project.pk]
    project.refresh_from_db()
    assert project.state == ScanState.DONE and project.symbol_count == 8


def test_a_scan_queued_a_moment_ago_is_left_to_its_task(
    project, django_capture_on_commit_callbacks
):
    quiet_for(project, 30)
    assert catch_up(django_capture_on_commit_callbacks) == []
    project.refresh_from_db()
    assert project.state == ScanState.QUEUED


def test_a_scan_whose_worker_died_is_done_again_from_where_the_index_stands(
    project, django_capture_on_commit_callbacks
):
    # The worker died after its first batch: the files are listed, one is indexed.
    services.code_project_scan(project_id=project.pk)
    unparsed = SourceFile.objects.filter(project=project).exclude(path="shop/auth.py")
    scan_module._children_delete(list(unparsed.values_list("pk", flat=True)))
    unparsed.update(sha256="")
    assert Symbol.objects.filter(project=project).count() == 2
    quiet_for(project, 61, state=ScanState.RUNNING)
    assert catch_up(django_capture_on_commit_callbacks) == [project.pk]
    project.refresh_from_db()
    assert project.state == ScanState.DONE
    assert project.file_count == 5 and project.symbol_count == 8
    assert Symbol.objects.filter(project=project).count() == 8


def test_a_running_scan_that_shows_signs_of_life_is_left_alone(
    project, django_capture_on_commit_callbacks
):
    quiet_for(project, 10, state=ScanState.RUNNING, started_at=timezone.now())
    assert catch_up(django_capture_on_commit_callbacks) == []
    assert CodeProject.objects.get(pk=project.pk).state == ScanState.RUNNING


def test_the_catch_up_run_twice_queues_a_scan_once(project, django_capture_on_commit_callbacks):
    quiet_for(project, 61, state=ScanState.RUNNING)
    with django_capture_on_commit_callbacks() as queued:
        first = services.code_project_scans_catch_up()
        second = services.code_project_scans_catch_up()
    assert first == [project.pk] and second == []
    assert len(queued) == 1


def test_a_scan_task_delivered_twice_scans_once(project):
    first = codegraph_scan.apply(args=[project.pk]).get()
    again = codegraph_scan.apply(args=[project.pk]).get()
    assert first["files"] == 5
    assert again["files"] == 0 and again["errors"] == ["The project is not queued."]


def test_a_scan_taken_for_dead_stops_before_writing_anything_more(project):
    def taken_over(done: int, total: int) -> None:
        # Meanwhile the catch-up took the scan for dead and queued it again.
        CodeProject.objects.filter(pk=project.pk).update(
            state=ScanState.QUEUED, heartbeat_at=timezone.now()
        )

    result = services.code_project_scan(project_id=project.pk, progress=taken_over)
    assert result.errors == ["The scan was taken over."]
    project.refresh_from_db()
    assert project.state == ScanState.QUEUED
    assert not SourceFile.objects.filter(project=project).exists()


def test_a_scan_whose_worker_dies_in_every_run_is_given_up_saying_why_until_scanned_again(
    project, owner, tree, django_capture_on_commit_callbacks
):
    # Two runs began, and the worker died in each (say, out of memory on one file).
    quiet_for(project, 61, state=ScanState.RUNNING, scan_attempts=2)

    with django_capture_on_commit_callbacks() as queued:
        assert services.code_project_scans_catch_up() == []
    assert not queued
    project.refresh_from_db()
    assert project.state == ScanState.FAILED
    assert "stopped while scanning, 2 times" in project.error
    assert "until you scan again" in project.error

    with django_capture_on_commit_callbacks(execute=True):
        services.code_project_scan_request(actor=Actor(user=owner), name="shop", path=str(tree))
    project.refresh_from_db()
    assert (project.state, project.scan_attempts, project.error) == (ScanState.DONE, 1, "")


def test_a_scan_task_handed_out_again_after_the_last_run_died_gives_up(project):
    quiet_for(project, 61, state=ScanState.RUNNING, scan_attempts=2)

    result = codegraph_scan.apply(args=[project.pk]).get()  # as Redis hands it out again

    assert "stopped while scanning" in result["errors"][0]
    assert CodeProject.objects.get(pk=project.pk).state == ScanState.FAILED
