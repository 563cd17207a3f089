"""Extractive summaries: group related sources, then keep each group's most central
sentences.

Sources become TF-IDF vectors of their topical words; up to ``max_summaries`` groups are
found by spherical k-means seeded deterministically (the most central source first, then,
while some source is unlike every seed so far, the least like them); a group's summary
is its sentences closest to the group's centroid and least like each other (maximal
marginal relevance), in the order they were written. Every source belongs to exactly
one summary, so every source is accounted for.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..schemas import CONTENT_LENGTH, SourceText, Summary
from .text import clip, content_words, sentences

# Sources a summary should condense at the least (fewer condense little), and how
# little a source may have in common with every group so far to open a group of its own.
MIN_SOURCES_PER_SUMMARY = 3
NEW_TOPIC_SIMILARITY = 0.15
SUMMARY_CHARACTERS = 600
MAX_SENTENCES = 4
# A sentence closer than this to one already picked says the same thing.
REPEAT_SIMILARITY = 0.8
KMEANS_ROUNDS = 8
# Weight of centrality against novelty when picking a group's next sentence.
MMR_BALANCE = 0.6
# Only words shared by two sources or more make sources alike; the rarest of the rest
# are dropped beyond this many, which bounds memory for very large inputs.
MAX_VOCABULARY = 4096


@dataclass(frozen=True)
class _Sentence:
    source: int  # index into the sources
    order: int  # position in the input
    text: str
    words: tuple[str, ...]


def summarize(sources: Sequence[SourceText], *, max_summaries: int = 5) -> list[Summary]:
    """At most ``max_summaries`` extractive summaries of ``sources``."""
    sources = [s for s in sources if s.text.strip()]
    if not sources or max_summaries < 1:
        return []
    units = _sentences(sources)
    source_words = [list[str]() for _ in sources]
    for unit in units:
        source_words[unit.source].extend(unit.words)
    vocabulary, idf = _vocabulary(source_words)
    source_vectors = _vectors(source_words, vocabulary, idf)
    sentence_vectors = _vectors([list(u.words) for u in units], vocabulary, idf)

    most = max(1, min(max_summaries, len(sources) // MIN_SOURCES_PER_SUMMARY))
    groups = _groups(source_vectors, most)
    summaries = []
    for members in groups:
        member_set = set(members)
        picked = _central_sentences(
            [i for i, u in enumerate(units) if u.source in member_set],
            units,
            sentence_vectors,
            source_vectors[members].sum(axis=0),
        )
        text = " ".join(_terminated(units[i].text) for i in picked)
        if not text:
            continue
        summaries.append(
            Summary(text=clip(text, CONTENT_LENGTH), source_ids=[sources[i].id for i in members])
        )
    return summaries


def _sentences(sources: list[SourceText]) -> list[_Sentence]:
    units: list[_Sentence] = []
    seen: set[str] = set()
    for index, source in enumerate(sources):
        for text in sentences(source.text) or [source.text.strip()]:
            key = text.casefold()
            if key in seen:
                continue  # the same sentence in two facts is one candidate
            seen.add(key)
            units.append(_Sentence(index, len(units), text, tuple(content_words(text))))
    return units


def _vocabulary(documents: list[list[str]]) -> tuple[dict[str, int], np.ndarray]:
    frequency = Counter(word for words in documents for word in set(words))
    shared = [w for w, n in frequency.most_common(MAX_VOCABULARY) if n >= 2 or len(documents) == 1]
    vocabulary = {word: i for i, word in enumerate(sorted(shared))}
    n = len(documents)
    idf = np.array(
        [math.log((1 + n) / (1 + frequency[w])) + 1.0 for w in sorted(shared)], dtype=np.float64
    )
    return vocabulary, idf


def _vectors(documents: list[list[str]], vocabulary: dict[str, int], idf: np.ndarray) -> np.ndarray:
    matrix = np.zeros((len(documents), len(vocabulary)), dtype=np.float64)
    for row, words in enumerate(documents):
        for word, count in Counter(words).items():
            column = vocabulary.get(word)
            if column is not None:
                matrix[row, column] = (1.0 + math.log(count)) * idf[column]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalised: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return normalised


def _groups(vectors: np.ndarray, most: int) -> list[list[int]]:
    """At most ``most`` groups of similar sources (as many as there are topics)."""
    n = vectors.shape[0]
    if most == 1 or not vectors.any():
        return [list(range(n))]
    centrality = vectors @ vectors.sum(axis=0)
    seeds = [int(np.argmax(centrality))]
    while len(seeds) < most:
        closeness = (vectors @ vectors[seeds].T).max(axis=1)
        closeness[seeds] = np.inf
        # A source with no topical word shared by others opens no group.
        closeness[~vectors.any(axis=1)] = np.inf
        candidate = int(np.argmin(closeness))
        if closeness[candidate] >= NEW_TOPIC_SIMILARITY:
            break  # every source is like a group already: no other topic
        seeds.append(candidate)
    centroids = vectors[seeds]
    assignment: np.ndarray | None = None
    for _ in range(KMEANS_ROUNDS):
        new = np.argmax(vectors @ centroids.T, axis=1)
        if assignment is not None and np.array_equal(new, assignment):
            break
        assignment = new
        for group in range(len(centroids)):
            total = vectors[assignment == group].sum(axis=0)
            norm = np.linalg.norm(total)
            if norm > 0:
                centroids[group] = total / norm
    assert assignment is not None
    groups = [[int(i) for i in np.flatnonzero(assignment == g)] for g in range(len(centroids))]
    groups = [g for g in groups if g]
    # The largest groups first; ties in input order.
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def _central_sentences(
    candidates: list[int], units: list[_Sentence], vectors: np.ndarray, centroid: np.ndarray
) -> list[int]:
    """Maximal marginal relevance: each pick is the sentence most central to the group
    and least like the picks so far; near repeats are never picked."""
    if not candidates:
        return []
    norm = np.linalg.norm(centroid)
    relevance = vectors[candidates] @ (centroid / norm if norm > 0 else centroid)
    wanted = min(
        MAX_SENTENCES, max(1, round(math.sqrt(len({units[i].source for i in candidates}))))
    )
    picked: list[int] = []
    length = 0
    available = list(range(len(candidates)))
    while available and len(picked) < wanted:
        if picked:
            likeness = (vectors[[candidates[a] for a in available]] @ vectors[picked].T).max(axis=1)
        else:
            likeness = np.zeros(len(available))
        scores = MMR_BALANCE * relevance[available] - (1 - MMR_BALANCE) * likeness
        # Ties (sentences without topical words) go to the earliest.
        best = max(range(len(available)), key=lambda i: (scores[i], -available[i]))
        choice = available.pop(best)
        index = candidates[choice]
        if likeness[best] > REPEAT_SIMILARITY:
            continue
        size = len(units[index].text) + 1
        if picked and length + size > SUMMARY_CHARACTERS:
            continue
        picked.append(index)
        length += size
    return sorted(picked, key=lambda i: units[i].order)


def _terminated(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else text + "."
