"""JavaScript, TypeScript and TSX (one module: the TypeScript grammars extend the JS one).

Definitions: functions (declarations and functions or arrows bound to a name), classes,
methods (class members, object-literal methods, class fields holding a function),
module-level UPPER_CASE `const`s; TypeScript adds interfaces, type aliases, enums,
namespaces and signatures. Imports: `import`, `export ... from`, `require("m")` and
`import("m")`. Calls: calls and `new` expressions.
"""

from __future__ import annotations

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Node

from ..engine import (
    Collected,
    Handler,
    LanguageSpec,
    compile_spec,
    make_def,
    node_text,
    receiver_text,
)
from .common import FieldIds, is_constant_name, line_of, unquote

_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function)]"

_COMMON_QUERY = f"""
(function_declaration) @function
(generator_function_declaration) @function
(class_declaration) @class
(method_definition) @method
(variable_declarator name: (identifier) value: {_FUNCTION_VALUES}) @bound_function
(variable_declarator name: (identifier) value: (class)) @bound_class
(pair key: (property_identifier) value: {_FUNCTION_VALUES}) @pair_method
(variable_declarator name: (identifier) value: (object)) @object_scope
(program (lexical_declaration (variable_declarator) @constant))
(program (export_statement (lexical_declaration (variable_declarator) @constant)))
(import_statement) @import
(export_statement source: (_)) @reexport
(call_expression function: (identifier) arguments: (arguments . (string))) @require
(call_expression function: (import) arguments: (arguments . (string))) @dynamic_import
(call_expression) @call
(new_expression) @call
"""

_JS_QUERY = (
    _COMMON_QUERY + f"(field_definition property: (_) value: {_FUNCTION_VALUES}) @field_method\n"
)

_TS_QUERY = (
    _COMMON_QUERY
    + f"""
(public_field_definition name: (_) value: {_FUNCTION_VALUES}) @field_method
(abstract_class_declaration) @class
(interface_declaration) @interface
(type_alias_declaration) @type
(enum_declaration) @enum
(internal_module) @namespace
(function_signature) @function
(method_signature) @method
(abstract_method_signature) @method
"""
)


# Values of a `const` already reported under another kind.
_NOT_CONSTANT = frozenset({"arrow_function", "function_expression", "generator_function", "class"})


def _string(node: Node | None, source: bytes) -> str:
    return unquote(node_text(node, source)) if node is not None else ""


