"""Embedding beside other work, on threads this package owns.

Model inference releases the GIL, so the caller's thread can go on meanwhile: a recall
runs its full-text search while the query is embedded, and a backfill stores one chunk
while the next is embedded. Two executors, so that a single sentence (a recall's query,
which someone waits for) never queues behind a chunk of a backfill.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .base import Embedder
from .remembered import remembered_vectors

# Two: concurrent recalls of one web process embed their queries side by side.
_sentences = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed-query")
# One: the model already uses every core on a chunk, and two chunks would contend.
_chunks = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-chunk")


def embed_soon(embedder: Embedder, text: str) -> Future:
    """Start embedding one sentence; the future's result is its vector (read-only, and
    from memory when the sentence was embedded lately: agents recall with the same
    words turn after turn)."""
    return _sentences.submit(lambda: remembered_vectors(embedder, [text])[0])


def embed_chunks[T](
    embedder: Embedder, chunks: Iterable[T], texts_of: Callable[[T], Sequence[str]]
) -> Iterator[tuple[T, np.ndarray]]:
    """``(chunk, its vectors)`` for each chunk in order, the next chunk embedded while
    the caller handles the one it was given. Embedder errors are raised where the
    failing chunk's vectors would have come."""
    waiting: tuple[T, Future] | None = None
    for chunk in chunks:
        ahead = (chunk, _chunks.submit(embedder.embed, list(texts_of(chunk))))
        if waiting is not None:
            yield waiting[0], waiting[1].result()
        waiting = ahead
    if waiting is not None:
        yield waiting[0], waiting[1].result()
