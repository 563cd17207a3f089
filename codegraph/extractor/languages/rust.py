"""Rust: functions, methods (in `impl` and `trait` blocks, qualified by the type),
structs, enums, unions, traits, type aliases, constants, statics, modules, macros.

Imports flatten `use` trees (`use a::{b, c::d as e}` gives `a::b` and `a::c::d as e`)
and read `extern crate`. Calls include macro invocations, reported as `name!`, and the calls
written inside a macro's arguments (`println!("{}", f(x))`), which the grammar leaves
as unparsed tokens and which are therefore recognised by their shape.
"""

from __future__ import annotations

import tree_sitter_rust
from tree_sitter import Language, Node

from ..engine import (
    RECEIVER_MAX,
    Collected,
    Handler,
    collapse,
    compile_spec,
    make_def,
    node_text,
    receiver_text,
)
from .common import FieldIds, line_of

QUERY = """
(function_item) @function
(function_signature_item) @function
(struct_item) @struct
(enum_item) @enum
(union_item) @union
(trait_item) @trait
(type_item) @type
(const_item) @constant
(static_item) @static
(mod_item) @module
(macro_definition) @macro
(impl_item) @impl
(use_declaration) @use
(extern_crate_declaration) @extern_crate
(call_expression) @call
(macro_invocation) @macro_call
"""

_SCOPED = ("scoped_identifier", "scoped_type_identifier")


