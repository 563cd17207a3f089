"""Queries: symbol search modes, alias-aware callers, imports and importers."""

import pytest

from codegraph import selectors, services
from codegraph.extractor import modules
from codegraph.models import CodeProject
from teams.services import Actor

from . import test_scan as scan_helpers

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(owner, tmp_path, settings) -> CodeProject:
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(
        root,
        {
            **scan_helpers.PKG,
            "shop/camel.py": "class OrderRepo:\n    def getQueryset(self):\n        pass\n",
        },
    )
    p = services.code_project_register(actor=Actor(user=owner), name="shop", path=str(root))
    services.code_project_scan(project_id=p.pk)
    return p


def lines(hits) -> list[str]:
    return [hit.as_line() for hit in hits]


def test_callers_follow_aliases_modules_and_relative_imports(owner, project):
    result = selectors.symbol_callers(user=owner, symbol="shop.auth.login")
    assert result.targets == ["shop.auth.login"]
    found = {(c.path, c.line) for c in result.calls}
    assert found == {
        ("shop/auth.py", 5),  # inside the defining module
        ("shop/views.py", 7),  # auth_login(...) through an alias
        ("shop/views.py", 8),  # auth.login(...) through the module
        ("shop/views.py", 13),  # login(...) from a relative import
        ("shop/mixed.py", 5),  # shop.auth.login(...) fully dotted
        ("shop/mixed.py", 6),  # sa.login(...) through a module alias
    }


def test_callers_ignore_same_named_methods_and_other_functions(owner, project):
    calls = selectors.symbol_callers(user=owner, symbol="shop.auth.login").calls
    assert not any(c.receiver in ("self.client", "other") for c in calls)
    assert not any(c.path == "shop/unrelated.py" for c in calls)


def test_a_bare_name_stands_for_each_definition(owner, project):
    result = selectors.symbol_callers(user=owner, symbol="login")
    assert "shop.auth.login" in result.targets and "shop.unrelated.login" in result.targets
    assert ("shop/unrelated.py", 5) in {(c.path, c.line) for c in result.calls}


def test_call_lines_name_the_caller(owner, project):
    text = lines(selectors.symbol_callers(user=owner, symbol="shop.auth.login").calls)
    assert "call auth_login() in LoginView.post — shop/views.py:7" in text


def test_symbol_search_modes(owner, project):
    assert lines(selectors.symbol_find(user=owner, query="relogin", mode="exact")) == [
        "function relogin — shop/auth.py:4"
    ]
    # Prefixes ignore case, as a person typing expects.
    assert {h.name for h in selectors.symbol_find(user=owner, query="log", mode="prefix")} == {
        "login",
        "LoginView",
    }
    fuzzy = selectors.symbol_find(user=owner, query="get_queryset", mode="fuzzy")
    assert fuzzy[0].qualified_name == "OrderRepo.getQueryset"
    # Substring matches come after the ranked words.
    assert "relogin" in {h.name for h in selectors.symbol_find(user=owner, query="elogi")}
    assert lines(
        selectors.symbol_find(user=owner, query="OrderRepo.getQueryset", mode="exact")
    ) == ["method OrderRepo.getQueryset — shop/camel.py:2"]


def test_imports_and_importers_of_a_file(owner, project):
    result = selectors.file_imports(user=owner, file="shop/auth.py")
    importers = {(h.path, h.line) for h in result.importers}
    assert ("shop/views.py", 1) in importers and ("shop/views.py", 3) in importers
    views = selectors.file_imports(user=owner, file="shop.views")  # by module name
    assert {h.target_path for h in views.imports} == {"shop/auth.py"}


def test_a_new_file_becomes_an_importer_on_rescan(owner, project, tmp_path):
    (tmp_path / "src/shop/late.py").write_text("from shop import auth\n")
    services.code_project_scan(project_id=project.pk)
    result = selectors.file_imports(user=owner, file="shop/auth.py")
    assert "shop/late.py" in {h.path for h in result.importers}


def test_relative_imports_resolve(owner, project):
    assert (
        modules.absolute_python_module("..x", importer_module="a.b.c", importer_is_package=False)
        == "a.x"
    )
    assert (
        modules.absolute_python_module(".", importer_module="a.b", importer_is_package=True)
        == "a.b"
    )


def test_callers_of_a_method_count_class_calls_and_self_calls(owner, tmp_path, project):
    (tmp_path / "src/shop/camel.py").write_text(
        "class OrderRepo:\n"
        "    def getQueryset(self):\n"
        "        pass\n"
        "\n"
        "    def all(self):\n"
        "        return self.getQueryset()\n"
    )
    (tmp_path / "src/shop/use.py").write_text(
        "from shop.camel import OrderRepo as Repo\n\nRepo.getQueryset(None)\nother.getQueryset()\n"
    )
    services.code_project_scan(project_id=project.pk)
    calls = selectors.symbol_callers(user=owner, symbol="shop.camel.OrderRepo.getQueryset").calls
    assert {(c.path, c.line) for c in calls} == {("shop/camel.py", 6), ("shop/use.py", 3)}
