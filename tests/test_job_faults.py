"""A worker killed in the middle of a job, for real: on the filesystem queue and on
Redis, for every kind of job (distill, extract, concept build, import) and for a scan.
The job is found by its missing heartbeat, run again by another worker, and ends done
with everything written once; a job whose runs die twice ends failed, saying why."""

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from codegraph import services as codegraph_services
from codegraph.models import CodeProject, ScanState, SourceFile, Symbol
from concepts.models import FactExtraction, Triple
from concepts.services import concept_graph_build_request
from facts.models import Fact
from facts.services.create import fact_bulk_create
from facts.services.distillation import facts_distill_request
from facts.services.extraction import Conversation, memory_extract_request
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.jobs import jobs_sweep
from memoryhub.engine.llm.tests.conftest import Reply, completion, serve, user_data  # noqa: F401
from memoryhub.engine.models import Job, MemoryConfig
from memoryhub.engine.queue import queue_folders
from memoryhub.surface.imports import memories_import_request
from teams.services import Actor

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# A running job shows a sign of life five times a second and is taken for lost after
# two seconds without one: the bounds production has in minutes, shortened.
FAST = {"MEMORYHUB_JOB_HEARTBEAT_SECONDS": "0.2", "MEMORYHUB_JOB_STALE_SECONDS": "2"}
IMPORTED = 4000


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Model:
    """A chat model that hangs while ``hanging`` (as a model mid-answer when its worker
    is killed), else answers every prompt the jobs send."""

    def __init__(self) -> None:
        self.url = ""
        self.hanging = True
        self.asked = threading.Event()
        self._released = threading.Event()

    def __call__(self, request: Any, count: int) -> Reply:
        self.asked.set()
        if self.hanging:
            return Reply(hold=self._released)
        data = user_data(request)
        if "facts" in data:
            texts = data["facts"]
            summary = {
                "text": "; ".join(t["text"] for t in texts),
                "source_ids": [t["id"] for t in texts],
            }
            return completion({"summaries": [summary]})
        if "texts" in data:  # a triple names what its text states
            triples = [
                {
                    "subject": "user",
                    "relation": "mentions",
                    "object": next(w for w in t["text"].split() if len(w) > 4),
                    "source_id": t["id"],
                }
                for t in data["texts"]
            ]
            return completion({"triples": triples})
        return completion(
            {"facts": [{"content": "The user keeps bees in Lyon", "category": "fact"}]}
        )

    def release(self) -> None:
        self._released.set()


@pytest.fixture
def model(serve) -> Iterator[Model]:  # noqa: F811
    answering = Model()
    answering.url = serve(answering).url
    memory_config_get()
    yield answering
    answering.release()


def use_model(model_url: str) -> None:
    MemoryConfig.objects.filter(pk=1).update(
        llm_url=model_url, llm_model="test-model", distillation_min_facts=2
    )


SOURCES = [
    "The beehives stand behind the Lyon workshop.",
    "Honey is harvested in late August.",
    "The apiary inspection is every spring.",
]


@contextlib.contextmanager
def in_process() -> Iterator[None]:
    """Tasks queued meanwhile run at once in the test's process, not on the worker."""
    from memoryhub.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = saved


def facts_of(owner) -> list[int]:
    """The sources of the jobs, with their derived work done (before any model is set)."""
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=False)
    with in_process():
        created = fact_bulk_create(
            actor=Actor(user=owner),
            items=[{"content": text, "project": "hive"} for text in SOURCES],
        )
    return [r.fact.pk for r in created]


@dataclass
class Kind:
    """How to start one kind of job, and what it wrote when it is done."""

    name: str
    start: Callable[[Any], Job]
    written: Callable[[Any], dict[str, int]]
    expected: dict[str, int]
    asks_the_model: bool = True


def start_distill(owner) -> Job:
    facts_of(owner)
    return facts_distill_request(actor=Actor(user=owner), project="hive")


def start_extract(owner) -> Job:
    return memory_extract_request(
        actor=Actor(user=owner),
        conversation=Conversation(messages=None, text="Remember that I keep bees in Lyon."),
    )


def start_concept_build(owner) -> Job:
    ids = facts_of(owner)
    FactExtraction.objects.filter(fact__in=ids).delete()  # the graph lacks them
    Triple.objects.filter(fact__in=ids).delete()
    return concept_graph_build_request(actor=Actor(user=owner), project="hive")


def start_import(owner) -> Job:
    document = {
        "results": [{"id": n, "memory": f"Imported note number {n}"} for n in range(IMPORTED)]
    }
    job = memories_import_request(actor=Actor(user=owner), document=document)
    assert isinstance(job, Job)
    return job


