"""Text that cannot be stored: JSON may carry lone UTF-16 surrogates ("\\ud800"), which
decode to Python strings no database, index or log can encode. Every entry point that
decodes JSON itself refuses them before anything is written."""

import re
from typing import Any

from memoryhub.errors import InvalidInput

LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """Where in a decoded JSON value (keys included) a lone surrogate is, or None."""
    if isinstance(value, str):
        return path or "the text" if LONE_SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and LONE_SURROGATE.search(key):
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
        raise InvalidInput(
            f"{where} is not valid Unicode text (it holds a lone surrogate escape such as "
            "\\ud800): send UTF-8 text, with characters outside the basic plane as pairs."
        )
