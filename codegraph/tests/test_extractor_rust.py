"""Rust extraction, checked against a small crate."""

from __future__ import annotations

from codegraph.extractor import Call, FileIndex, Import

from .extraction import by_qualified_name, line_with, load_fixture


def load() -> tuple[FileIndex, str]:
    return load_fixture("rust/src/lib.rs")


def test_items_get_their_rust_kinds() -> None:
    index, text = load()
    assert (index.language, index.has_errors) == ("rust", False)
    found = by_qualified_name(index)
    kinds = {name: found[name].kind for name in ("Store", "Pair", "Kind", "Named", "Map")}
    assert kinds == {
        "Store": "struct",
        "Pair": "struct",
        "Kind": "enum",
        "Named": "trait",
        "Map": "type",
    }
    assert found["GREETING"].kind == "constant"
    assert found["COUNTER"].kind == "static"
    assert found["util"].kind == "module"
    assert found["square"].kind == "macro"
    assert found["square"].signature == "macro_rules! square"
    # The attribute above the struct does not move it.
    assert found["Store"].line == line_with(text, "pub struct Store<K>")
    assert found["Pair"].signature == "pub struct Pair(u8, u8)"


def test_impl_and_trait_functions_are_methods_of_the_type() -> None:
    index, text = load()
    found = by_qualified_name(index)
    insert = found["Store.insert"]
    assert insert.kind == "method"
    assert insert.line == line_with(text, "pub fn insert(")
    assert insert.signature == "pub fn insert(&mut self, key: K, value: String) -> Option<String>"
    assert found["Store.new"].kind == "method"
    # `impl Display for Pair` scopes its methods under Pair.
    assert found["Pair.fmt"].kind == "method"
    assert found["Named.name"].signature == "fn name(&self) -> String"
    assert found["Named.shout"].kind == "method"
    assert found["util.describe"].kind == "function"
    # impl blocks only scope: they are not definitions of their own.
    assert not [d for d in index.definitions if d.kind == "impl"]


def test_comments_and_strings_hold_no_definitions_or_calls() -> None:
    index, _ = load()
    names = {d.name for d in index.definitions}
    assert not names & {"commented", "in_string", "in_doc_comment"}
    assert "nope" not in {c.callee for c in index.calls}


def test_multi_line_use_trees_are_flattened() -> None:
    index, text = load()
    fmt_line = line_with(text, "use std::fmt::")
    assert index.imports == (
        Import("std::collections", "HashMap", "", line_with(text, "    HashMap,")),
        Import("std::collections::hash_map", "Entry", "MapEntry", line_with(text, "MapEntry,")),
        Import("std::fmt", "", "", fmt_line),
        Import("std::fmt", "Display", "", fmt_line),
        Import("crate::util", "*", "", line_with(text, "use crate::util::*")),
        Import("serde", "", "sd", line_with(text, "extern crate")),
    )


def test_calls_paths_macros_and_calls_inside_macro_arguments() -> None:
    index, text = load()
    calls = set(index.calls)
    insert_line = line_with(text, "self.items.insert(key, value)")
    assert Call("insert", "self.items", "Store.insert", insert_line) in calls
    assert Call("new", "HashMap", "Store.new", line_with(text, "HashMap::new()")) in calls
    debug_line = line_with(text, "log::debug!")
    assert Call("debug!", "log", "Store.insert", debug_line) in calls
    assert Call("describe", "", "Store.insert", debug_line) in calls
    assert Call("write!", "", "Pair.fmt", line_with(text, "write!(f")) in calls
    assert Call("to_uppercase", "self.name()", "Named.shout", line_with(text, "to_uppercase")) in (
        calls
    )
