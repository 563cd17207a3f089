"""Language-independent machinery.

Each language declares one tree-sitter query and a handler per capture name. One query
pass per file finds every interesting node in C; the handlers read only those nodes
(in batches, to keep Python calls few), and a single sweep over byte ranges nests the
definitions and attributes every call to its innermost enclosing definition.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from .model import CallRow, DefinitionRow, FileRows, ImportRow

SIGNATURE_MAX = 200
RECEIVER_MAX = 120


class RawDef(NamedTuple):
    """A definition before nesting.

    Tuples sort by (start, neg_end): an outer definition sorts before an inner one
    that starts at the same byte. A non-empty `qualifier` replaces the enclosing
    definition in the qualified name (Go methods, Rust impl blocks); `emit` is false for
    nodes that only scope their children (a Rust `impl`).
    """

    start: int
    neg_end: int
    name: str
    line: int
    end_line: int
    kind: str
    signature: str
    qualifier: str = ""
    emit: bool = True


# (start byte, -end byte, line, callee, receiver): sorting puts calls in document order,
# an outer call before the inner one that starts at the same byte (`a().b()`).
RawCall = tuple[int, int, int, str, str]


@dataclass(slots=True)
class Collected:
    """What the handlers of one file gather."""

    definitions: list[RawDef] = field(default_factory=list)
    calls: list[RawCall] = field(default_factory=list)
    # (start byte, import): kept in source order whatever order handlers run in.
    imports: list[tuple[int, ImportRow]] = field(default_factory=list)

    def add_import(self, node: Node, module: str, name: str, alias: str) -> None:
        """Record an import reported at `node`'s position."""
        self.imports.append((node.start_byte, (module, name, alias, node.start_point[0] + 1)))


Handler = Callable[[list[Node], bytes, Collected], None]


@dataclass(slots=True)
class LanguageSpec:
    """How to index one grammar: its query and a handler for each capture name.

    `key` names the grammar (tsx and typescript differ), `name` is the language
    reported to users. `method_scopes` are the definition kinds whose directly nested
    `function` definitions are reported as `method`.
    """

    key: str
    name: str
    language: Language
    query: Query
    handlers: dict[str, Handler]
    method_scopes: frozenset[str] = frozenset()


def compile_spec(
    key: str,
    name: str,
    grammar: object,
    query: str,
    make_handlers: Callable[[Language], dict[str, Handler]],
    method_scopes: frozenset[str] = frozenset(),
) -> LanguageSpec:
    """Build a LanguageSpec, checking that every capture of the query has a handler.

    `make_handlers` gets the loaded grammar, so handlers can resolve field ids (which
    differ between grammars, even related ones like typescript and tsx).
    """
    language = Language(grammar)
    compiled = Query(language, query)
    handlers = make_handlers(language)
    captures = {compiled.capture_name(i) for i in range(compiled.capture_count)}
    missing = captures - handlers.keys()
    if missing:
        raise ValueError(f"{key}: no handler for captures {sorted(missing)}")
    return LanguageSpec(key, name, language, compiled, handlers, method_scopes)


_local = threading.local()


def _tools(spec: LanguageSpec) -> tuple[Parser, QueryCursor]:
    # Parsers and query cursors hold mutable state, so each thread gets its own.
    cache: dict[str, tuple[Parser, QueryCursor]] | None = getattr(_local, "tools", None)
    if cache is None:
        cache = _local.tools = {}
    tools = cache.get(spec.key)
    if tools is None:
        tools = cache[spec.key] = (Parser(spec.language), QueryCursor(spec.query))
    return tools


def node_text(node: Node, source: bytes) -> str:
    """The source text of a node."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def collapse(source: bytes, start: int, stop: int, limit: int) -> str:
    """Source between two byte offsets with whitespace collapsed, capped at `limit`."""
    # Cut before decoding so a huge literal is never copied in full.
    raw = source[start : min(stop, start + limit * 4)]
    if len(raw) <= limit and b" " not in raw and b"\n" not in raw and b"\t" not in raw:
        return raw.decode("utf-8", "replace")  # the common case: `self.repo`
    text = b" ".join(raw.split()).decode("utf-8", "replace")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


_OPEN_SPACE = re.compile(r"([(\[]) ")
_CLOSE_SPACE = re.compile(r",? ([)\]])")


def signature(source: bytes, start: int, stop: int, prefix: str = "") -> str:
    """A definition's header: `prefix` and the source from `start` up to `stop`."""
    text = prefix + collapse(source, start, stop, SIGNATURE_MAX - len(prefix)).rstrip(" {;")
    if source.find(b"\n", start, stop) >= 0:
        # A header written over several lines reads as if written on one:
        # `f( a, b, )` becomes `f(a, b)`.
        text = _CLOSE_SPACE.sub(r"\1", _OPEN_SPACE.sub(r"\1", text))
    return text


