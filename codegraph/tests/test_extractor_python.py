"""Python extraction, checked against the `shop` fixture package."""

from __future__ import annotations

from codegraph.extractor import Call, FileIndex, Import, extract

from .extraction import by_qualified_name, line_with, load_fixture


def load(name: str) -> tuple[FileIndex, str]:
    return load_fixture(f"python/shop/{name}")


def test_it_reports_the_language_and_no_errors_for_valid_code() -> None:
    index, _ = load("models.py")
    assert index.language == "python"
    assert index.has_errors is False


def test_nested_classes_get_dotted_qualified_names_and_methods_their_kind() -> None:
    index, text = load("models.py")
    found = by_qualified_name(index)
    assert found["Item"].kind == "class"
    assert found["Item.Meta"].kind == "class"
    options = found["Item.Meta.Options"]
    assert (options.kind, options.line) == ("class", line_with(text, "class Options:"))
    describe = found["Item.Meta.Options.describe"]
    assert (describe.name, describe.kind) == ("describe", "method")
    assert describe.line == line_with(text, "def describe(self):")
    assert describe.end_line == line_with(text, 'return "options"')


def test_module_functions_are_functions_and_nested_functions_stay_functions() -> None:
    index, text = load("models.py")
    found = by_qualified_name(index)
    assert found["money"].kind == "function"
    assert found["money"].line == line_with(text, "def money(value):")
    fetch = found["fetch_items"]
    assert fetch.kind == "function"
    assert fetch.signature == "async def fetch_items(client, *ids)"
    decode = found["fetch_items.decode"]
    assert (decode.name, decode.kind) == ("decode", "function")


def test_decorated_definitions_are_reported_on_their_def_line() -> None:
    index, text = load("models.py")
    found = by_qualified_name(index)
    assert found["Item"].line == line_with(text, "class Item:")
    assert found["Item.total"].line == line_with(text, "def total(self):")
    parse = found["Item.parse"]
    assert parse.kind == "method"
    assert parse.line == line_with(text, "def parse(")
    assert parse.end_line == line_with(text, "return Item(name, money(price))")


def test_a_multi_line_signature_is_collapsed_to_one_line_without_the_colon() -> None:
    index, _ = load("models.py")
    parse = by_qualified_name(index)["Item.parse"]
    assert parse.signature == 'def parse(text: str, *, strict: bool = False) -> "Item"'
    assert by_qualified_name(index)["Item"].signature == "class Item"


def test_upper_case_module_assignments_are_constants_and_others_are_not() -> None:
    index, text = load("models.py")
    found = by_qualified_name(index)
    assert found["TAX_RATE"].kind == "constant"
    assert found["TAX_RATE"].line == line_with(text, "TAX_RATE =")
    assert found["TAX_RATE"].signature == 'TAX_RATE = Decimal("0.2")'
    assert "default_currency" not in found
    assert "Item.Meta.ordering" not in found


def test_definitions_in_docstrings_strings_and_comments_do_not_count() -> None:
    models, _ = load("models.py")
    services, _ = load("services.py")
    names = {d.name for d in models.definitions + services.definitions}
    assert "not_a_function_in_a_docstring" not in names
    assert "NotAClassEither" not in names
    assert "fake" not in names


def test_calls_in_strings_comments_and_docstrings_do_not_count() -> None:
    models, _ = load("models.py")
    services, _ = load("services.py")
    callees = {call.callee for call in models.calls + services.calls}
    assert "fake_call_in_a_comment" not in callees
    assert "charge" not in callees
    assert "fake" not in callees
    assert not [c for c in services.calls if c.callee == "make_service"]


def test_imports_keep_aliases_relative_dots_and_multi_line_names() -> None:
    index, text = load("services.py")
    assert index.imports == (
        Import(".", "models", "", line_with(text, "from . import models")),
        Import(".models", "Item", "", line_with(text, "    Item,")),
        Import(".models", "money", "to_money", line_with(text, "money as to_money")),
        Import("..payments.gateway", "charge", "pay", line_with(text, "charge as pay")),
        Import("logging", "", "", line_with(text, "import logging")),
        Import("os.path", "", "osp", line_with(text, "import logging")),
        Import("..shared", "*", "", line_with(text, "from ..shared import *")),
    )


def test_future_and_aliased_module_imports() -> None:
    index, _ = load("models.py")
    assert [(i.module, i.name, i.alias) for i in index.imports] == [
        ("__future__", "annotations", ""),
        ("dataclasses", "", "dc"),
        ("functools", "", ""),
        ("decimal", "Decimal", ""),
    ]


def test_calls_carry_callee_receiver_and_enclosing_caller() -> None:
    index, text = load("services.py")
    checkout = [c for c in index.calls if c.caller == "CartService.checkout"]
    assert checkout == [
        Call("sum", "", "CartService.checkout", line_with(text, "total = sum(")),
        Call("pay", "", "CartService.checkout", line_with(text, "pay(total)")),
        Call("save", "self.repo", "CartService.checkout", line_with(text, "self.repo.save")),
        Call("info", "log", "CartService.checkout", line_with(text, "log.info")),
        Call("to_money", "", "CartService.checkout", line_with(text, "return to_money")),
    ]
    assert Call("getLogger", "logging", "", line_with(text, "getLogger")) in index.calls
    assert Call("CartService", "", "make_service", line_with(text, "return CartService(")) in (
        index.calls
    )


def test_calls_in_nested_functions_decorators_and_initialisers() -> None:
    index, text = load("models.py")
    assert Call("parse", "Item", "fetch_items.decode", line_with(text, "Item.parse(raw)")) in (
        index.calls
    )
    # A decorator runs in the class body: its call belongs to the class.
    assert Call("lru_cache", "functools", "Item", line_with(text, "lru_cache")) in index.calls
    assert Call("Decimal", "", "TAX_RATE", line_with(text, "TAX_RATE =")) in index.calls
    quantize = next(c for c in index.calls if c.callee == "quantize")
    assert (quantize.receiver, quantize.caller) == ("Decimal(value)", "money")


def test_a_syntax_error_is_flagged_and_the_rest_still_indexed() -> None:
    source = b"""\
def before():
    ok()

def broken(:
    pass

class After:
    def method(self):
        later()
"""
    index = extract("broken.py", source)
    assert index.has_errors is True
    found = by_qualified_name(index)
    assert found["before"].kind == "function"
    assert found["After.method"].kind == "method"
    assert found["After.method"].line == 8
    assert Call("ok", "", "before", 2) in index.calls
    assert Call("later", "", "After.method", 9) in index.calls


def test_an_unterminated_string_is_flagged_without_raising() -> None:
    index = extract("x.py", b'def f():\n    return "oops\n')
    assert index.has_errors is True


def test_an_empty_file_gives_an_empty_index() -> None:
    assert extract("empty.py", b"") == FileIndex("python", (), (), (), False)


def test_non_ascii_names_and_text_keep_their_characters() -> None:
    source = "def grüße(名前):\n    return drucken('é')\n".encode()
    index = extract("u.py", source)
    assert index.definitions[0].name == "grüße"
    assert index.definitions[0].signature == "def grüße(名前)"
    assert index.calls == (Call("drucken", "", "grüße", 2),)
