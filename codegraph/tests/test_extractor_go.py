"""Go extraction, checked against the `store` fixture package."""

from __future__ import annotations

from codegraph.extractor import Call, FileIndex, Import

from .extraction import by_qualified_name, line_with, load_fixture


def load() -> tuple[FileIndex, str]:
    return load_fixture("go/store/store.go")


def test_methods_are_qualified_by_their_receiver_type() -> None:
    index, text = load()
    assert (index.language, index.has_errors) == ("go", False)
    found = by_qualified_name(index)
    get = found["Store.Get"]
    assert (get.name, get.kind) == ("Get", "method")
    assert get.line == line_with(text, "func (s *Store[K]) Get(")
    assert get.end_line == line_with(text, "return ToUpper(v), nil") + 1
    assert get.signature == "func (s *Store[K]) Get(ctx context.Context, key K) (string, error)"
    assert found["Store.Len"].kind == "method"
    assert found["New"].kind == "function"
    assert found["New"].signature == "func New() *Store[string]"


def test_structs_interfaces_and_type_aliases() -> None:
    index, text = load()
    found = by_qualified_name(index)
    assert found["Store"].kind == "struct"
    assert found["Store"].signature == "type Store[K comparable] struct"
    assert found["Getter"].kind == "interface"
    assert found["Getter.Get"].kind == "method"
    assert found["Getter.Len"].line == line_with(text, "\tLen() int")
    assert found["ID"].kind == "type"
    assert found["ID"].signature == "type ID = string"


def test_package_level_constants_and_variables() -> None:
    index, text = load()
    found = by_qualified_name(index)
    assert found["MaxItems"].kind == "constant"
    assert found["MaxItems"].signature == "const MaxItems = 50"
    assert found["minItems"].line == line_with(text, "minItems")
    assert found["query"].kind == "constant"
    assert found["ErrMissing"].kind == "variable"
    # Function-local variables are not definitions.
    assert "helper" not in found


def test_comments_and_strings_hold_no_definitions_or_calls() -> None:
    index, _ = load()
    assert not {"Commented", "InString"} & {d.name for d in index.definitions}
    assert "nope" not in {c.callee for c in index.calls}


def test_import_specs_with_aliases_dot_and_blank() -> None:
    index, text = load()
    assert index.imports == (
        Import("context", "", "", line_with(text, '"context"')),
        Import("fmt", "", "f", line_with(text, 'f "fmt"')),
        Import("embed", "", "_", line_with(text, '_ "embed"')),
        Import("strings", "", ".", line_with(text, '. "strings"')),
        Import("errors", "", "", line_with(text, 'import "errors"')),
    )


def test_calls_with_receivers_and_callers() -> None:
    index, text = load()
    assert Call("Errorf", "f", "Store.Get", line_with(text, "f.Errorf")) in index.calls
    assert Call("ToUpper", "", "Store.Get", line_with(text, "ToUpper(v)")) in index.calls
    assert Call("helper", "", "Store.Len", line_with(text, "return helper()")) in index.calls
    assert Call("New", "errors", "ErrMissing", line_with(text, "errors.New")) in index.calls
