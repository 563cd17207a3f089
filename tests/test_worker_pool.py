"""A pool process killed while it waits for a job (the OOM killer, ``kill -9``) leaves
the prefork pool taking tasks. On the filesystem queue the pool's processes share the
locks of billiard's job and result pipes; the process waiting for a job holds the job
pipe's, and killed there it used to keep it for good (memoryhub.engine.pool)."""

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.synchronize import Event

import pytest
from celery import Celery

from memoryhub.engine.pool import ProcessLock
from memoryhub.engine.queue import celery_queue_settings


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def hold(lock: ProcessLock, holding: Event) -> None:
    lock.acquire()
    holding.set()
    time.sleep(60)


# The forked holder only takes the lock and sleeps, whatever threads the suite has started.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_lock_whose_holder_is_killed_goes_to_the_process_waiting_for_it():
    fork = multiprocessing.get_context("fork")
    lock = ProcessLock()
    holding = fork.Event()
    holder = fork.Process(target=hold, args=(lock, holding), daemon=True)
    holder.start()
    assert holding.wait(10)
    taken = threading.Event()

    def take() -> None:
        lock.acquire()
        taken.set()

    threading.Thread(target=take, daemon=True).start()
    assert not taken.wait(0.5), "the lock was not held by the other process"

    os.kill(holder.pid, signal.SIGKILL)
    holder.join()

    assert taken.wait(5)
    lock.release()


@pytest.mark.integration
def test_a_pool_process_killed_while_it_waits_for_a_job_leaves_the_pool_taking_tasks(
    start_worker,
):
    worker = start_worker(pool="prefork", concurrency=2)
    client = Celery("pool-test-client", set_as_current=False)
    client.conf.update(celery_queue_settings(redis_url="", data_dir=worker.log.parent))

    def answered(count: int, timeout: float) -> int:
        """How many of ``count`` pings sent now are answered within ``timeout`` s."""
        results = [client.send_task("memoryhub.ping", queue=worker.queue) for _ in range(count)]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not all(r.ready() for r in results):
            time.sleep(0.1)
        return sum(r.ready() for r in results)

    assert answered(4, 30) == 4, worker.output()
    # Both processes wait for a job now, one of them holding the job pipe's lock: kill
    # each in turn, letting the pool start the first one's successor.
    first = worker.pool_pids()
    assert len(first) == 2
    for pid in first:
        os.kill(pid, signal.SIGKILL)
        wait_for(
            lambda pid=pid: pid not in (now := worker.pool_pids()) and len(now) == 2,
            30,
            f"the pool to replace process {pid}",
        )

    assert answered(20, 60) == 20, worker.output()
    assert worker.output().count("exited with 'signal 9 (SIGKILL)'") == 2
