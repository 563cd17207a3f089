"""Faults, for real: a broker that dies during writes, workers killed while embedding
and while scanning. Every acknowledged write survives, the derived work completes
after recovery (handed back, handed out again, or redone by a catch-up), and nothing
is done twice: each fact's vector is stored once, each file indexed once."""

import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Callable

import pytest
from celery import Celery
from django.db import connection

from codegraph import services as codegraph_services
from codegraph.models import CodeProject, ScanState, SourceFile, Symbol
from facts.models import Fact
from facts.search import FACT_VECTORS
from facts.services.create import fact_bulk_create
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.queue import celery_queue_settings
from memoryhub.engine.tasks import queue_circuit
from teams.services import Actor

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    # "Each embedded once" is counted in sqlite-vec's change log of vector writes.
    pytest.mark.sqlite_only("counts vector writes in the sqlite-vec change log"),
]

EMBEDDED = "local:all-MiniLM-L6-v2-int8"


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def last_vector_change() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT coalesce(max(seq), 0) FROM {FACT_VECTORS.changes_table}")
        return cursor.fetchone()[0]


def vector_writes(since: int) -> Counter:
    """How many times each fact's vector was stored since change ``since``."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {FACT_VECTORS.changes_table} WHERE seq > %s", [since])
        return Counter(row[0] for row in cursor.fetchall())


def embedded_count(ids: list[int]) -> int:
    return Fact.objects.filter(pk__in=ids, embedding_model=EMBEDDED).count()


def distinct_sentence(n: int) -> str:
    # Words no other sentence shares, so that no two facts merge as near-duplicates.
    return f"Record {n} " + " ".join(uuid.uuid4().hex[:8] for _ in range(5))


def unembedded_facts(owner, count: int) -> list[int]:
    """``count`` stored facts that still wait for their vectors."""
    MemoryConfig.objects.update_or_create(pk=1, defaults={"embeddings_enabled": False})
    results = fact_bulk_create(
        actor=Actor(user=owner),
        items=[{"content": distinct_sentence(n)} for n in range(count)],
    )
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=True)
    return [r.fact.pk for r in results]


def test_writes_while_the_broker_dies_and_comes_back_are_kept_and_each_embedded_once(
    owner, agent_client, redis_server, start_worker, broker_at, monkeypatch
):
    from memoryhub.celery import app

    worker = start_worker(redis_server.url, queue="celery")
    client = agent_client(owner)
    since = last_vector_change()
    acknowledged: dict[int, str] = {}

    def write(n: int) -> None:
        content = distinct_sentence(n)
        response = client.post("/api/memories", {"content": content}, "application/json")
        assert response.status_code == 201, response.content
        acknowledged[response.json()["id"]] = content

    with broker_at(redis_server.url):
        monkeypatch.setattr(queue_circuit, "reset_timeout", 0.5)
        for n in range(8):
            write(n)
        redis_server.kill()
        for n in range(8, 16):
            write(n)
        assert queue_circuit.current_state == "open"
        redis_server.start()  # empty: whatever was queued and not yet taken is gone
        time.sleep(0.6)
        for n in range(16, 24):
            write(n)
        assert queue_circuit.current_state == "closed"
        # The embedding catch-up, as beat sends it.
        app.send_task("facts.backfill_embeddings").get(timeout=60)

    ids = list(acknowledged)
    wait_for(lambda: embedded_count(ids) == len(ids), 60, "every fact embedded")
    stored = dict(Fact.objects.filter(owner=owner).values_list("pk", "content"))
    assert stored == acknowledged, worker.output()
    writes = vector_writes(since)
    assert {i: writes[i] for i in ids} == dict.fromkeys(ids, 1)


def test_an_embedding_whose_pool_process_is_killed_is_handed_back_and_finished_once(
    owner, redis_server, start_worker, broker_at
):
    from memoryhub.celery import app

    ids = unembedded_facts(owner, 400)
    worker = start_worker(redis_server.url, queue="celery", pool="prefork")
    [pool_process] = worker.pool_pids()
    since = last_vector_change()
    with broker_at(redis_server.url):
        task_id = app.send_task("facts.embed", args=[ids]).id
        wait_for(lambda: 0 < embedded_count(ids) < len(ids), 60, "part of the batch embedded")
        os.kill(pool_process, signal.SIGKILL)
        wait_for(lambda: embedded_count(ids) == len(ids), 60, "the rest embedded")
    output = worker.output()
    assert "SIGKILL" in output and output.count(f"facts.embed[{task_id}] received") == 2, output
    writes = vector_writes(since)
    assert {i: writes[i] for i in ids} == dict.fromkeys(ids, 1)


def test_an_embedding_whose_worker_is_killed_is_handed_out_again_after_the_visibility_timeout(
    owner, redis_server, start_worker, broker_at
):
    from memoryhub.celery import app

    ids = unembedded_facts(owner, 400)
    env = {"MEMORYHUB_QUEUE_VISIBILITY_TIMEOUT": "2"}
    first = start_worker(redis_server.url, queue="celery", env=env)
    since = last_vector_change()
    with broker_at(redis_server.url):
        app.send_task("facts.embed", args=[ids])
        wait_for(lambda: 0 < embedded_count(ids) < len(ids), 60, "part of the batch embedded")
        first.kill()  # the whole worker, not just a pool process: nobody hands it back
        done = embedded_count(ids)
        second = start_worker(redis_server.url, queue="celery", env=env)
        wait_for(lambda: embedded_count(ids) == len(ids), 60, "the rest embedded")
    assert done < len(ids)
    assert "facts.embed" in second.output()
    writes = vector_writes(since)
    assert {i: writes[i] for i in ids} == dict.fromkeys(ids, 1)


def test_on_the_filesystem_queue_the_backfill_finishes_what_a_killed_worker_was_embedding(
    owner, start_worker
):
    ids = unembedded_facts(owner, 400)
    first = start_worker()
    queue = first.queue
    client = Celery("faults-test-client", set_as_current=False)
    client.conf.update(celery_queue_settings(redis_url="", data_dir=first.log.parent))
    since = last_vector_change()
    client.send_task("facts.embed", args=[ids], queue=queue)
    wait_for(lambda: 0 < embedded_count(ids) < len(ids), 60, "part of the batch embedded")
    first.kill()
    second = start_worker(queue=queue)
    # The filesystem queue forgot the task its killed worker held; beat's catch-up runs.
    client.send_task("facts.backfill_embeddings", queue=second.queue).get(timeout=60)
    assert embedded_count(ids) == len(ids)
    writes = vector_writes(since)
    assert {i: writes[i] for i in ids} == dict.fromkeys(ids, 1)


def test_a_scan_whose_pool_process_is_killed_is_finished_by_the_catch_up_and_indexed_once(
    owner, tmp_path, settings, redis_server, start_worker, broker_at
):
    files, functions = 3000, 4
    root = tmp_path / "big"
    for n in range(files):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(
            "".join(f"def f{n}_{k}(x):\n    return x + {k}\n\n" for k in range(functions))
        )
    env = {"CODEGRAPH_ALLOWED_ROOTS": str(tmp_path), "CODEGRAPH_SCAN_STALE_SECONDS": "2"}
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    settings.CODEGRAPH_SCAN_STALE_SECONDS = 2
    worker = start_worker(redis_server.url, queue="celery", pool="prefork", env=env)
    [pool_process] = worker.pool_pids()

    def row() -> CodeProject:
        return CodeProject.objects.get(pk=project.pk)

    with broker_at(redis_server.url):
        project = codegraph_services.code_project_scan_request(
            actor=Actor(user=owner), name="big", path=str(root)
        )
        wait_for(
            lambda: (p := row()).state == ScanState.RUNNING and 0 < p.files_done < files,
            60,
            "the scan half way",
        )
        os.kill(pool_process, signal.SIGKILL)
        killed_at = row().files_done

        def finished() -> bool:
            if row().state == ScanState.DONE:
                return True
            codegraph_services.code_project_scans_catch_up()  # what beat runs every minute
            return False

        wait_for(finished, 60, "the scan to be finished")
    project = row()
    assert killed_at < files
    assert project.file_count == files and project.symbol_count == files * functions
    assert SourceFile.objects.filter(project=project).count() == files
    assert Symbol.objects.filter(project=project).count() == files * functions
    assert "SIGKILL" in worker.output()
