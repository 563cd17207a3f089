"""JavaScript, TypeScript and TSX extraction, checked against fixture files."""

from __future__ import annotations

from codegraph.extractor import Call, FileIndex, Import, extract

from .extraction import by_qualified_name, line_with, load_fixture


def load(relative: str) -> tuple[FileIndex, str]:
    return load_fixture(relative)


def test_js_classes_methods_fields_and_functions() -> None:
    index, text = load("javascript/app.js")
    assert index.language == "javascript"
    assert index.has_errors is False
    found = by_qualified_name(index)
    assert (found["Store"].kind, found["Store"].line) == ("class", line_with(text, "class Store"))
    assert found["Store"].signature == "class Store extends Base"
    assert found["Store.constructor"].kind == "method"
    assert found["Store.handler"].kind == "method"
    load_method = found["Store.load"]
    assert load_method.kind == "method"
    assert load_method.line == line_with(text, "async load(")
    assert load_method.end_line == line_with(text, "return lodash.cloneDeep(row);") + 1
    assert load_method.signature == "async load(id, options = {})"
    assert found["createStore"].kind == "function"
    assert found["ids"].signature == "function* ids()"
    assert found["MAX_ITEMS"].kind == "constant"


def test_js_object_literal_methods_are_qualified_by_the_variable() -> None:
    index, text = load("javascript/app.js")
    found = by_qualified_name(index)
    assert found["api.list"].kind == "method"
    assert found["api.remove"].line == line_with(text, "remove: (id)")
    assert "api" not in found


def test_js_strings_templates_and_comments_hold_no_definitions_or_calls() -> None:
    index, _ = load("javascript/app.js")
    names = {d.name for d in index.definitions}
    assert not names & {"commentedOut", "inString", "inTemplate", "InBlockComment", "m"}
    callees = {c.callee for c in index.calls}
    assert not callees & {"shouldNotCount", "nope"}
    # ...but code inside a template substitution is real code.
    assert "join" in callees


def test_js_imports_cover_import_export_from_and_require() -> None:
    index, text = load("javascript/app.js")
    assert index.imports == (
        Import("express", "default", "express", 2),
        Import("express", "Router", "R", 2),
        Import("express", "json", "", 2),
        Import("node:path", "*", "path", 3),
        Import("fs/promises", "readFile", "", line_with(text, "  readFile,")),
        Import("fs/promises", "writeFile", "save", line_with(text, "writeFile as save")),
        Import("./helpers.js", "helper", "publicHelper", line_with(text, "publicHelper")),
        Import("util", "promisify", "", line_with(text, 'require("util")')),
        Import("util", "inspect", "look", line_with(text, 'require("util")')),
        Import("lodash", "", "lodash", line_with(text, 'require("lodash")')),
    )


def test_js_calls_with_receivers_callers_and_constructors() -> None:
    index, text = load("javascript/app.js")
    calls = set(index.calls)
    assert Call("load", "this", "Store.handler", line_with(text, "this.load(")) in calls
    assert Call("query", "this.db", "Store.load", line_with(text, "this.db.query(")) in calls
    assert Call("cloneDeep", "lodash", "Store.load", line_with(text, "cloneDeep")) in calls
    assert Call("Store", "", "createStore", line_with(text, "new Store(db)")) in calls
    assert Call("fetchAll", "", "api.list", line_with(text, "fetchAll()")) in calls
    assert Call("del", "", "api.remove", line_with(text, "del(id)")) in calls
    assert Call("join", "path", "", line_with(text, "path.join")) in calls


def test_ts_interfaces_types_enums_namespaces_and_abstract_classes() -> None:
    index, text = load("typescript/service.ts")
    assert index.language == "typescript"
    found = by_qualified_name(index)
    assert found["Repository"].kind == "interface"
    assert found["Repository.find"].kind == "method"
    assert found["Id"].kind == "type"
    assert found["Id"].signature == "type Id = string | number"
    assert found["Color"].kind == "enum"
    assert found["Util.Strings"].kind == "namespace"
    assert found["Util.Strings.upper"].kind == "function"
    base = found["BaseService"]
    assert base.kind == "class"
    # The decorator above is neither the line nor part of the signature.
    assert base.line == line_with(text, "abstract class BaseService")
    assert base.signature == "abstract class BaseService<T> implements Repository<T>"
    assert found["BaseService.find"].kind == "method"
    assert found["BaseService.save"].line == line_with(text, "save(item: T): void {")


def test_ts_overload_signatures_are_each_a_definition() -> None:
    index, _ = load("typescript/service.ts")
    overloads = [d for d in index.definitions if d.name == "overload"]
    assert [d.signature for d in overloads] == [
        "function overload(a: string): string",
        "function overload(a: number): number",
        "function overload(a: any): any",
    ]


def test_ts_imports_include_type_only_and_import_require() -> None:
    index, _ = load("typescript/service.ts")
    assert index.imports == (
        Import("./http", "Request", "", 1),
        Import("fs", "", "fs", 2),
        Import("@core/di", "Injectable", "", 3),
    )


def test_ts_calls_and_comments() -> None:
    index, text = load("typescript/service.ts")
    calls = set(index.calls)
    assert Call("set", "this.cache", "BaseService.save", line_with(text, "this.cache.set")) in calls
    assert (
        Call("writeFileSync", "fs", "BaseService.save", line_with(text, "writeFileSync")) in calls
    )
    assert Call("Injectable", "", "", line_with(text, "@Injectable")) in calls
    assert "clear" not in {c.callee for c in index.calls}


def test_tsx_components_and_jsx_text() -> None:
    index, _ = load("typescript/view.tsx")
    assert index.language == "typescript"
    assert index.has_errors is False
    found = by_qualified_name(index)
    assert found["Counter"].kind == "function"
    assert found["Label"].kind == "function"
    callees = [(c.callee, c.caller) for c in index.calls]
    assert ("useState", "Counter") in callees
    assert ("format", "Counter") in callees
    assert ("trim", "Label") in callees
    # "call() in text" is JSX text, not code.
    assert "call" not in {c.callee for c in index.calls}
    assert index.imports[0] == Import("react", "default", "React", 1)


def test_js_dynamic_import_and_export_star() -> None:
    source = b'export * from "./all";\nexport * as ns from "./ns";\nimport("./lazy");\n'
    index = extract("m.mjs", source)
    assert index.imports == (
        Import("./all", "*", "", 1),
        Import("./ns", "*", "ns", 2),
        Import("./lazy", "", "", 3),
    )
