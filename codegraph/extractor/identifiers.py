"""Splitting identifiers into words, for full-text search over symbol names."""

from __future__ import annotations

import re

# A versioned acronym (IPv4, HTML5), an acronym before a capitalised word (HTTP|Server),
# a capitalised or lower-case word, an acronym, or a bare number; digits stay with the
# letters they follow (utf8, base64, get2nd).
_WORD = re.compile(r"[A-Z]{2,}[a-z]?\d+|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z][a-z\d]*|[A-Z]+\d*|\d+")
_NON_WORD = re.compile(r"[\W_]+")


def split_identifier(name: str) -> str:
    """Lower-case words of an identifier, separated by single spaces.

    `getQueryset` -> "get queryset", `snake_case` -> "snake case",
    `HTTPServerError` -> "http server error", `base64Encode` -> "base64 encode".
    """
    if name.isascii():
        return " ".join(_WORD.findall(name)).lower()
    # Case rules beyond ASCII are not worth guessing at: split on separators only.
    return " ".join(_NON_WORD.sub(" ", name).split()).lower()
