"""Summaries that state what they cite: related sources grouped by topic, each group
said as its subjects and what its sources say of them.

Sources are grouped by their vectors (the embeddings the caller hands in with every
source) or, when some lack one, by TF-IDF vectors of their topical words; sources about
the same named subject (such as Ledgerd) are pulled together. The
groups are found by average-linkage clustering: the two most alike groups are merged
while they are alike enough, and beyond that until there are at most
``max_summaries``.

A group's summary names each subject once and lists what its sources say of it
("Ledgerd: written in Rust; runs on Kubernetes in us-east-1; owned by the payments
team."); a source of its own subject, or of none that can be told, is stated whole.
A summary cites exactly the sources it states (two that say the same thing are
stated once): what does not fit in ``max_characters`` is left out, and uncited.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..schemas import CONTENT_LENGTH, SourceText, Summary
from .statements import USER, Statement, statement
from .text import clip, content_words

# Sources a summary should condense at the least (fewer condense little).
MIN_SOURCES_PER_SUMMARY = 3
# How alike (cosine, on average between their members) two groups must be to merge
# while there are at most ``max_summaries``; with vectors of words, and of a model.
WORD_SIMILARITY = 0.2
VECTOR_SIMILARITY = 0.4
# Added to the likeness of two sources about the same subject.
SAME_SUBJECT = 0.35
# Added to the likeness of two facts about the user, when only their words tell.
USER_WORDS = 0.15
# Only words shared by two sources or more make sources alike; the rarest of the rest
# are dropped beyond this many, which bounds memory for very large inputs.
MAX_VOCABULARY = 4096


@dataclass(frozen=True)
class _Source:
    id: int
    order: int
    statement: Statement


def summarize(
    sources: Sequence[SourceText],
    *,
    max_summaries: int = 5,
    max_characters: int = CONTENT_LENGTH,
) -> list[Summary]:
    """At most ``max_summaries`` summaries of ``sources``, each stating every source it
    cites, in at most ``max_characters``."""
    sources = [s for s in sources if s.text.strip()]
    if not sources or max_summaries < 1:
        return []
    items = [_Source(s.id, i, statement(s.text)) for i, s in enumerate(sources)]
    most = max(1, min(max_summaries, len(sources) // MIN_SOURCES_PER_SUMMARY))
    summaries = []
    for members in topic_groups(sources, [i.statement.key for i in items], most=most):
        summary = _stated([items[i] for i in members], max_characters)
        if summary is not None:
            summaries.append(summary)
    return summaries


def topic_groups(
    sources: Sequence[SourceText], subjects: list[str], *, most: int
) -> list[list[int]]:
    """At most ``most`` groups of the indexes of ``sources`` by topic, the largest
    first (ties in input order), each in input order."""
    n = len(sources)
    if n == 1 or most == 1:
        return [list(range(n))]
    vectors = _model_vectors(sources)
    threshold = VECTOR_SIMILARITY
    if vectors is None:
        vectors, threshold = _word_vectors([s.text for s in sources]), WORD_SIMILARITY
    likeness = vectors @ vectors.T
    numbers: dict[str, int] = {}
    # The user is the subject of facts on every topic: no pull of its own.
    keys = np.array(
        [numbers.setdefault(k, len(numbers) + 1) if k and k != USER else 0 for k in subjects]
    )
    named = keys != 0
    same = (keys[:, None] == keys[None, :]) & named[:, None] & named[None, :]
    likeness = likeness + SAME_SUBJECT * same
    if threshold == WORD_SIMILARITY:
        # Words alone rarely join two facts about the user: a little pull where a
        # model's vectors would tell.
        user = np.array([k == USER for k in subjects])
        likeness = likeness + USER_WORDS * (user[:, None] & user[None, :])
    return _average_linkage(likeness, most=most, threshold=threshold)


def _model_vectors(sources: Sequence[SourceText]) -> np.ndarray | None:
    """The sources' own vectors, of unit length, when every one has one of one width."""
    if any(not s.vector for s in sources) or len({len(s.vector or ()) for s in sources}) != 1:
        return None
    matrix = np.array([s.vector for s in sources], dtype=np.float64)
    if not np.isfinite(matrix).all():
        return None
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def _word_vectors(texts: list[str]) -> np.ndarray:
    documents = [content_words(t) for t in texts]
    frequency = Counter(word for words in documents for word in set(words))
    shared = sorted(w for w, c in frequency.most_common(MAX_VOCABULARY) if c >= 2)
    vocabulary = {word: i for i, word in enumerate(shared)}
    n = len(documents)
    idf = np.array([math.log((1 + n) / (1 + frequency[w])) + 1.0 for w in shared])
    matrix = np.zeros((n, len(vocabulary)), dtype=np.float64)
    for row, words in enumerate(documents):
        for word, count in Counter(words).items():
            column = vocabulary.get(word)
            if column is not None:
                matrix[row, column] = (1.0 + math.log(count)) * idf[column]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def _average_linkage(likeness: np.ndarray, *, most: int, threshold: float) -> list[list[int]]:
    """Merge the two most alike groups (the mean likeness of their members) while they
    are at least ``threshold`` alike or there are more than ``most``; ties go to the
    earliest pair, so the same input gives the same groups."""
    n = likeness.shape[0]
    members: list[list[int]] = [[i] for i in range(n)]
    sizes = np.ones(n)
    # The summed likeness between the members of two groups.
    sums = likeness.astype(np.float64).copy()
    alive = np.ones(n, dtype=bool)
    groups = n
    while groups > 1:
        mean = sums / np.outer(sizes, sizes)
        mean[~alive, :] = -np.inf
        mean[:, ~alive] = -np.inf
        np.fill_diagonal(mean, -np.inf)
        flat = int(np.argmax(mean))
        a, b = divmod(flat, n)
        if mean[a, b] < threshold and groups <= most:
            break
        a, b = min(a, b), max(a, b)
        sums[a, :] += sums[b, :]
        sums[:, a] += sums[:, b]
        sizes[a] += sizes[b]
        alive[b] = False
        members[a] = sorted(members[a] + members[b])
        members[b] = []
        groups -= 1
    found = [m for m in members if m]
    return sorted(found, key=lambda g: (-len(g), g[0]))


