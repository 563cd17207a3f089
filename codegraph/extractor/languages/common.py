"""Small helpers shared by the language modules."""

from __future__ import annotations

from tree_sitter import Language, Node


def is_constant_name(name: str) -> bool:
    """True for UPPER_CASE names, the convention for constants where the language has
    no `const` of its own (`MAX_SIZE`, `_DEFAULTS`, `V2`; not `__all__` or `Name`)."""
    stripped = name.lstrip("_")
    return bool(stripped) and stripped[0].isalpha() and name.isupper()


def unquote(text: str) -> str:
    """A string literal's content (`"x"`, `'x'`, `` `x` ``): the grammar keeps quotes."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    return text


class FieldIds:
    """Numeric ids of a grammar's field names, as attributes (`F.name`).

    `child_by_field_id` skips the name lookup that `child_by_field_name` does on every
    call, which matters on hot paths run for every call site of a tree.
    """

    def __init__(self, language: Language, names: str) -> None:
        for name in names.split():
            field_id = language.field_id_for_name(name)
            if field_id is None:
                raise ValueError(f"grammar has no field {name!r}")
            setattr(self, name, field_id)

    def __getattr__(self, name: str) -> int:
        raise AttributeError(f"field {name!r} was not declared")


def line_of(node: Node) -> int:
    """The 1-based line a node starts on."""
    return node.start_point[0] + 1
