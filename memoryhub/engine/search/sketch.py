"""Relevance as a TF-IDF sketch: how much of what a query (or an agent's task context)
is about a text is about too, as the cosine of their TF-IDF vectors over the texts at
hand. A text sharing one word with the query scores above zero, one sharing none scores
zero: a weak match always ranks above a non-match."""

import math
from collections import Counter
from collections.abc import Mapping

from memoryhub.engine.search.text import STOPWORDS, stem, words


def _terms(text: str) -> Counter[str]:
    return Counter(stem(w) for w in words(text) if w not in STOPWORDS)


def tfidf_cosines[K](against: str, texts: Mapping[K, str]) -> dict[K, float]:
    """The cosine (0..1) between ``against`` and each of ``texts``, their words weighed
    by how rare they are among the texts and ``against`` (inverse document frequency)
    and by how often each says them (one plus the log of the count)."""
    wanted = _terms(against)
    if not wanted:
        return dict.fromkeys(texts, 0.0)
    bags = {key: _terms(text) for key, text in texts.items()}
    documents = Counter(term for bag in [wanted, *bags.values()] for term in bag)
    n = len(bags) + 1

    def vector(bag: Counter[str]) -> dict[str, float]:
        return {
            term: (1.0 + math.log(count)) * (math.log((1 + n) / (1 + documents[term])) + 1.0)
            for term, count in bag.items()
        }

    query = vector(wanted)
    query_norm = math.sqrt(sum(v * v for v in query.values()))
    cosines: dict[K, float] = {}
    for key, bag in bags.items():
        weights = vector(bag)
        shared = sum(weight * query[term] for term, weight in weights.items() if term in query)
        norm = math.sqrt(sum(v * v for v in weights.values()))
        cosines[key] = min(1.0, shared / (norm * query_norm)) if shared else 0.0
    return cosines
