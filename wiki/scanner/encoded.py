"""Encoded text: long base64 blobs, decoded and scanned again."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

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
