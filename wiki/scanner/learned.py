"""The learned pass: a logistic regression over sentence embeddings of a page's passages.

The phrase rules catch an injection by how it is worded; long role-play jailbreaks and
instructions planted in tool output are worded a thousand ways and slip past them. Here
a page is cut into passages (``passages``), each passage is embedded with the bundled
all-MiniLM-L6-v2 model, and a linear model trained on public attack collections and on
ordinary Markdown scores it. A passage scoring over the model's threshold is a
``learned-injection`` finding (medium, so the page is held for review), pointing at the
passage with the highest score.

The weights sit beside this module in ``model/passages.json``, written by
``bench/scanner_model.py`` with the embedding model they were trained on and how pages
were cut. They only mean something for that model, so the local embedder is used
whatever embedder the instance is configured with, and a file made for another model is
refused. When the file or the embedder cannot be had, the rules' findings stand alone
and a low ``learned-skipped`` finding says why: a save never fails for it.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wiki.scanner.findings import Finding, finding

if TYPE_CHECKING:
    from memoryhub.engine.embeddings.base import Embedder

logger = logging.getLogger(__name__)

RULE = "learned-injection"
SKIPPED = "learned-skipped"
MODEL_FILE = Path(__file__).resolve().parent / "model" / "passages.json"
MODEL_FORMAT = 1

# A passage is at most this many characters of consecutive text, cut at a blank line, a
# line end, a sentence end or a space, in that order of preference; short paragraphs
# are packed together so that a heading travels with what follows it. The embedding
# model reads 256 word pieces, about 1,000 characters of English. The weights file says
# which size they were trained with, and that size is used.
PASSAGE_CHARS = 900
# Passages with fewer words say too little to score; a page without a longer one is
# not read by the model at all.
MIN_WORDS = 8
# Embedding is what the pass costs (tens of milliseconds a passage on two cores): a
# page with more passages than this (about 20 KB of prose) is read at this many,
# spread evenly from its first passage to its last, and the rules read all of it.
MAX_PASSAGES = 24

_BREAKS = (re.compile(r"\n[ \t]*\n\s*"), re.compile(r"\n\s*"), re.compile(r"(?<=[.!?])\s+"))
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Passage:
    """A stretch of a page, ``text[start:end]``, that is embedded and scored alone."""

    start: int
    end: int
    text: str


def passages(text: str, *, chars: int = PASSAGE_CHARS, min_words: int = MIN_WORDS) -> list[Passage]:
    """The passages of ``text`` worth scoring, in order: at most ``chars`` characters
    each, with at least ``min_words`` words, at most MAX_PASSAGES of them spread over
    the page. The product and the training script both cut pages with this function."""
    units: list[tuple[int, int]] = []
    _cut(text, 0, len(text), 0, chars, units)
    found: list[Passage] = []
    start = end = -1
    for unit_start, unit_end in units:
        if start >= 0 and unit_end - start <= chars:
            end = unit_end
            continue
        if start >= 0:
            found.append(Passage(start, end, text[start:end]))
        start, end = unit_start, unit_end
    if start >= 0:
        found.append(Passage(start, end, text[start:end]))
    found = [p for p in found if len(_WORD.findall(p.text)) >= min_words]
    if len(found) <= MAX_PASSAGES:
        return found
    step = (len(found) - 1) / (MAX_PASSAGES - 1)
    return [found[round(k * step)] for k in range(MAX_PASSAGES)]


def _cut(
    text: str, start: int, end: int, level: int, chars: int, out: list[tuple[int, int]]
) -> None:
    """Append to ``out`` the pieces of ``text[start:end]``, without the whitespace that
    separates them, each at most ``chars`` long, cut at the coarsest break that does."""
    if level == len(_BREAKS):
        while end - start > chars:
            space = text.rfind(" ", start + chars // 2, start + chars)
            cut = space if space > start else start + chars
            out.append((start, cut))
            start = cut + 1 if space > start else cut
        if text[start:end].strip():
            out.append((start, end))
        return
    at = start
    for match in _BREAKS[level].finditer(text, start, end):
        _piece(text, at, match.start(), level, chars, out)
        at = match.end()
    _piece(text, at, end, level, chars, out)


def _piece(
    text: str, start: int, end: int, level: int, chars: int, out: list[tuple[int, int]]
) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end - start > chars:
        _cut(text, start, end, level + 1, chars, out)
    elif end > start:
        out.append((start, end))


class Unavailable(Exception):
    """The learned pass cannot run: no usable weights, or no local embedder."""


@dataclass(frozen=True)
class PassageModel:
    """Weights of the passage classifier, as ``bench/scanner_model.py`` wrote them."""

    weights: np.ndarray
    bias: float
    threshold: float
    embedding_model: str
    chars: int
    min_words: int

    @classmethod
    def load(cls, path: Path | None = None) -> PassageModel:
        """The weights in ``path`` (MODEL_FILE by default); Unavailable when they are
        missing or not usable."""
        path = path or MODEL_FILE
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise Unavailable(f"no model file at {path.name}") from None
        except (OSError, ValueError) as exc:
            raise Unavailable(f"the model file {path.name} cannot be read ({exc})") from exc
        try:
            if data["format"] != MODEL_FORMAT:
                raise Unavailable(f"the model file is format {data['format']}, not {MODEL_FORMAT}")
            weights = np.asarray(data["weights"], dtype=np.float32)
            chunking = data["chunking"]
            return cls(
                weights=weights,
                bias=float(data["bias"]),
                threshold=float(data["threshold"]),
                embedding_model=str(data["embedding_model"]),
                chars=int(chunking["chars"]),
                min_words=int(chunking["min_words"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise Unavailable(f"the model file {path.name} lacks {exc}") from exc

    def scores(self, vectors: np.ndarray) -> np.ndarray:
        """The probability, for each row of ``vectors``, that its passage is an attack."""
        logits = vectors.astype(np.float32) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-logits))


def local_embedder() -> Embedder:
    """The bundled embedder the weights were trained on (one per process)."""
    from memoryhub.engine.embeddings.factory import get_embedder

    return get_embedder(provider="local")


def _scored(text: str, model_file: Path | None) -> tuple[list[Passage], np.ndarray, float]:
    """The passages of ``text`` worth scoring, their scores and the threshold; raises
    Unavailable (or the embedder's error) when the pass cannot run."""
    model = PassageModel.load(model_file)
    pieces = passages(text, chars=model.chars, min_words=model.min_words)
    if not pieces:
        return [], np.empty(0, dtype=np.float32), model.threshold
    embedder = local_embedder()
    if embedder.model_id != model.embedding_model:
        raise Unavailable(
            f"the weights are for {model.embedding_model}, "
            f"the local embedder is {embedder.model_id}"
        )
    if embedder.dim != model.weights.shape[0]:
        raise Unavailable(f"the weights have {model.weights.shape[0]} dimensions")
    # A page is scanned before the transaction that saves it (which would hold the
    # database's write lock while it is embedded), then again inside it: the second
    # time its passages' vectors are remembered.
    from memoryhub.engine.embeddings.remembered import remembered_vectors

    vectors = np.vstack(remembered_vectors(embedder, [p.text for p in pieces]))
    return pieces, model.scores(vectors), model.threshold


def learned_findings(text: str, *, model_file: Path | None = None) -> list[Finding]:
    """A ``learned-injection`` finding over the passage of ``text`` that scores highest,
    when it scores over the threshold; a low ``learned-skipped`` finding when the pass
    cannot run; nothing when it passes or ``text`` has no passage worth scoring."""
    try:
        pieces, scores, threshold = _scored(text, model_file)
        if not pieces:
            return []
    except Unavailable as exc:
        logger.warning("The learned scanner pass was skipped: %s", exc)
        return [_skipped(str(exc))]
    except Exception as exc:  # the embedder is an edge we do not own: the rules still run
        logger.exception("The learned scanner pass failed")
        return [_skipped(f"the local embedder failed ({type(exc).__name__})")]
    best = int(np.argmax(scores))
    over = int((scores > threshold).sum())
    if not over:
        return []
    top = pieces[best]
    others = f"; {over - 1} other passage(s) score over it" if over > 1 else ""
    message = (
        f"Passage {best + 1} of {len(pieces)} reads like a prompt injection to the learned "
        f"model: score {scores[best]:.3f}, threshold {threshold:.3f}{others}"
    )
    return [finding(RULE, "medium", message, text, top.start, top.end)]


def _skipped(reason: str) -> Finding:
    return Finding(SKIPPED, "low", f"Learned pass skipped: {reason}", 0, 0, "")
