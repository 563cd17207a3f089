"""Search boxes: a sentence read as recall reads it (hybrid), or exact keywords.

Hybrid fuses, by Reciprocal Rank Fusion as recall does, the rows holding every word
(the last as a prefix, for search-as-you-type), the rows holding any word that is not a
stopword (so "who owns billing" finds what "owns billing" finds), and the rows closest
in meaning when the caller brings the query's vector (or the rows it found nearest
itself, as the wiki does by passages). Without either (embeddings off) it is the
keyword half alone. Exact mode is the rows holding
every word, best bm25 first.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from django.db.models import QuerySet

from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.search.fts import FtsIndex, compile_within
from memoryhub.engine.search.fusion import rrf
from memoryhub.engine.search.text import match_all
from memoryhub.engine.search.vectors import VectorHit, VectorIndex
from memoryhub.engine.unicode import UNSTORABLE

# Rows less similar than this are not shown for a search box: unlike recall, which
# takes the best few of anything above 0.2, a list of results should stay on topic.
# (all-MiniLM-L6-v2: "who owns billing" ~ "Alice owns billing" 0.72, ~ "Payments team
# handles refunds" 0.32.)
MIN_SIMILARITY = 0.35
# Rows taken by meaning at most: past the first hundred, closeness alone is noise.
MAX_NEAR = 100
RRF_K = 60


class SearchMode(StrEnum):
    HYBRID = "hybrid"
    EXACT = "exact"


def search_mode_clean(mode: object) -> SearchMode:
    """The search mode named by ``mode`` ("" or None: hybrid), or a 400 naming both."""
    if mode in (None, ""):
        return SearchMode.HYBRID
    if isinstance(mode, str) and mode in SearchMode._value2member_map_:
        return SearchMode(mode)
    shown = mode[:40] if isinstance(mode, str) else type(mode).__name__
    choices = " or ".join(m.value for m in SearchMode)
    raise InvalidInput(f"Unknown search mode {shown!r}: use {choices}.")


def search_query_clean(query: object, *, max_chars: int = 1000) -> str:
    """A search box's text, or a 400 saying what is wrong with it. Any words are fine:
    operators and quotes are searched as plain words."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("The search query must not be empty.")
    if len(query) > max_chars:
        raise InvalidInput(f"The search query is at most {max_chars} characters.")
    if UNSTORABLE.search(query):
        raise InvalidInput(
            "The search query is not storable text (a lone surrogate or a NUL character)."
        )
    return query.strip()


@dataclass(frozen=True)
class SearchHit:
    id: int
    score: float  # higher is better: -bm25 in exact mode, the fused score in hybrid mode
    snippet: str = ""  # "" when no word matched (found by meaning alone)
    similarity: float | None = None  # to the query's vector, when it was among the nearest


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    mode: str  # exact, hybrid, or keyword (hybrid asked, no vector to search with)


def search_box(
    *,
    fts: FtsIndex,
    query: str,
    within: QuerySet,
    limit: int,
    mode: SearchMode = SearchMode.HYBRID,
    vectors: VectorIndex | None = None,
    vector: np.ndarray | None = None,
    near: Sequence[VectorHit] | None = None,
    snippet_column: int | None = None,
    min_similarity: float = MIN_SIMILARITY,
) -> SearchResult:
    """The best ``limit`` rows of ``within`` for ``query``, best first. ``fts`` (and
    ``vectors`` with the query's ``vector``) index the rows, or ``near`` holds the rows
    of ``within`` nearest to the query, best first; the caller checks the query
    and builds ``within`` from its access rule. With ``snippet_column`` each keyword hit
    carries a snippet whose matches are marked ``[[``/``]]``."""
    compiled = compile_within(within)
    # Which rows a search box shows is read from their own words only (``fts.own``).
    own = fts.own or None
    exact = fts.search(
        match_all(query),
        limit=limit,
        within=compiled,
        snippet_column=snippet_column,
        columns=own,
    )
    if mode == SearchMode.EXACT:
        return SearchResult(
            hits=[SearchHit(id=h.id, score=-h.score, snippet=h.snippet) for h in exact],
            mode=SearchMode.EXACT.value,
        )
    words = fts.search_words(
        query, limit=limit, within=compiled, snippet_column=snippet_column, columns=own
    )
    by_meaning = near is not None or (vectors is not None and vector is not None)
    if near is None and vectors is not None and vector is not None:
        near = vectors.knn(vector, k=min(limit, MAX_NEAR), within=within, compiled=compiled)
    near = [h for h in near or () if h.similarity >= min_similarity]
    fused = rrf([[h.id for h in exact], [h.id for h in words], [h.id for h in near]], k=RRF_K)
    snippets = {h.id: h.snippet for h in words} | {h.id: h.snippet for h in exact}
    similarity = {h.id: h.similarity for h in near}
    ranked = sorted(fused.items(), key=lambda item: (-item[1], -item[0]))[:limit]
    return SearchResult(
        hits=[
            SearchHit(
                id=row_id,
                score=score,
                snippet=snippets.get(row_id, ""),
                similarity=similarity.get(row_id),
            )
            for row_id, score in ranked
        ],
        mode="hybrid" if by_meaning else "keyword",
    )
