"""The matching copy of a text, with a map back to the original offsets.

NFKC, casefolded, accents and invisible characters removed, mixed-script look-alikes
folded, letter-by-letter spelling and leetspeak undone, runs of spaces collapsed, so that
obfuscation does not hide an instruction from the phrase rules.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from functools import lru_cache

# Look-alikes folded only inside words that mix Latin with Cyrillic or Greek, so that
# genuine Russian or Greek text is left alone.
HOMOGLYPHS = str.maketrans(
    "авекмнорстухіјѕԁԛԝһӏαβεζηικμνορτυχ",
    "abekmhopctyxijsdqwhlabezhikmvoptux",
)
LEET = str.maketrans("013457", "oieast")


def _accents_are_decoration(base: str) -> bool:
    """Whether marks on ``base`` are accents people drop (Latin, Greek, Cyrillic), not
    part of the letter, as a kana's voicing mark or an Indic vowel sign is."""
    code = ord(base)
    return code < 0x0250 or 0x0370 <= code < 0x0530 or 0x1E00 <= code < 0x2000


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """NFKC, casefold, then drop accents and invisible format characters. The Russian
    short i keeps its mark: "й" is a letter of its own, not an accented "и"."""
    if unicodedata.category(ch) == "Cf":
        return ""
    folded = unicodedata.normalize("NFKC", ch).casefold()
    decomposed = unicodedata.normalize("NFD", folded)
    kept = []
    for c in decomposed:
        if unicodedata.category(c) == "Cf":
            continue
        short_i = bool(kept) and kept[-1] == "и" and c == "\u0306"
        if (
            unicodedata.combining(c)
            and (not kept or _accents_are_decoration(kept[-1]))
            and not short_i
        ):
            continue  # an accent, or a mark on its own (stacked marks)
        kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept))


