"""Python: functions, methods, classes, module-level UPPER_CASE constants."""

from __future__ import annotations

import tree_sitter_python
from tree_sitter import Node

from ..engine import Collected, Handler, compile_spec, make_def, node_text, receiver_text
from ..model import Import
from .common import FieldIds, is_constant_name

QUERY = """
(function_definition) @function
(class_definition) @class
(module (expression_statement (assignment left: (identifier)) @constant))
(import_statement) @import
(import_from_statement) @import_from
(future_import_statement) @import_from
(call) @call
"""


def _header_end(node: Node) -> int | None:
    body = node.child_by_field_id(F.body)
    if body is None:
        return None
    # Stop before the ':' (and any comment after it) that opens the body.
    colon = body.prev_sibling
    while colon is not None and colon.type == "comment":
        colon = colon.prev_sibling
    return colon.start_byte if colon is not None else body.start_byte


def _named(kind: str) -> Handler:
    def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
        append = out.definitions.append
        for node in nodes:
            name_node = node.child_by_field_id(F.name)
            if name_node is not None:
                append(make_def(node, name_node, kind, source, _header_end(node)))

    return handle


def _constants(nodes: list[Node], source: bytes, out: Collected) -> None:
    for node in nodes:
        name_node = node.child_by_field_id(F.left)
        if name_node is not None and is_constant_name(node_text(name_node, source)):
            out.definitions.append(make_def(node, name_node, "constant", source, None))


def _dotted(node: Node, source: bytes) -> str:
    # Relative imports may be written with spaces (`from . a import b`).
    return "".join(node_text(node, source).split())


def _names(node: Node, source: bytes) -> list[tuple[str, str, int]]:
    """(name, alias, line) for each `name` child of an import statement."""
    found = []
    for child in node.children_by_field_name("name"):
        alias = ""
        if child.type == "aliased_import":
            alias_node = child.child_by_field_id(F.alias)
            alias = node_text(alias_node, source) if alias_node is not None else ""
            child = child.child_by_field_id(F.name)
            if child is None:
                continue
        found.append((_dotted(child, source), alias, child.start_point[0] + 1))
    return found


def _imports(nodes: list[Node], source: bytes, out: Collected) -> None:
    for node in nodes:
        for name, alias, line in _names(node, source):
            out.imports.append(Import(name, "", alias, line))


def _imports_from(nodes: list[Node], source: bytes, out: Collected) -> None:
    for node in nodes:
        module_node = node.child_by_field_id(F.module_name)
        module = "__future__" if module_node is None else _dotted(module_node, source)
        for name, alias, line in _names(node, source):
            out.imports.append(Import(module, name, alias, line))
        for child in node.named_children:
            if child.type == "wildcard_import":
                out.imports.append(Import(module, "*", "", child.start_point[0] + 1))


def _calls(nodes: list[Node], source: bytes, out: Collected) -> None:
    append = out.calls.append
    for node in nodes:
        function = node.child_by_field_id(F.function)
        if function is None:
            continue
        kind = function.type
        if kind == "identifier":
            append(
                (
                    node.start_byte,
                    node.start_point[0] + 1,
                    source[function.start_byte : function.end_byte].decode("utf-8", "replace"),
                    "",
                )
            )
        elif kind == "attribute":
            attribute = function.child_by_field_id(F.attribute)
            if attribute is None:
                continue
            append(
                (
                    node.start_byte,
                    # A chained call is reported on the line of its own `.name`.
                    attribute.start_point[0] + 1,
                    source[attribute.start_byte : attribute.end_byte].decode("utf-8", "replace"),
                    receiver_text(function.child_by_field_id(F.object), source),
                )
            )


_GRAMMAR = tree_sitter_python.language()

PYTHON = compile_spec(
    "python",
    "python",
    _GRAMMAR,
    QUERY,
    {
        "function": _named("function"),
        "class": _named("class"),
        "constant": _constants,
        "import": _imports,
        "import_from": _imports_from,
        "call": _calls,
    },
    method_scopes=frozenset({"class"}),
)
F = FieldIds(
    PYTHON.language,
    "alias attribute body function left module_name name object",
)
