"""Attributing calls to their innermost enclosing definition, across languages."""

from __future__ import annotations

from codegraph.extractor import extract


def callers(name: str, source: str) -> list[tuple[str, str, int]]:
    """(callee, caller, line) of every call, in document order."""
    return [(c.callee, c.caller, c.line) for c in extract(name, source.encode()).calls]


def test_python_lambdas_and_comprehensions_belong_to_the_enclosing_function() -> None:
    source = """\
class Report:
    rows = build()

    def render(self, items):
        key = lambda item: weigh(item)
        return [fmt(i) for i in sorted(items, key=key)]

run(Report().render([]))
"""
    assert callers("r.py", source) == [
        ("build", "Report", 2),
        ("weigh", "Report.render", 5),
        ("fmt", "Report.render", 6),
        ("sorted", "Report.render", 6),
        ("run", "", 8),
        ("render", "", 8),
        ("Report", "", 8),
    ]


def test_a_call_after_a_nested_definition_returns_to_the_outer_one() -> None:
    source = """\
def outer():
    def inner():
        first()
    second()
third()
"""
    assert callers("n.py", source) == [
        ("first", "outer.inner", 3),
        ("second", "outer", 4),
        ("third", "", 5),
    ]


def test_js_callbacks_belong_to_the_named_function_around_them() -> None:
    source = """\
function outer(items) {
  items.forEach((item) => {
    process(item);
  });
}
register(function () { anonymous(); });
"""
    assert callers("c.js", source) == [
        ("forEach", "outer", 2),
        ("process", "outer", 3),
        ("register", "", 6),
        ("anonymous", "", 6),
    ]


def test_go_function_literals_belong_to_the_enclosing_function() -> None:
    source = """\
package main

func main() {
	go func() {
		work()
	}()
	defer cleanup()
}
"""
    assert callers("m.go", source) == [("work", "main", 5), ("cleanup", "main", 7)]


def test_rust_closures_belong_to_the_enclosing_method() -> None:
    source = """\
struct S;
impl S {
    fn run(&self) {
        let f = |x| transform(x);
        f(1);
    }
}
"""
    assert callers("s.rs", source) == [("transform", "S.run", 4), ("f", "S.run", 5)]


def test_java_lambdas_belong_to_the_enclosing_method() -> None:
    source = """\
class A {
  void run(java.util.List<String> xs) {
    xs.forEach(x -> handle(x));
  }
}
"""
    assert callers("A.java", source) == [("forEach", "A.run", 3), ("handle", "A.run", 3)]