class Normalised:
    """A matching copy of a text and the way back to original offsets.

    The map is sparse: ``keys[k]`` (a position in the copy) corresponds to
    ``values[k]`` (an offset in the original), and positions after a key run on
    linearly until the next key. Edits add keys; untouched stretches need none.
    """

    __slots__ = ("keys", "original", "text", "values")

    def __init__(self, original: str, text: str, points: list[tuple[int, int]]) -> None:
        self.original = original
        self.text = text
        self.keys = [key for key, _ in points]
        self.values = [value for _, value in points]

    def position(self, index: int) -> int:
        """The original offset of the character at ``index`` in the copy."""
        k = bisect_right(self.keys, index) - 1
        return min(self.values[k] + index - self.keys[k], len(self.original))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original (start, end) for the normalised span [start, end)."""
        if end <= start:
            pos = self.position(start)
            return pos, pos
        return self.position(start), self.position(end - 1) + 1


# (position in the copy, offset in the original) pairs; see Normalised.
Points = list[tuple[int, int]]


def _lookup(keys: list[int], values: list[int], index: int) -> int:
    k = bisect_right(keys, index) - 1
    return values[k] + index - keys[k]


def _compose(outer: Points, inner: Points) -> Points:
    """Points for ``inner(outer(x))``: copy-to-intermediate, then intermediate-to-original."""
    if inner == [(0, 0)]:
        return outer
    inner_keys = [key for key, _ in inner]
    inner_values = [value for _, value in inner]
    composed: Points = []
    for i, (position, middle) in enumerate(outer):
        stop = middle + (outer[i + 1][0] - position) if i + 1 < len(outer) else 1 << 62
        composed.append((position, _lookup(inner_keys, inner_values, middle)))
        k = bisect_right(inner_keys, middle)
        while k < len(inner_keys) and inner_keys[k] < stop:
            composed.append((position + inner_keys[k] - middle, inner_values[k]))
            k += 1
    return composed


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# Seeds that find the few words worth a closer look; whole-word regexes are slow here.
_CYR_GREEK = re.compile(r"[\u0370-\u03ff\u0400-\u052f]")
_LATIN = re.compile(r"[a-z]")
_LEET_DIGIT = re.compile(r"[013457]")
# Single letters split by one space, dot or dash ("I g n o r e", "D.i.s.r.e.g.a.r.d").
_SPLIT_LETTERS = re.compile(r"\w([ .*_·-])\w\1\w(?:\1\w)*")
# Tabs and other odd spaces become spaces; runs of spaces inside a line become one. Line
# breaks and indentation stay, since the patterns accept any whitespace there.
_ODD_SPACE = re.compile(r"[^\S \n]")
# A line break inside a wrapped paragraph: the next line goes on in lower case. It is read
# as a space, so that a phrase wrapped over two lines still matches; a line that starts
# a "role:" label, or follows one or a rule of symbols ("%%%", "---"), keeps its break.
_SOFT_BREAK = re.compile(
    r"(?<=[\w,;.!?)\]\"'\u2019\u201d])\r?\n(?=[ \t]{0,8}[a-z](?![a-z]*[ \t]*:))"
)
_SPACE_RUN = re.compile(r"  +")


def _fold(text: str) -> tuple[str, Points]:
    """Fold the non-ASCII runs character by character; ASCII is only lowercased."""
    pieces: list[str] = []
    points: Points = [(0, 0)]
    out = 0  # length of the copy so far
    last = 0
    for run in _NON_ASCII_RUN.finditer(text):
        pieces.append(text[last : run.start()].lower())
        out += run.start() - last
        for i in range(run.start(), run.end()):
            folded = _fold_char(text[i])
            if not folded:
                continue  # dropped; the next kept character starts a new point
            if len(folded) > 1 or out - points[-1][0] != i - points[-1][1]:
                points.append((out, i))
            for extra in range(1, len(folded)):
                points.append((out + extra, i))  # every expanded character maps to its source
            pieces.append(folded)
            out += len(folded)
        points.append((out, run.end()))
        last = run.end()
    pieces.append(text[last:].lower())
    return "".join(pieces), points


def _translate_words(
    text: str, seed: re.Pattern[str], table: dict[int, str], wanted: object
) -> str:
    """Translate (length-preserving) each word around a seed match that ``wanted``."""
    pieces: list[str] = []
    last = seen = 0
    for match in seed.finditer(text):
        if match.start() < seen:
            continue
        start, end = match.start(), match.end()
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum():
            end += 1
        seen = end
        word = text[start:end]
        if wanted(word):  # type: ignore[operator]
            pieces += [text[last:start], word.translate(table)]
            last = end
    return "".join([*pieces, text[last:]]) if pieces else text


def _is_mixed_script(word: str) -> bool:
    return bool(_LATIN.search(word)) and bool(_CYR_GREEK.search(word))


def _unleet(text: str) -> str:
    """Read digits as letters inside words that mix both ("1gn0r3" is "ignore")."""
    pieces: list[str] = []
    last = seen = 0
    for match in _LEET_DIGIT.finditer(text):
        i = match.start()
        if i < seen or not (
            (i and "a" <= text[i - 1] <= "z") or (i + 1 < len(text) and "a" <= text[i + 1] <= "z")
        ):
            continue
        start, end = i, i + 1
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum():
            end += 1
        seen = end
        if end - start <= 24:  # longer runs are hashes and identifiers
            pieces += [text[last:start], text[start:end].translate(LEET)]
            last = end
    return "".join([*pieces, text[last:]]) if pieces else text


def _squeeze(text: str) -> tuple[str, Points]:
    """Join letter-by-letter spelling and collapse runs of spaces inside a line."""
    if _ODD_SPACE.search(text):
        text = _ODD_SPACE.sub(" ", text)
    cuts: list[tuple[int, int, str]] = []  # (start, end, what replaces text[start:end])
    for match in _SPLIT_LETTERS.finditer(text):
        start, end = match.span()
        if not (start and text[start - 1].isalnum()) and not (
            end < len(text) and text[end].isalnum()
        ):
            cuts.append((start, end, match.group()[::2]))
    for match in _SPACE_RUN.finditer(text):
        if match.start() and text[match.start() - 1] != "\n":
            cuts.append((match.start(), match.end(), " "))
    cuts.sort()
    pieces: list[str] = []
    points: Points = [(0, 0)]
    out = last = 0
    for start, end, replacement in cuts:
        if start < last:
            continue
        pieces.append(text[last:start])
        out += start - last
        # Joined letters keep every other character; a space run keeps its first.
        points += [(out + k, start + 2 * k) for k in range(len(replacement))]
        pieces.append(replacement)
        out += len(replacement)
        points.append((out, end))
        last = end
    pieces.append(text[last:])
    return "".join(pieces), points


def normalise(text: str) -> Normalised:
    """The matching copy of ``text`` with its map back to original offsets."""
    original = text
    if "\n" in text:
        text = _SOFT_BREAK.sub(lambda m: " " * len(m.group()), text)  # same length
    if text.isascii():
        folded, folded_points = text.lower(), [(0, 0)]
    else:
        folded, folded_points = _fold(text)
        if _CYR_GREEK.search(folded):
            folded = _translate_words(folded, _CYR_GREEK, HOMOGLYPHS, _is_mixed_script)
    folded = _unleet(folded)
    squeezed, points = _squeeze(folded)
    return Normalised(original, squeezed, _compose(points, folded_points))
