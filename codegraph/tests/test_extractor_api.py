"""The extractor's public surface: language selection, records, version."""

from __future__ import annotations

import dataclasses

import pytest

from codegraph.extractor import (
    EXTRACTOR_VERSION,
    Call,
    Definition,
    FileIndex,
    Import,
    UnsupportedLanguageError,
    extract,
    language_for,
    supported_extensions,
)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("app/views.py", "python"),
        ("stubs/x.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/app.mjs", "javascript"),
        ("web/app.cjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/api.ts", "typescript"),
        ("web/View.tsx", "typescript"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("UPPER/CASE.PY", "python"),
    ],
)
def test_language_for_picks_the_language_from_the_extension(path: str, language: str) -> None:
    assert language_for(path) == language


@pytest.mark.parametrize("path", ["README.md", "Makefile", "x.pyc", "a.py.bak", "py", ".py/x"])
def test_language_for_returns_none_for_other_files(path: str) -> None:
    assert language_for(path) is None


def test_extract_refuses_an_unsupported_file() -> None:
    with pytest.raises(UnsupportedLanguageError, match=r"notes\.txt"):
        extract("notes.txt", b"def f(): pass")
    assert issubclass(UnsupportedLanguageError, ValueError)


def test_tsx_and_jsx_parse_jsx() -> None:
    source = b"export const A = () => <div>{go()}</div>;\n"
    for name in ("a.tsx", "a.jsx"):
        index = extract(name, source)
        assert index.has_errors is False, name
        assert [(c.callee, c.caller) for c in index.calls] == [("go", "A")]
    # Plain .ts does not accept JSX.
    assert extract("a.ts", source).has_errors is True


def test_supported_extensions_match_language_for() -> None:
    extensions = supported_extensions()
    assert {".py", ".js", ".ts", ".tsx", ".go", ".rs", ".java"} <= extensions
    assert all(language_for("f" + extension) for extension in extensions)


def test_records_are_frozen_slotted_dataclasses() -> None:
    for record in (Definition, Import, Call, FileIndex):
        assert dataclasses.is_dataclass(record)
        assert record.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert "__slots__" in record.__dict__
    call = Call("save", "self.repo", "Cart.checkout", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.line = 4  # type: ignore[misc]
    assert {call, Call("save", "self.repo", "Cart.checkout", 3)} == {call}


def test_extractor_version_is_a_positive_int() -> None:
    assert isinstance(EXTRACTOR_VERSION, int)
    assert EXTRACTOR_VERSION >= 1


def test_the_same_input_gives_the_same_index_across_languages() -> None:
    source = b"def f():\n    g()\n"
    assert extract("a.py", source) == extract("b.py", source)


def test_extraction_is_thread_safe() -> None:
    from concurrent.futures import ThreadPoolExecutor

    sources = [f"def f{i}():\n    g{i}()\n".encode() for i in range(200)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: extract("m.py", s), sources))
    for i, index in enumerate(results):
        assert index.definitions[0].name == f"f{i}"
        assert index.calls[0].callee == f"g{i}"
        assert index.calls[0].caller == f"f{i}"


def test_a_file_index_survives_pickling_for_worker_processes() -> None:
    import pickle

    index = extract("p.py", b"import os as o\n\nclass A:\n    def m(self):\n        o.go()\n")
    restored = pickle.loads(pickle.dumps(index))
    assert restored == index
    assert restored.definitions[1] == Definition("m", "A.m", "method", 4, 5, "def m(self)")
    assert restored.imports == (Import("os", "", "o", 1),)
    assert restored.calls == (Call("go", "o", "A.m", 5),)


def test_signatures_and_receivers_are_capped() -> None:
    items = ", ".join(str(i) for i in range(5000))
    receiver = ".".join(f"part{i}" for i in range(100))
    source = f"TABLE = [{items}]\n{receiver}.call()\n".encode()
    index = extract("big.py", source)
    (table,) = index.definitions
    assert len(table.signature) <= 200
    assert table.signature.startswith("TABLE = [0, 1, 2")
    assert table.signature.endswith("…")
    (call,) = index.calls
    assert call.callee == "call"
    assert len(call.receiver) <= 120
    assert call.receiver.startswith("part0.part1.")