KINDS = {
    "distill": Kind(
        "distill",
        start_distill,
        lambda owner: {
            "summaries": Fact.objects.filter(owner=owner, layer=2, project="hive").count()
        },
        {"summaries": 1},
    ),
    "extract": Kind(
        "extract",
        start_extract,
        lambda owner: {
            "facts": Fact.objects.filter(owner=owner, content="The user keeps bees in Lyon").count()
        },
        {"facts": 1},
    ),
    "concept_build": Kind(
        "concept_build",
        start_concept_build,
        lambda owner: {
            "extracted": FactExtraction.objects.filter(
                fact__owner=owner, fact__project="hive"
            ).count(),
            "triples": Triple.objects.filter(fact__owner=owner, fact__project="hive").count(),
        },
        {"extracted": 3, "triples": 3},
    ),
    "import": Kind(
        "import",
        start_import,
        lambda owner: {
            "facts": Fact.objects.filter(owner=owner, content__startswith="Imported note").count(),
            "distinct": Fact.objects.filter(owner=owner, content__startswith="Imported note")
            .values("content")
            .distinct()
            .count(),
        },
        {"facts": IMPORTED, "distinct": IMPORTED},
        asks_the_model=False,
    ),
}


@pytest.fixture(params=["filesystem", "redis"])
def queue(request, tmp_path, broker_at) -> Iterator[str]:
    """The broker of the test's worker, which the app sends its tasks to meanwhile."""
    url = request.getfixturevalue("redis_server").url if request.param == "redis" else ""
    for folder in queue_folders(tmp_path):
        folder.mkdir(parents=True, exist_ok=True)
    with broker_at(url, data_dir=tmp_path):
        yield url


def swept_until_finished(job: Job, timeout: float = 90) -> Job:
    """Run beat's sweep until the job is done or failed."""

    def finished() -> Job | None:
        jobs_sweep()
        row = Job.objects.get(pk=job.pk)
        return row if row.is_finished else None

    return wait_for(finished, timeout, f"job {job.pk} to finish")


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_job_whose_worker_is_killed_is_run_again_and_written_once(
    kind, owner, model, queue, start_worker, settings
):
    settings.MEMORYHUB_JOB_STALE_SECONDS = 2
    settings.MEMORYHUB_IMPORT_INLINE_FACTS = 10
    case = KINDS[kind]
    job = case.start(owner)
    use_model(model.url)
    first = start_worker(queue, queue="celery", env=FAST)
    wait_for(lambda: Job.objects.get(pk=job.pk).state == "running", 60, "the job to start")
    if case.asks_the_model:
        assert model.asked.wait(60), first.output()
    first.kill()
    assert Job.objects.get(pk=job.pk).state == "running"  # as the kill left it

    model.hanging = False
    start_worker(queue, queue="celery", env=FAST)
    done = swept_until_finished(job)

    assert (done.state, done.attempts) == ("done", 2), (done.error, done.note, first.output())
    assert "worker stopped while running it" in done.note
    assert case.written(owner) == case.expected


def test_a_job_whose_runs_die_twice_fails_saying_why(owner, model, queue, start_worker, settings):
    settings.MEMORYHUB_JOB_STALE_SECONDS = 2
    job = start_distill(owner)
    use_model(model.url)
    for run in (1, 2):
        model.asked.clear()
        worker = start_worker(queue, queue="celery", env=FAST)
        assert model.asked.wait(60), worker.output()
        assert Job.objects.get(pk=job.pk).attempts == run
        worker.kill()
        if run == 1:
            wait_for(lambda: jobs_sweep()["queued_again"], 30, "the job queued again")

    failed = swept_until_finished(job)

    assert failed.state == "failed" and failed.attempts == 2
    assert "stopped while running it 2 times" in failed.error
    assert not Fact.objects.filter(owner=owner, layer=2).exists()


def test_a_scan_whose_worker_is_killed_is_finished_by_the_catch_up_and_indexed_once(
    owner, tmp_path, settings, queue, start_worker
):
    files, functions = 2000, 4
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
    first = start_worker(queue, queue="celery", env=env)

    def row() -> CodeProject:
        return CodeProject.objects.get(pk=project.pk)

    project = codegraph_services.code_project_scan_request(
        actor=Actor(user=owner), name="big", path=str(root)
    )
    wait_for(lambda: 0 < row().files_done < files, 60, "the scan half way")
    first.kill()
    start_worker(queue, queue="celery", env=env)

    def finished() -> bool:
        if row().state == ScanState.DONE:
            return True
        codegraph_services.code_project_scans_catch_up()  # what beat runs every minute
        return False

    wait_for(finished, 90, "the scan to be finished")
    assert row().file_count == files and row().symbol_count == files * functions
    assert SourceFile.objects.filter(project=project).count() == files
    assert Symbol.objects.filter(project=project).count() == files * functions
