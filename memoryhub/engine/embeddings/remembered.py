"""Vectors embedded lately, kept per embedder and text.

An agent recalls with the same words turn after turn, a person pages through one
search, and a wiki page is scanned before the transaction that saves it and again
inside it: each asks for a text the embedder has just embedded. The last KEPT texts of
up to KEPT_CHARS are kept (about 1.5 KB each at 384 dimensions, plus the text), the
least recently asked going first; a longer text would hold its length in memory per
entry and is embedded each time. Vectors are read-only: one serves every caller.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .base import Embedder

KEPT = 1024
KEPT_CHARS = 2_000

_kept: OrderedDict[tuple[Embedder, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def remembered_vectors(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """The vector of each of ``texts`` by ``embedder``, in order: those kept from
    memory, the others embedded together in one call (and kept). An embedder's error
    is raised and nothing is kept of it."""
    found: dict[int, np.ndarray] = {}
    with _lock:
        for n, text in enumerate(texts):
            vector = _kept.get((embedder, text))
            if vector is not None:
                _kept.move_to_end((embedder, text))
                found[n] = vector
    missing = [n for n in range(len(texts)) if n not in found]
    if missing:
        fresh = embedder.embed([texts[n] for n in missing])
        with _lock:
            for n, vector in zip(missing, fresh, strict=True):
                vector = np.array(vector)
                vector.setflags(write=False)
                found[n] = vector
                if len(texts[n]) <= KEPT_CHARS:
                    _kept[(embedder, texts[n])] = vector
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
    return [found[n] for n in range(len(texts))]
