"""Text that cannot be stored: JSON may carry lone UTF-16 surrogates ("\\ud800"), which
decode to Python strings no database, index or log can encode, and NUL characters
("\\u0000", "%00"), which PostgreSQL's text cannot hold. Every entry point that decodes
JSON itself refuses them before anything is written, on either engine; query strings and
forms are refused by ``memoryhub.middleware.UnstorableTextMiddleware``."""

import re
from typing import Any

from memoryhub.engine.errors import InvalidInput

# Lone surrogates, and the NUL character.
UNSTORABLE = re.compile("[\ud800-\udfff\x00]")
UNSTORABLE_TEXT = (
    "is not storable Unicode text (it holds a lone surrogate escape such as \\ud800, or a "
    "NUL character): send UTF-8 text, with characters outside the basic plane as pairs."
)


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """Where in a decoded JSON value (keys included) a lone surrogate is, or None."""
    if isinstance(value, str):
        return path or "the text" if UNSTORABLE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and UNSTORABLE.search(key):
                return f"a field name at {path or 'the top level'}"
            found = lone_surrogate_path(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = lone_surrogate_path(item, f"{path}[{index}]")
            if found:
                return found
    return None


def require_storable_text(value: Any) -> None:
    """Refuse a decoded JSON value that holds a lone surrogate anywhere, naming where."""
    where = lone_surrogate_path(value)
    if where is not None:
        raise InvalidInput(f"{where} {UNSTORABLE_TEXT}")