class _Rust:
    def __init__(self, language: Language) -> None:
        self.f = FieldIds(
            language,
            "alias argument body field function list macro name path type value",
        )

    def handlers(self) -> dict[str, Handler]:
        handlers: dict[str, Handler] = {
            kind: self._named(kind)
            for kind in (
                "function",
                "struct",
                "enum",
                "union",
                "trait",
                "type",
                "constant",
                "static",
                "module",
                "macro",
            )
        }
        handlers.update(
            impl=self.impls,
            use=self.uses,
            extern_crate=self.extern_crates,
            call=self.calls,
            macro_call=self.macro_calls,
        )
        return handlers

    def _body_start(self, node: Node, source: bytes) -> int | None:
        body = node.child_by_field_id(self.f.body)
        # Tuple structs `struct P(u8, u8);` keep their whole text as the header.
        if body is None or source[body.start_byte : body.start_byte + 1] != b"{":
            return None
        return body.start_byte

    def _named(self, kind: str) -> Handler:
        name_id = self.f.name

        def handle(nodes: list[Node], source: bytes, out: Collected) -> None:
            for node in nodes:
                name_node = node.child_by_field_id(name_id)
                if name_node is None:
                    continue
                # `macro_rules! m { ... }` has no body field: the header ends at the name.
                header_end = (
                    name_node.end_byte if kind == "macro" else self._body_start(node, source)
                )
                out.definitions.append(make_def(node, name_node, kind, source, header_end))

        return handle

    def impls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        # An impl block is no definition of its own, but qualifies what it contains
        # with the implemented type: `impl<T> fmt::Display for a::S<T>` scopes `S`.
        for node in nodes:
            target = node.child_by_field_id(self.f.type)
            while target is not None and target.type == "generic_type":
                target = target.child_by_field_id(self.f.type)
            if target is not None and target.type in _SCOPED:
                target = target.child_by_field_id(self.f.name)
            if target is not None:
                out.definitions.append(make_def(node, target, "impl", source, None, emit=False))

    def uses(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            argument = node.child_by_field_id(self.f.argument)
            if argument is not None:
                self._flatten(argument, "", source, out)

    def _flatten(self, node: Node, prefix: str, source: bytes, out: Collected) -> None:
        """Emit one Import per leaf of a use tree below path `prefix`."""
        kind = node.type
        if kind == "use_list":
            for child in node.named_children:
                self._flatten(child, prefix, source, out)
        elif kind == "scoped_use_list":
            path = node.child_by_field_id(self.f.path)
            inner = _join(prefix, _path(path, source)) if path is not None else prefix
            group = node.child_by_field_id(self.f.list)
            if group is not None:
                self._flatten(group, inner, source, out)
        elif kind == "use_as_clause":
            path = node.child_by_field_id(self.f.path)
            alias = node.child_by_field_id(self.f.alias)
            if path is not None:
                alias_text = node_text(alias, source) if alias is not None else ""
                _leaf(_join(prefix, _path(path, source)), alias_text, node, out)
        elif kind == "use_wildcard":
            path = node.named_child(0)
            module = _join(prefix, _path(path, source)) if path is not None else prefix
            out.add_import(node, module, "*", "")
        else:
            _leaf(_join(prefix, _path(node, source)), "", node, out)

    def extern_crates(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            name = node.child_by_field_id(self.f.name)
            alias = node.child_by_field_id(self.f.alias)
            if name is not None:
                alias_text = node_text(alias, source) if alias is not None else ""
                out.add_import(node, node_text(name, source), "", alias_text)

    def _callee(self, function: Node, source: bytes) -> tuple[Node, str] | None:
        """(name node, receiver text) of a called expression."""
        kind = function.type
        if kind == "generic_function":  # f::<T>()
            inner = function.child_by_field_id(self.f.function)
            return self._callee(inner, source) if inner is not None else None
        if kind == "identifier":
            return function, ""
        if kind == "field_expression":
            field = function.child_by_field_id(self.f.field)
            value = function.child_by_field_id(self.f.value)
            return (field, receiver_text(value, source)) if field is not None else None
        if kind in _SCOPED:
            name = function.child_by_field_id(self.f.name)
            path = function.child_by_field_id(self.f.path)
            return (name, receiver_text(path, source)) if name is not None else None
        return None

    def calls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        append = out.calls.append
        function_id = self.f.function
        for node in nodes:
            function = node.child_by_field_id(function_id)
            found = self._callee(function, source) if function is not None else None
            if found is not None:
                name, receiver = found
                append(
                    (
                        node.start_byte,
                        -node.end_byte,
                        line_of(name),
                        node_text(name, source),
                        receiver,
                    )
                )

    def macro_calls(self, nodes: list[Node], source: bytes, out: Collected) -> None:
        for node in nodes:
            macro = node.child_by_field_id(self.f.macro)
            found = self._callee(macro, source) if macro is not None else None
            if found is not None:
                name, receiver = found
                out.calls.append(
                    (
                        node.start_byte,
                        -node.end_byte,
                        line_of(name),
                        node_text(name, source) + "!",
                        receiver,
                    )
                )
            for child in node.named_children:
                if child.type == "token_tree":
                    _token_tree_calls(child, source, out)


_CHAIN_SEPARATORS = frozenset({".", "::"})
_CHAIN_LINKS = frozenset({"identifier", "self", "super", "crate", "token_tree"})


def _token_tree_calls(tree: Node, source: bytes, out: Collected) -> None:
    """Calls inside a macro's unparsed arguments: `name(...)` and `name!(...)`.

    The grammar leaves macro arguments as flat tokens, so a call is recognised by shape:
    an identifier followed by a parenthesised group (or by `!` and a group), with the
    receiver read back over `.` / `::` links.
    """
    children = tree.children
    count = len(children)
    for i, child in enumerate(children):
        kind = child.type
        if kind == "token_tree":
            _token_tree_calls(child, source, out)
            continue
        if kind != "identifier" or i + 1 >= count:
            continue
        following = children[i + 1]
        if following.type == "token_tree" and source[following.start_byte] == 0x28:  # "("
            callee = node_text(child, source)
        elif following.type == "!" and i + 2 < count and children[i + 2].type == "token_tree":
            callee = node_text(child, source) + "!"
        else:
            continue
        first = i
        separator = i - 1
        while separator >= 1 and children[separator].type in _CHAIN_SEPARATORS:
            link = separator - 1
            if children[link].type not in _CHAIN_LINKS:
                break
            if (
                children[link].type == "token_tree"
                and link
                and children[link - 1].type == "identifier"
            ):
                link -= 1  # a call in the chain: `a.b().c()`
            first = link
            separator = link - 1
        receiver = ""
        if first < i:
            receiver = collapse(
                source, children[first].start_byte, children[i - 1].start_byte, RECEIVER_MAX
            )
        out.calls.append((child.start_byte, -following.end_byte, line_of(child), callee, receiver))


def _path(node: Node, source: bytes) -> str:
    return "".join(node_text(node, source).split())


def _join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    return f"{prefix}::{path}" if path else prefix


def _leaf(full: str, alias: str, node: Node, out: Collected) -> None:
    """`a::b::c` imports `c` from `a::b`; `a::b::self` and a bare `a` import a module."""
    module, _, name = full.rpartition("::")
    if name == "self":
        out.add_import(node, module, "", alias)
    elif not module:
        out.add_import(node, name, "", alias)
    else:
        out.add_import(node, module, name, alias)


RUST = compile_spec(
    "rust",
    "rust",
    tree_sitter_rust.language(),
    QUERY,
    lambda language: _Rust(language).handlers(),
    method_scopes=frozenset({"impl", "trait"}),
)
