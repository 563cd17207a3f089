"""Encoded text: long base64 blobs, and text in other encodings (hex, binary, base32,
Ascii85, base85, percent or backslash escapes, character references, Morse, ROT13, written
backwards), decoded and scanned again."""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import urllib.parse
from collections.abc import Callable, Iterator

from wiki.scanner.findings import SEVERITY_RANK, Finding, finding, is_flagged


def decoded_text(blob: str) -> str | None:
    """The blob as base64 (standard or URL-safe) decoded to readable text, else None."""
    compact = re.sub(r"\s+", "", blob).rstrip("=")
    padded = compact + "=" * (-len(compact) % 4)
    for altchars in (None, b"-_"):
        try:
            raw = base64.b64decode(padded, altchars=altchars, validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t\r" for ch in decoded)
        if decoded and printable / len(decoded) > 0.95:
            return decoded
    return None


_BASE64 = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}(?:[ \t]*\n[ \t]*[A-Za-z0-9+/_-]{8,})*={0,2}"
    r"(?![A-Za-z0-9+/=_-])"
)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")


def base64_findings(text: str, rescan: Callable[[str], list[Finding]] | None) -> list[Finding]:
    """Long base64 blobs, decoded and scanned again with ``rescan`` (None: not again)."""
    found = []
    for match in _BASE64.finditer(text):
        blob = match.group()
        if not (re.search(r"[a-z]", blob) and re.search(r"[A-Z0-9]", blob)) or _HEX.fullmatch(blob):
            continue  # long words, identifiers and hex digests, not encodings
        decoded = decoded_text(blob)
        inner = rescan(decoded) if decoded and rescan is not None else []
        if is_flagged(inner):
            worst = max(inner, key=lambda f: SEVERITY_RANK[f.severity])
            rules = ", ".join(sorted({f.rule for f in inner if f.severity != "low"}))
            found.append(
                finding(
                    "base64-blob",
                    worst.severity,
                    f"base64 decodes to an injection ({rules}): {decoded[:80]!r}",
                    text,
                    *match.span(),
                )
            )
        else:
            message = (
                f"base64 blob decodes to text: {decoded[:60]!r}"
                if decoded
                else ("long base64 blob")
            )
            found.append(finding("base64-blob", "low", message, text, *match.span()))
    return found


# --- Other encodings: each found by its shape, decoded, and scanned again ------------------

_HEX_BYTES = re.compile(
    r"(?<![\w\\])(?:(?:0x|\\x)?[0-9a-fA-F]{2}[ ,:]?){16,}(?![\w])"  # 16+ bytes, spaced or not
)
_BINARY_BYTES = re.compile(r"(?<![\w])(?:[01]{8}[ ,]?){6,}(?![\w])")
_BASE32 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Z2-7]{24,}={0,6}(?![A-Za-z0-9+/=])")
_ASCII85 = re.compile(r"<~[!-u\s]{10,}?~>")
_BASE85 = re.compile(r"(?<!\S)[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{40,}(?!\S)")
_BASE85_SYMBOL = re.compile(r"[!#$%&()*+;<=>?@^`{|}~]")
# From the first escape on; the word it continues is taken in by ``_percent_runs``.
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}[^\s%]*){4,}")
_ESCAPES = re.compile(r"(?:\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\U[0-9a-fA-F]{8}){6,}")
_ENTITIES = re.compile(r"(?:&#(?:[xX][0-9a-fA-F]{1,6}|[0-9]{1,7});?){6,}")
# No look-behind, so that the search skips ahead to a dot or dash; ``_morse`` checks the
# edges.
_MORSE = re.compile(r"(?:[.-]{1,7}(?: {1,3}| ?/ ?)){8,}[.-]{1,7}(?![\w.-])")
MORSE_CODE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g",
    "....": "h", "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n",
    "---": "o", ".--.": "p", "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u",
    "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z", "-----": "0",
    ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",", "..--..": "?",
    ".----.": "'", "-.-.--": "!", "-..-.": "/", "---...": ":", ".--.-.": "@", "-...-": "=",
    "-....-": "-", "..--.-": "_",
}  # fmt: skip


