"""Reading committed rows ahead of, or beside, the caller, on a second connection.

A batch write checks each new row against stored ones in turn; the lookups for the
next rows can run while the current one is checked, on a thread of this module with a
database connection of its own. That connection sees committed rows only, so a read
ahead is offered only where that is all the caller needs: outside transactions, or in
the caller's own outermost transaction when it keeps track of what it wrote there
itself (``own_transaction=True``). Inside anyone else's transaction it would miss their
uncommitted writes, and ``read_ahead`` answers None: read in turn then.
"""

import queue
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from django.db import close_old_connections, connection

# Threads reading ahead: a batch's lookups may be shared among them (one batch alone
# then keeps the database busy on as many connections), and concurrent batches queue.
READERS = 2
_reader = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="read-ahead")
# Two: the concurrent searches of one web process's threads, side by side.
BESIDE = 2
_beside = ThreadPoolExecutor(max_workers=BESIDE, thread_name_prefix="search-beside")
# The database connections this module's threads may hold at once (each keeps its own):
# a caller that waits on them while holding one of a bounded pool must leave them these.
CONNECTIONS = READERS + BESIDE
_DONE = object()


def search_beside[T](work: Callable[[], T]) -> Future[T] | None:
    """``work()`` (a search) started on a thread with a database connection of its own,
    while the caller runs another; None inside a transaction, whose writes that
    connection would not see: search in turn then."""
    if connection.in_atomic_block:
        return None

    def run() -> T:
        close_old_connections()  # drop this thread's connection if stale or too old
        return work()

    return _beside.submit(run)


def read_ahead[T](
    produce: Callable[[], Iterable[T]], *, own_transaction: bool = False
) -> Iterator[T] | None:
    """The items ``produce()`` yields, produced on the read-ahead thread while the
    caller consumes them in order; None where committed rows are not enough (see the
    module). An exception in ``produce`` is raised where the next item would come."""
    if len(connection.atomic_blocks) > (1 if own_transaction else 0):
        return None
    answers: queue.SimpleQueue = queue.SimpleQueue()

    def run() -> None:
        close_old_connections()  # drop this thread's connection if stale or too old
        try:
            for item in produce():
                answers.put(item)
        except BaseException as exc:  # handed to the consuming thread, which raises it
            answers.put(exc)
        else:
            answers.put(_DONE)

    _reader.submit(run)
    return _consume(answers)


def _consume(answers: queue.SimpleQueue) -> Iterator:
    while True:
        item = answers.get()
        if item is _DONE:
            return
        if isinstance(item, BaseException):
            raise item
        yield item
