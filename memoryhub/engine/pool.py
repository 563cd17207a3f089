"""Celery's prefork pool, with locks a killed pool process cannot keep.

On a broker without an event loop (the filesystem queue) Celery runs billiard's
blocking pool: its processes take jobs from one shared pipe and hand results back
through another, each end guarded by a semaphore. An idle process holds the job pipe's
semaphore for as long as it waits for a job, so when it is killed there (the OOM
killer, ``kill -9``) nothing ever releases it: no process takes a job again while the
worker still answers pings. Here each guard is a record lock on an unnamed file, which
the kernel releases when its holder dies. On Redis, Celery's asynchronous pool gives
each process pipes of its own and shares no lock, so it is left as it is.
"""

import fcntl
import tempfile
from types import TracebackType

from billiard.pool import Pool
from billiard.util import ForkAwareThreadLock
from celery.concurrency import prefork


class ProcessLock:
    """A lock between the processes forked from its maker and between the threads of
    each, which a process gives up by dying. Its file is inherited by forking, so the
    pool must fork its processes (Celery's default)."""

    def __init__(self) -> None:
        # Open for as long as the lock lives; unnamed, so nothing is left behind.
        self._file = tempfile.TemporaryFile()  # noqa: SIM115
        # A record lock is held by a process, not a thread: threads queue here first.
        self._threads = ForkAwareThreadLock()

    def acquire(self) -> bool:
        self._threads.acquire()
        try:
            fcntl.lockf(self._file, fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise
        return True

    def release(self) -> None:
        fcntl.lockf(self._file, fcntl.LOCK_UN)
        self._threads.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


class BlockingPool(Pool):
    """billiard's blocking pool whose job and result pipes are guarded by ProcessLocks."""

    def _setup_queues(self) -> None:
        super()._setup_queues()
        for queue in (self._inqueue, self._outqueue):
            queue._rlock, queue._wlock = ProcessLock(), ProcessLock()


class TaskPool(prefork.TaskPool):
    """The prefork pool (``worker_pool``), with BlockingPool when it runs without an
    event loop."""

    BlockingPool = BlockingPool
