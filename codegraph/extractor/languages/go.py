"""Go: functions, methods (qualified by receiver type), structs, interfaces and their
methods, other named types, package-level constants and variables."""

from __future__ import annotations

import tree_sitter_go
from tree_sitter import Language, Node

from ..engine import Collected, Handler, compile_spec, make_def, node_text, receiver_text
from .common import FieldIds, line_of, unquote

QUERY = """
(function_declaration) @function
(method_declaration) @method
(type_spec) @type
(type_alias) @type
(method_elem) @interface_method
(source_file (const_declaration (const_spec) @constant))
(source_file (var_declaration (var_spec) @variable))
(source_file (var_declaration (var_spec_list (var_spec) @variable)))
(import_spec) @import
(call_expression) @call
"""

_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


class _Go:
    def __init__(self, language: Language) -> None:
        self.f = FieldIds(
            language, "body field function name operand path receiver type type_parameters"
        )

    def handlers(self) -> dict[str, Handler]:
        return {
            "function": self.functions,
            "method": self.methods,
            "type": self.types,
            "interface_method": self.interface_methods,
            "constant": self._values("constant"),
            "variable": self._values("variable"),
            "import": self.imports,
            "call": self.calls,
        }

    def functions(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name_node = node.child_by_field_id(self.f.name)
            if name_node is not None:
                out.definitions.append(
                    make_def(node, name_node, "function", source, self._body_start(node))
                )

    def methods(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name_node = node.child_by_field_id(self.f.name)
            if name_node is None:
                continue
            out.definitions.append(
                make_def(
                    node,
                    name_node,
                    "method",
                    source,
                    self._body_start(node),
                    qualifier=self._receiver_type(node, source),
                )
            )

    def _body_start(self, node: Node) -> int | None:
        body = node.child_by_field_id(self.f.body)
        return body.start_byte if body is not None else None

    def _receiver_type(self, method: Node, source: bytes) -> str:
        """`T` for receivers `(t T)`, `(t *T)` and `(t *T[K])`."""
        receiver = method.child_by_field_id(self.f.receiver)
        parameter = receiver.named_child(0) if receiver is not None else None
        kind = parameter.child_by_field_id(self.f.type) if parameter is not None else None
        while kind is not None and kind.type in ("pointer_type", "generic_type"):
            if kind.type == "generic_type":
                kind = kind.child_by_field_id(self.f.type)
            else:
                kind = kind.named_child(0)
        return node_text(kind, source) if kind is not None else ""

    def types(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name_node = node.child_by_field_id(self.f.name)
            if name_node is None:
                continue
            definition = node.child_by_field_id(self.f.type)
            kind = _TYPE_KINDS.get(definition.type, "type") if definition is not None else "type"
            header_end = None
            if kind != "type" and definition is not None:
                # `type S struct {...}`: the header stops at the brace.
                brace = source.find(b"{", definition.start_byte, definition.end_byte)
                header_end = brace if brace >= 0 else None
            # A type spec starts at its name, also inside a `type ( ... )` group.
            out.definitions.append(
                make_def(node, name_node, kind, source, header_end, prefix="type ")
            )

    def interface_methods(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name_node = node.child_by_field_id(self.f.name)
            if name_node is not None:
                out.definitions.append(make_def(node, name_node, "method", source, None))

    def _values(self, kind: str) -> Handler:
        # Specs in a `const ( ... )` group lack the keyword: the signature adds it back.
        keyword = "const " if kind == "constant" else "var "

        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            for node in nodes:
                for name_node in node.children_by_field_name("name"):
                    if name_node.type == "identifier":
                        out.definitions.append(
                            make_def(node, name_node, kind, source, None, prefix=keyword)
                        )

        return handle

    def imports(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            path = node.child_by_field_id(self.f.path)
            if path is None:
                continue
            alias_node = node.child_by_field_id(self.f.name)
            alias = node_text(alias_node, source) if alias_node is not None else ""
            out.add_import(path, unquote(node_text(path, source)), "", alias)

    def calls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        append = out.calls.append
        function_id, field_id, operand_id = self.f.function, self.f.field, self.f.operand
        for node in nodes:
            function = node.child_by_field_id(function_id)
            if function is None:
                continue
            kind = function.type
            if kind == "identifier":
                append(
                    (
                        node.start_byte,
                        -node.end_byte,
                        line_of(node),
                        node_text(function, source),
                        "",
                    )
                )
            elif kind == "selector_expression":
                field = function.child_by_field_id(field_id)
                if field is None:
                    continue
                append(
                    (
                        node.start_byte,
                        -node.end_byte,
                        line_of(field),
                        node_text(field, source),
                        receiver_text(function.child_by_field_id(operand_id), source),
                    )
                )


GO = compile_spec(
    "go",
    "go",
    tree_sitter_go.language(),
    QUERY,
    lambda language: _Go(language).handlers(),
)
