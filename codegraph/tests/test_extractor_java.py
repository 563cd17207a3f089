"""Java extraction, checked against a small package."""

from __future__ import annotations

from codegraph.extractor import Call, FileIndex, Import

from .extraction import by_qualified_name, line_with, load_fixture


def load() -> tuple[FileIndex, str]:
    return load_fixture("java/com/example/shop/Shop.java")


def test_types_nest_and_members_are_qualified() -> None:
    index, text = load()
    assert (index.language, index.has_errors) == ("java", False)
    found = by_qualified_name(index)
    assert found["Shop"].kind == "class"
    assert found["Shop"].line == line_with(text, "public class Shop")
    assert found["Shop"].signature == "public class Shop extends Base implements Named"
    assert found["Shop.Cart"].kind == "class"
    assert found["Shop.Cart.State"].kind == "enum"
    assert found["Shop.Cart.State.isOpen"].kind == "method"
    assert found["Shop.Listener"].kind == "interface"
    assert found["Shop.Listener.changed"].kind == "method"
    assert found["Shop.Line"].kind == "record"
    assert found["Shop.Shop"].kind == "constructor"


def test_annotated_multi_line_methods_keep_their_name_line() -> None:
    index, text = load()
    find = by_qualified_name(index)["Shop.find"]
    assert find.kind == "method"
    assert find.line == line_with(text, "public <T extends Item> List<T> find(")
    assert find.end_line == line_with(text, "return new ArrayList<>(found);") + 1
    assert find.signature == (
        "public <T extends Item> List<T> find(String name, int limit) throws NotFound"
    )


def test_static_final_fields_and_interface_fields_are_constants() -> None:
    index, _ = load()
    found = by_qualified_name(index)
    assert found["Shop.MAX_ITEMS"].kind == "constant"
    assert found["Shop.MIN_ITEMS"].kind == "constant"
    assert found["Shop.Listener.PRIORITY"].kind == "constant"
    assert "Shop.repo" not in found
    assert "Shop.sql" not in found


def test_comments_javadoc_and_strings_hold_no_definitions_or_calls() -> None:
    index, _ = load()
    names = {d.name for d in index.definitions}
    assert not names & {"commented", "inString", "inJavadoc"}
    assert "nope" not in {c.callee for c in index.calls}


def test_imports_static_and_wildcard() -> None:
    index, _ = load()
    assert index.imports == (
        Import("java.util", "List", "", 3),
        Import("java.util", "*", "", 4),
        Import("java.util.Objects", "requireNonNull", "", 5),
    )


def test_calls_constructors_and_anonymous_classes() -> None:
    index, text = load()
    calls = set(index.calls)
    assert Call("requireNonNull", "", "Shop.Shop", line_with(text, "requireNonNull(repo)")) in calls
    assert Call("search", "this.repo", "Shop.find", line_with(text, "this.repo.search")) in calls
    assert Call("ArrayList", "", "Shop.find", line_with(text, "new ArrayList<>")) in calls
    assert Call("Runnable", "", "Shop.Cart.clear", line_with(text, "new Runnable()")) in calls
    # A method of an anonymous class is scoped under the method that creates it.
    assert Call("reset", "", "Shop.Cart.clear.run", line_with(text, "reset();")) in calls
