"""References that name a row by its id or by its name, as API callers and forms send
them ("7" or "platform" for a team)."""

from typing import Annotated

from pydantic import Field

# The largest id a database column holds; a longer run of digits names nothing.
MAX_ID = 2**63 - 1
# A row's id in a request body: a number no column could hold is refused as bad input.
RowId = Annotated[int, Field(ge=1, le=MAX_ID)]


def shortened(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters for a message that quotes it."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def id_of(reference: str | int) -> int | None:
    """The id ``reference`` gives, or None when it is a name. Only ASCII digits make an
    id: Python also counts "²" or "٣" as digits, which int() then refuses."""
    if isinstance(reference, bool):
        return None
    if isinstance(reference, int):
        return reference if abs(reference) <= MAX_ID else None
    text = str(reference).strip()
    if text.isascii() and text.isdigit() and int(text) <= MAX_ID:
        return int(text)
    return None
