"""Python: functions, methods, classes, module-level UPPER_CASE constants."""

from __future__ import annotations

import tree_sitter_python
from tree_sitter import Language, Node

from ..engine import (
    RECEIVER_MAX,
    Collected,
    Handler,
    collapse,
    compile_spec,
    make_def,
    node_text,
)
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


class _Python:
    def __init__(self, language: Language) -> None:
        self.f = FieldIds(language, "alias attribute body function left module_name name object")

    def handlers(self) -> dict[str, Handler]:
        return {
            "function": self._named("function"),
            "class": self._named("class"),
            "constant": self.constants,
            "import": self.imports,
            "import_from": self.imports_from,
            "call": self.calls,
        }

    def _header_end(self, node: Node) -> int | None:
        body = node.child_by_field_id(self.f.body)
        if body is None:
            return None
        # Stop before the ':' (and any comment after it) that opens the body.
        colon = body.prev_sibling
        while colon is not None and colon.type == "comment":
            colon = colon.prev_sibling
        return colon.start_byte if colon is not None else body.start_byte

    def _named(self, kind: str) -> Handler:
        name_id = self.f.name

        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            append = out.definitions.append
            for node in nodes:
                name_node = node.child_by_field_id(name_id)
                if name_node is not None:
                    append(make_def(node, name_node, kind, source, self._header_end(node)))

        return handle

    def constants(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name_node = node.child_by_field_id(self.f.left)
            if name_node is not None and is_constant_name(node_text(name_node, source)):
                out.definitions.append(make_def(node, name_node, "constant", source, None))

    def _names(self, node: Node, source: bytes) -> list[tuple[str, str, Node]]:
        """(name, alias, name node) for each `name` child of an import statement."""
        found = []
        for child in node.children_by_field_name("name"):
            alias = ""
            if child.type == "aliased_import":
                alias_node = child.child_by_field_id(self.f.alias)
                alias = node_text(alias_node, source) if alias_node is not None else ""
                child = child.child_by_field_id(self.f.name)
                if child is None:
                    continue
            found.append((_dotted(child, source), alias, child))
        return found

    def imports(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            for name, alias, name_node in self._names(node, source):
                out.add_import(name_node, name, "", alias)

    def imports_from(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            module_node = node.child_by_field_id(self.f.module_name)
            module = "__future__" if module_node is None else _dotted(module_node, source)
            for name, alias, name_node in self._names(node, source):
                out.add_import(name_node, module, name, alias)
            for child in node.named_children:
                if child.type == "wildcard_import":
                    out.add_import(child, module, "*", "")

    def calls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        # The hottest handler (every call site): Node attributes are read as few times
        # as possible. A call starts where its function (and a receiver) starts.
        append = out.calls.append
        function_id, attribute_id, object_id = self.f.function, self.f.attribute, self.f.object
        for node in nodes:
            function = node.child_by_field_id(function_id)
            if function is None:
                continue
            kind = function.type
            if kind == "identifier":
                start, stop = function.start_byte, function.end_byte
                append(
                    (
                        start,
                        -node.end_byte,
                        function.start_point[0] + 1,
                        source[start:stop].decode("utf-8", "replace"),
                        "",
                    )
                )
            elif kind == "attribute":
                attribute = function.child_by_field_id(attribute_id)
                if attribute is None:
                    continue
                start = node.start_byte
                receiver = function.child_by_field_id(object_id)
                name = source[attribute.start_byte : attribute.end_byte]
                append(
                    (
                        start,
                        -node.end_byte,
                        # A chained call is reported on the line of its own `.name`.
                        attribute.start_point[0] + 1,
                        name.decode("utf-8", "replace"),
                        ""
                        if receiver is None
                        else collapse(source, start, receiver.end_byte, RECEIVER_MAX),
                    )
                )


def _dotted(node: Node, source: bytes) -> str:
    # Relative imports may be written with spaces (`from . a import b`).
    return "".join(node_text(node, source).split())


PYTHON = compile_spec(
    "python",
    "python",
    tree_sitter_python.language(),
    QUERY,
    lambda language: _Python(language).handlers(),
    method_scopes=frozenset({"class"}),
)