def receiver_text(node: Node | None, source: bytes) -> str:
    """Text of a call's receiver expression, collapsed and capped."""
    if node is None:
        return ""
    return collapse(source, node.start_byte, node.end_byte, RECEIVER_MAX)


def end_line(node: Node) -> int:
    """The 1-based last line of a node."""
    row, column = node.end_point
    # A node that ends at column 0 ends with the previous line's newline.
    return row + 1 if column or not row else row


def make_def(
    node: Node,
    name_node: Node,
    kind: str,
    source: bytes,
    header_end: int | None,
    *,
    header_start: int | None = None,
    name: str | None = None,
    qualifier: str = "",
    emit: bool = True,
    prefix: str = "",
) -> RawDef:
    """A RawDef spanning `node`, named and lined by `name_node`.

    The signature is `prefix` and the source from `header_start` (default: the node
    start) to `header_end` (default: the node end).
    """
    start = node.start_byte
    end = node.end_byte
    return RawDef(
        start,
        -end,
        node_text(name_node, source) if name is None else name,
        name_node.start_point[0] + 1,
        end_line(node),
        kind,
        signature(
            source,
            start if header_start is None else header_start,
            end if header_end is None else header_end,
            prefix,
        ),
        qualifier,
        emit,
    )


def run(spec: LanguageSpec, source: bytes) -> FileRows:
    """Parse `source` with `spec` and extract its definitions, imports and calls."""
    parser, cursor = _tools(spec)
    root = parser.parse(source).root_node
    collected = Collected()
    handlers = spec.handlers
    for capture, nodes in cursor.captures(root).items():
        handlers[capture](nodes, source, collected)
    definitions, calls = _assemble(collected, spec.method_scopes)
    imports = collected.imports
    imports.sort(key=_position)
    return FileRows(spec.name, definitions, [item for _, item in imports], calls, root.has_error)


def _position(item: tuple[int, ImportRow]) -> int:
    return item[0]


def _assemble(
    collected: Collected, method_scopes: frozenset[str]
) -> tuple[list[DefinitionRow], list[CallRow]]:
    """Nest definitions by byte range and attribute each call to its innermost one."""
    raw_defs = collected.definitions
    raw_defs.sort()
    definitions: list[DefinitionRow] = []
    # (start, end, qualified name) of every emitted definition, outer before inner:
    # only those can be callers.
    spans: list[tuple[int, int, str]] = []
    stack: list[tuple[int, int, str, str]] = []
    for start, neg_end, name, line, last, kind, header, qualifier, emit in raw_defs:
        # Pop what ended before this starts, and a sibling with the very same span
        # (Go's `const A, B = 1, 2` declares two names in one node).
        while stack and (stack[-1][1] <= start or stack[-1][:2] == (start, -neg_end)):
            stack.pop()
        if qualifier:
            qualified = f"{qualifier}.{name}"
        elif stack:
            _, _, parent, parent_kind = stack[-1]
            qualified = f"{parent}.{name}"
            if kind == "function" and parent_kind in method_scopes:
                kind = "method"
        else:
            qualified = name
        stack.append((start, -neg_end, qualified, kind))
        if emit:
            spans.append((start, -neg_end, qualified))
            definitions.append((name, qualified, kind, line, last, header))

    raw_calls = collected.calls
    raw_calls.sort()
    calls: list[CallRow] = []
    append = calls.append
    open_spans: list[tuple[int, int, str]] = []
    caller, caller_end = "", -1
    i, n = 0, len(spans)
    next_start = spans[0][0] if spans else -1
    for start, _, line, callee, receiver in raw_calls:
        if start >= caller_end or 0 <= next_start <= start:
            while i < n and spans[i][0] <= start:
                span = spans[i]
                while open_spans and open_spans[-1][1] <= span[0]:
                    open_spans.pop()
                open_spans.append(span)
                i += 1
            next_start = spans[i][0] if i < n else -1
            while open_spans and open_spans[-1][1] <= start:
                open_spans.pop()
            if open_spans:
                _, caller_end, caller = open_spans[-1]
            else:
                # At module level until the next definition starts.
                caller, caller_end = "", next_start if next_start >= 0 else 1 << 62
        append((callee, receiver, caller, line))
    return definitions, calls