def _stated(items: list[_Source], max_characters: int) -> Summary | None:
    """The summary of one group: its subjects, the most sources first (ties in input
    order), each with what its sources say; sources of a subject alone, or of none,
    stated whole, in order. Sources saying the same are stated once and all cited."""
    by_subject: dict[str, list[_Source]] = {}
    for item in items:
        by_subject.setdefault(item.statement.key, []).append(item)
    parts: list[tuple[int, str, list[_Source]]] = []  # (first order, kind, sources)
    for key, group in by_subject.items():
        if key and len(group) > 1:
            parts.append((group[0].order, "subject", group))
        else:
            parts.extend((item.order, "whole", [item]) for item in group)
    subjects = sorted(
        (p for p in parts if p[1] == "subject"),
        key=lambda p: (0 if p[2][0].statement.key == USER else 1, -len(p[2]), p[0]),
    )
    wholes = sorted((p for p in parts if p[1] == "whole"), key=lambda p: p[0])

    text = ""
    cited: list[int] = []
    for _, kind, group in [*subjects, *wholes]:
        if kind == "whole":
            sentence = group[0].statement.whole
            if _fits(text, sentence, max_characters):
                text = _append(text, sentence)
                cited.append(group[0].id)
            continue
        said: dict[str, list[int]] = {}
        for item in group:
            said.setdefault(item.statement.said.casefold(), []).append(item.id)
        heading = group[0].statement.subject + ": "
        phrases: list[str] = []
        shown: dict[str, str] = {}
        for item in group:
            shown.setdefault(item.statement.said.casefold(), item.statement.said)
        for key, ids in said.items():
            candidate = heading + "; ".join([*phrases, shown[key]]) + "."
            if _fits(text, candidate, max_characters):
                phrases.append(shown[key])
                cited.extend(ids)
        if phrases:
            text = _append(text, heading + "; ".join(phrases) + ".")
    if not cited:
        # One source longer than a summary may be: stated as far as it goes.
        first = items[0]
        return Summary(text=clip(first.statement.whole, max_characters), source_ids=[first.id])
    return Summary(text=text, source_ids=cited)


def _fits(text: str, sentence: str, limit: int) -> bool:
    return len(text) + 1 + len(sentence) <= limit


def _append(text: str, sentence: str) -> str:
    return f"{text} {sentence}" if text else sentence