class _JavaScript:
    def __init__(self, language: Language, typescript: bool) -> None:
        self.f = FieldIds(language, _FIELDS)
        self.typescript = typescript

    def _header_end(self, node: Node) -> int | None:
        body = node.child_by_field_id(self.f.body)
        return body.start_byte if body is not None else None

    def _header_start(self, node: Node) -> int:
        # TypeScript puts class decorators inside the declaration; the header skips them.
        start = node.start_byte
        for child in node.children:
            if child.type != "decorator":
                return child.start_byte
        return start

    def _named(self, kind: str) -> Handler:
        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            append = out.definitions.append
            for node in nodes:
                name_node = node.child_by_field_id(self.f.name)
                if name_node is None:
                    continue
                append(
                    make_def(
                        node,
                        name_node,
                        kind,
                        source,
                        self._header_end(node),
                        header_start=self._header_start(node),
                    )
                )

        return handle

    def _bound(self, kind: str, name_id: int) -> Handler:
        """Definitions whose name and value are two fields: `const f = () => ...`."""
        value_id = self.f.value

        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            for node in nodes:
                name_node = node.child_by_field_id(name_id)
                value = node.child_by_field_id(value_id)
                if name_node is None or value is None:
                    continue
                out.definitions.append(
                    make_def(node, name_node, kind, source, self._header_end(value))
                )

        return handle

    def _object_scope(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        # `const api = { get() {} }`: qualifies `api.get` without being a definition.
        for node in nodes:
            name_node = node.child_by_field_id(self.f.name)
            if name_node is not None:
                out.definitions.append(
                    make_def(node, name_node, "object", source, None, emit=False)
                )

    def _constants(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name_node = node.child_by_field_id(self.f.name)
            value = node.child_by_field_id(self.f.value)
            declaration = node.parent
            if (
                name_node is None
                or name_node.type != "identifier"
                or declaration is None
                or declaration.child(0).type != "const"  # type: ignore[union-attr]
                or (value is not None and value.type in _NOT_CONSTANT)
                or not is_constant_name(node_text(name_node, source))
            ):
                continue
            out.definitions.append(
                make_def(
                    node, name_node, "constant", source, None, header_start=declaration.start_byte
                )
            )

    def _imports(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            module = _string(node.child_by_field_id(self.f.source), source)
            found = False
            for clause in node.named_children:
                if clause.type == "import_clause":
                    found = True
                    self._import_clause(clause, module, source, out)
                elif clause.type == "import_require_clause":
                    # TypeScript `import fs = require("fs")`.
                    found = True
                    local = clause.named_child(0)
                    module = _string(clause.child_by_field_id(self.f.source), source)
                    alias = node_text(local, source) if local is not None else ""
                    out.add_import(clause, module, "", alias)
            if not found:
                out.add_import(node, module, "", "")

    def _import_clause(self, clause: Node, module: str, source: bytes, out: Collected) -> None:
        for part in clause.named_children:
            if part.type == "identifier":
                out.add_import(part, module, "default", node_text(part, source))
            elif part.type == "namespace_import":
                local = part.named_child(0)
                alias = node_text(local, source) if local is not None else ""
                out.add_import(part, module, "*", alias)
            elif part.type == "named_imports":
                self._specifiers(part, "import_specifier", module, source, out)

    def _specifiers(
        self, group: Node, specifier_type: str, module: str, source: bytes, out: Collected
    ) -> None:
        for specifier in group.named_children:
            if specifier.type != specifier_type:
                continue
            name_node = specifier.child_by_field_id(self.f.name)
            alias_node = specifier.child_by_field_id(self.f.alias)
            name = _string(name_node, source)
            alias = node_text(alias_node, source) if alias_node is not None else ""
            out.add_import(specifier, module, name, alias)

    def _reexports(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            module = _string(node.child_by_field_id(self.f.source), source)
            found = False
            for part in node.named_children:
                if part.type == "export_clause":
                    found = True
                    self._specifiers(part, "export_specifier", module, source, out)
                elif part.type == "namespace_export":
                    found = True
                    local = part.named_child(0)
                    alias = node_text(local, source) if local is not None else ""
                    out.add_import(part, module, "*", alias)
            if not found:
                out.add_import(node, module, "*", "")

    def _first_string(self, call: Node, source: bytes) -> str:
        arguments = call.child_by_field_id(self.f.arguments)
        first = arguments.named_child(0) if arguments is not None else None
        return _string(first, source)

    def _requires(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            function = node.child_by_field_id(self.f.function)
            if function is None or node_text(function, source) != "require":
                continue
            module = self._first_string(node, source)
            parent = node.parent
            target = parent.child_by_field_id(self.f.name) if parent is not None else None
            if parent is None or parent.type != "variable_declarator" or target is None:
                out.add_import(node, module, "", "")
            elif target.type == "identifier":
                out.add_import(node, module, "", node_text(target, source))
            elif target.type == "object_pattern":
                # const { a, b: c } = require("m")
                for part in target.named_children:
                    if part.type == "shorthand_property_identifier_pattern":
                        out.add_import(part, module, node_text(part, source), "")
                    elif part.type == "pair_pattern":
                        key = part.child_by_field_id(self.f.key)
                        value = part.child_by_field_id(self.f.value)
                        if key is not None and value is not None:
                            out.add_import(
                                part, module, node_text(key, source), node_text(value, source)
                            )
            else:
                out.add_import(node, module, "", "")

    def _dynamic_imports(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            out.add_import(node, self._first_string(node, source), "", "")

    def _calls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        append = out.calls.append
        for node in nodes:
            if node.type == "new_expression":
                function = node.child_by_field_id(self.f.constructor)
            else:
                function = node.child_by_field_id(self.f.function)
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
            elif kind == "member_expression":
                prop = function.child_by_field_id(self.f.property)
                if prop is None:
                    continue
                append(
                    (
                        node.start_byte,
                        -node.end_byte,
                        line_of(prop),
                        node_text(prop, source),
                        receiver_text(function.child_by_field_id(self.f.object), source),
                    )
                )

    def handlers(self) -> dict[str, Handler]:
        handlers: dict[str, Handler] = {
            "function": self._named("function"),
            "class": self._named("class"),
            "method": self._named("method"),
            "bound_function": self._bound("function", self.f.name),
            "bound_class": self._bound("class", self.f.name),
            "pair_method": self._bound("method", self.f.key),
            "object_scope": self._object_scope,
            # JS names a class field `property`, TypeScript `name`.
            "field_method": self._bound(
                "method", self.f.name if self.typescript else self.f.property
            ),
            "constant": self._constants,
            "import": self._imports,
            "reexport": self._reexports,
            "require": self._requires,
            "dynamic_import": self._dynamic_imports,
            "call": self._calls,
        }
        if self.typescript:
            for kind in ("interface", "type", "enum", "namespace"):
                handlers[kind] = self._named(kind)
        return handlers


_FIELDS = "alias arguments body constructor function key name object property source value"
_METHOD_SCOPES = frozenset({"class", "interface"})

JAVASCRIPT: LanguageSpec = compile_spec(
    "javascript",
    "javascript",
    tree_sitter_javascript.language(),
    _JS_QUERY,
    lambda language: _JavaScript(language, typescript=False).handlers(),
    _METHOD_SCOPES,
)
TYPESCRIPT: LanguageSpec = compile_spec(
    "typescript",
    "typescript",
    tree_sitter_typescript.language_typescript(),
    _TS_QUERY,
    lambda language: _JavaScript(language, typescript=True).handlers(),
    _METHOD_SCOPES,
)
TSX: LanguageSpec = compile_spec(
    "tsx",
    "typescript",
    tree_sitter_typescript.language_tsx(),
    _TS_QUERY,
    lambda language: _JavaScript(language, typescript=True).handlers(),
    _METHOD_SCOPES,
)
