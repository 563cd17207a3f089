"""Java: classes, interfaces, enums, records, annotation types, methods, constructors
and constants (`static final` fields, interface fields).

A declaration's line is the line of its name and its signature leaves out annotations,
so `@Override` on the line above does not move a method.
"""

from __future__ import annotations

import tree_sitter_java
from tree_sitter import Language, Node

from ..engine import RECEIVER_MAX, Collected, Handler, collapse, compile_spec, make_def, node_text
from .common import FieldIds, line_of

QUERY = """
(class_declaration) @class
(interface_declaration) @interface
(enum_declaration) @enum
(record_declaration) @record
(annotation_type_declaration) @annotation
(method_declaration) @method
(constructor_declaration) @constructor
(compact_constructor_declaration) @constructor
(annotation_type_element_declaration) @method
(field_declaration) @field
(constant_declaration) @interface_constant
(import_declaration) @import
(method_invocation) @call
(object_creation_expression) @new
"""

_ANNOTATIONS = frozenset({"annotation", "marker_annotation"})
_SCOPED_TYPES = frozenset({"scoped_type_identifier", "generic_type"})


class _Java:
    def __init__(self, language: Language) -> None:
        self.f = FieldIds(language, "body declarator name object type")

    def handlers(self) -> dict[str, Handler]:
        handlers: dict[str, Handler] = {
            kind: self._named(kind)
            for kind in (
                "class",
                "interface",
                "enum",
                "record",
                "annotation",
                "method",
                "constructor",
            )
        }
        handlers.update(
            {
                "field": self._constants(interface=False),
                "interface_constant": self._constants(interface=True),
                "import": self.imports,
                "call": self.calls,
                "new": self.creations,
            }
        )
        return handlers

    def _header_start(self, node: Node) -> int:
        """Where a declaration starts once its leading annotations are skipped."""
        first = node.child(0)
        if first is None or first.type != "modifiers":
            return node.start_byte
        for modifier in first.children:
            if modifier.type not in _ANNOTATIONS:
                return modifier.start_byte
        following = first.next_sibling
        return following.start_byte if following is not None else node.start_byte

    def _named(self, kind: str) -> Handler:
        name_id, body_id = self.f.name, self.f.body

        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            for node in nodes:
                name_node = node.child_by_field_id(name_id)
                if name_node is None:
                    continue
                body = node.child_by_field_id(body_id)
                out.definitions.append(
                    make_def(
                        node,
                        name_node,
                        kind,
                        source,
                        body.start_byte if body is not None else None,
                        header_start=self._header_start(node),
                    )
                )

        return handle

    def _constants(self, interface: bool) -> Handler:
        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            for node in nodes:
                if not interface and not _is_static_final(node):
                    continue
                start = self._header_start(node)
                for declarator in node.children_by_field_name("declarator"):
                    name_node = declarator.child_by_field_id(self.f.name)
                    if name_node is not None:
                        out.definitions.append(
                            make_def(node, name_node, "constant", source, None, header_start=start)
                        )

        return handle

    def imports(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            path = None
            wildcard = False
            for child in node.named_children:
                if child.type in ("scoped_identifier", "identifier"):
                    path = "".join(node_text(child, source).split())
                elif child.type == "asterisk":
                    wildcard = True
            if path is None:
                continue
            if wildcard:
                out.add_import(node, path, "*", "")
            else:
                module, _, name = path.rpartition(".")
                out.add_import(node, module, name, "")

    def calls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        append = out.calls.append
        name_id, object_id = self.f.name, self.f.object
        for node in nodes:
            name = node.child_by_field_id(name_id)
            if name is None:
                continue
            receiver = ""
            if node.child_by_field_id(object_id) is not None:
                # Everything before the name, so `Outer.super.m()` keeps `Outer.super`.
                receiver = collapse(source, node.start_byte, name.start_byte, RECEIVER_MAX).rstrip(
                    ". "
                )
            append(
                (node.start_byte, -node.end_byte, line_of(name), node_text(name, source), receiver)
            )

    def creations(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        # `new Foo<>(...)` is reported as a call of `Foo`, `new a.b.Foo()` too.
        for node in nodes:
            kind = node.child_by_field_id(self.f.type)
            while kind is not None and kind.type in _SCOPED_TYPES:
                if kind.type == "generic_type":
                    inner = kind.named_child(0)
                else:
                    inner = kind.named_child(kind.named_child_count - 1)
                if inner is None:
                    break
                kind = inner
            if kind is not None:
                out.calls.append(
                    (node.start_byte, -node.end_byte, line_of(kind), node_text(kind, source), "")
                )


def _is_static_final(field: Node) -> bool:
    first = field.child(0)
    if first is None or first.type != "modifiers":
        return False
    keywords = {modifier.type for modifier in first.children}
    return "static" in keywords and "final" in keywords


JAVA = compile_spec(
    "java",
    "java",
    tree_sitter_java.language(),
    QUERY,
    lambda language: _Java(language).handlers(),
)
