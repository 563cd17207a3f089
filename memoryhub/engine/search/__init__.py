"""The search core: the only place with raw FTS5 and sqlite-vec SQL.

Apps declare their indexes in their own ``search.py`` (an ``FtsIndex`` and, where they
embed, a ``VectorIndex``) and keep them in step from their write services.
"""

from memoryhub.engine.search.fts import FtsHit, FtsIndex, Within, compile_within, ids_within
from memoryhub.engine.search.fusion import rrf
from memoryhub.engine.search.hybrid import (
    SearchHit,
    SearchMode,
    SearchResult,
    search_box,
    search_mode_clean,
    search_query_clean,
)
from memoryhub.engine.search.keys import KeyIndex
from memoryhub.engine.search.text import match_all, match_any, words
from memoryhub.engine.search.vectors import VectorHit, VectorIndex

__all__ = [
    "FtsHit",
    "FtsIndex",
    "KeyIndex",
    "SearchHit",
    "SearchMode",
    "SearchResult",
    "VectorHit",
    "VectorIndex",
    "Within",
    "compile_within",
    "ids_within",
    "match_all",
    "match_any",
    "rrf",
    "search_box",
    "search_mode_clean",
    "search_query_clean",
    "words",
]
