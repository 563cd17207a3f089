"""The scan task through a real worker process (filesystem transport)."""

import pytest
from celery import Celery

from codegraph import services
from codegraph.models import CodeProject, ScanState
from memoryhub.engine.queue import celery_queue_settings
from teams.services import Actor

from . import test_scan as scan_helpers

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_runs_the_scan_task(owner, tmp_path, settings, monkeypatch, start_worker):
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    monkeypatch.setenv("CODEGRAPH_ALLOWED_ROOTS", str(tmp_path))  # the worker's settings
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    project = services.code_project_register(actor=Actor(user=owner), name="shop", path=str(root))
    worker = start_worker()
    app = Celery("codegraph-test-client", set_as_current=False)
    app.conf.update(celery_queue_settings(redis_url="", data_dir=worker.log.parent))
    result = app.send_task("codegraph.scan", args=[project.pk], queue=worker.queue)
    assert result.get(timeout=60)["files"] == 5, worker.output()
    project.refresh_from_db()
    assert project.state == ScanState.DONE and project.symbol_count == 8
    assert CodeProject.objects.count() == 1


def test_a_worker_pool_process_parses_in_worker_processes(
    owner, tmp_path, settings, monkeypatch, start_worker
):
    """Celery's pool processes are daemons, which the standard library forbids to start
    processes; the scan's parallel parsing works there all the same."""
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    monkeypatch.setenv("CODEGRAPH_ALLOWED_ROOTS", str(tmp_path))
    monkeypatch.setenv("CODEGRAPH_PARALLEL_MIN_FILES", "1")
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    project = services.code_project_register(actor=Actor(user=owner), name="shop", path=str(root))
    worker = start_worker(pool="prefork")
    app = Celery("codegraph-test-client", set_as_current=False)
    app.conf.update(celery_queue_settings(redis_url="", data_dir=worker.log.parent))
    answer = app.send_task("codegraph.scan", args=[project.pk], queue=worker.queue).get(timeout=60)
    assert answer["files"] == 5 and answer["workers"] >= 2, worker.output()
    project.refresh_from_db()
    assert project.state == ScanState.DONE and project.symbol_count == 8