def _readable(raw: bytes) -> str | None:
    """``raw`` as UTF-8 prose (printable, with spaces between words), else None."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\t\r" for ch in decoded)
    if len(decoded) >= 8 and printable / len(decoded) > 0.95 and " " in decoded.strip():
        return decoded
    return None


def _hex(blob: str) -> str | None:
    digits = re.sub(r"0x|\\x|[ ,:]", "", blob)
    return _readable(bytes.fromhex(digits)) if len(digits) % 2 == 0 else None


def _binary(blob: str) -> str | None:
    return _readable(bytes(int(byte, 2) for byte in re.findall(r"[01]{8}", blob)))


def _base32(blob: str) -> str | None:
    compact = blob.rstrip("=")
    try:
        return _readable(base64.b32decode(compact + "=" * (-len(compact) % 8)))
    except (binascii.Error, ValueError):
        return None


def _ascii85(blob: str) -> str | None:
    try:
        return _readable(base64.a85decode(blob, adobe=True, ignorechars=b" \t\n\r"))
    except ValueError:
        return None


def _base85(blob: str) -> str | None:
    if not _BASE85_SYMBOL.search(blob):
        return None  # identifiers and base64 are no base85
    try:
        return _readable(base64.b85decode(blob))
    except ValueError:
        return None


def _percent_runs(text: str) -> Iterator[tuple[int, int]]:
    """Runs of percent-encoded text, with the word they continue ("Ignore%20all...")."""
    for match in _PERCENT.finditer(text):
        start = match.start()
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        yield start, match.end()


def _percent(blob: str) -> str | None:
    decoded = urllib.parse.unquote(blob)
    return decoded if " " in decoded.strip() else None


def _escapes(blob: str) -> str | None:
    try:
        decoded = codecs.decode(blob, "unicode_escape")
    except UnicodeDecodeError:
        return None
    return decoded if " " in decoded.strip() else None


def _entities(blob: str) -> str | None:
    decoded = html.unescape(blob)
    return decoded if " " in decoded.strip() else None


def _morse(blob: str) -> str | None:
    words = re.split(r" ?/ ?| {2,}", blob.strip())
    letters = [[MORSE_CODE.get(code) for code in word.split()] for word in words]
    if len(words) < 2 or any(None in word for word in letters):
        return None
    return " ".join("".join(word) for word in letters)  # type: ignore[arg-type]


# (name, literals one of which the text must hold (none: no gate), shape, decoder)
ENCODINGS: tuple[tuple[str, str, re.Pattern[str], Callable[[str], str | None]], ...] = (
    ("hex", "", _HEX_BYTES, _hex),
    ("binary", "", _BINARY_BYTES, _binary),
    ("base32", "", _BASE32, _base32),
    ("Ascii85", "<~", _ASCII85, _ascii85),
    ("base85", "", _BASE85, _base85),
    ("percent-encoded", "%", _PERCENT, _percent),
    ("escaped", "\\u \\x \\U", _ESCAPES, _escapes),
    ("character-reference", "&#", _ENTITIES, _entities),
    ("Morse", "", _MORSE, _morse),
)
# Words an injection is made of, as they look in ROT13 and written backwards. Only lines
# that hold one are turned back and scanned again.
_TELLING_WORDS = (
    "ignore", "instructions", "previous", "disregard", "system prompt", "reveal", "password",
    "forget", "override",
)  # fmt: skip
_ROT13 = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZabcdefghijklm",
)
_TURNED = (
    ("ROT13", re.compile("|".join(w.translate(_ROT13) for w in _TELLING_WORDS)), _ROT13),
    ("backwards", re.compile("|".join(w[::-1] for w in _TELLING_WORDS)), None),
)


def _turned_lines(text: str) -> Iterator[tuple[str, int, int, str]]:
    """Lines written in ROT13 or backwards: (how, start, end, the line turned back)."""
    lowered = text.lower()
    for how, seed, table in _TURNED:
        done = -1
        for match in seed.finditer(lowered):
            if match.start() < done:
                continue
            start = lowered.rfind("\n", 0, match.start()) + 1
            end = lowered.find("\n", match.end())
            end = len(text) if end < 0 else end
            done = end
            line = text[start:end]
            yield how, start, end, line.translate(table) if table else line[::-1]


def _inside_word(text: str, start: int) -> bool:
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] in ".-")


def encoded_findings(text: str, rescan: Callable[[str], list[Finding]] | None) -> list[Finding]:
    """Text in other encodings (hex, binary, base32, Ascii85, base85, percent or backslash escapes,
    character references, Morse, ROT13, backwards), decoded and scanned again with
    ``rescan``; only encodings that hide an injection are reported."""
    if rescan is None:
        return []
    candidates: list[tuple[str, int, int, str]] = []
    for how, gate, pattern, decode in ENCODINGS:
        if gate and not any(literal in text for literal in gate.split()):
            continue
        spans = (
            _percent_runs(text)
            if pattern is _PERCENT
            else (
                match.span()
                for match in pattern.finditer(text)
                if pattern is not _MORSE or not _inside_word(text, match.start())
            )
        )
        for start, end in spans:
            blob = text[start:end]
            decoded = decode(blob)
            if decoded and decoded.strip() != blob.strip():
                candidates.append((how, start, end, decoded))
    candidates += _turned_lines(text)
    found = []
    for how, start, end, decoded in candidates:
        inner = rescan(decoded)
        if is_flagged(inner):
            worst = max(inner, key=lambda f: SEVERITY_RANK[f.severity])
            rules = ", ".join(sorted({f.rule for f in inner if f.severity != "low"}))
            found.append(
                finding(
                    "encoded-text",
                    worst.severity,
                    f"{how} text decodes to an injection ({rules}): {decoded[:80]!r}",
                    text,
                    start,
                    end,
                )
            )
    return found
