"""Source code extractor: definitions, imports and calls of one file, with tree-sitter.

Pure Python on top of py-tree-sitter and the per-language grammar wheels; no Django.

    >>> index = extract("app/views.py", source_bytes)
    >>> index.definitions[0].qualified_name
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .engine import run
from .identifiers import split_identifier
from .languages import EXTENSIONS, spec_for
from .model import Call, Definition, FileIndex, FileRows, Import

# Bump whenever extraction output changes for the same input: stored indexes built by
# an older version are then re-built in full.
EXTRACTOR_VERSION = 1

__all__ = [
    "EXTRACTOR_VERSION",
    "Call",
    "Definition",
    "FileIndex",
    "FileRows",
    "Import",
    "UnsupportedLanguageError",
    "extract",
    "extract_rows",
    "language_for",
    "preload",
    "split_identifier",
    "supported_extensions",
]


class UnsupportedLanguageError(ValueError):
    """The file's extension maps to no supported language."""


def _extension(path: str) -> str:
    return os.path.splitext(path)[1].lower()


def language_for(path: str) -> str | None:
    """The language name for a file path or name, from its extension; None if unsupported.

    Names: python, javascript, typescript (also .tsx), go, rust, java.
    """
    entry = EXTENSIONS.get(_extension(path))
    return entry[0] if entry else None


def preload(paths: Iterable[str]) -> None:
    """Load the grammars and queries the files at `paths` need (once per process), so
    processes forked afterwards share them instead of each compiling its own."""
    for key in {entry[1] for entry in map(EXTENSIONS.get, map(_extension, paths)) if entry}:
        spec_for(key)


def supported_extensions() -> frozenset[str]:
    """File extensions (lower case, with the dot) that `extract` understands."""
    return frozenset(EXTENSIONS)


def extract(path_or_name: str, source: bytes) -> FileIndex:
    """Extract definitions, imports and calls from `source`.

    The language is chosen from the extension of `path_or_name`; raises
    UnsupportedLanguageError for other files. Syntax errors never raise: the file is
    indexed as far as the parser recovers and `has_errors` is set.
    """
    return extract_rows(path_or_name, source).index()


def extract_rows(path_or_name: str, source: bytes) -> FileRows:
    """Like `extract`, with each definition, import and call as a plain tuple of its
    record's fields: for callers that only store the values."""
    entry = EXTENSIONS.get(_extension(path_or_name))
    if entry is None:
        raise UnsupportedLanguageError(f"no extractor for {path_or_name!r}")
    return run(spec_for(entry[1]), source)
