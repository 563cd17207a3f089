"""The codegraph_query tool text and the codegraph_scan / codegraph_query commands."""

import pytest
from django.core.management import CommandError, call_command

from codegraph import services
from codegraph.models import CodeProject
from codegraph.tools import codegraph_query
from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from teams.services import Actor

from . import test_scan as scan_helpers

pytestmark = pytest.mark.django_db


@pytest.fixture
def tree(tmp_path, settings):
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    return root


@pytest.fixture
def project(owner, tree) -> CodeProject:
    p = services.code_project_register(actor=Actor(user=owner), name="shop", path=str(tree))
    services.code_project_scan(project_id=p.pk)
    return p


def test_the_tool_lists_symbols_exact_names_first(owner, project):
    text = codegraph_query(actor=Actor(user=owner), query="login").text
    first, *rest = text.splitlines()
    assert first in ("function login — shop/auth.py:1", "function login — shop/unrelated.py:1")
    assert "class LoginView — shop/views.py:5" in rest


def test_the_tool_lists_callers(owner, project):
    answer = codegraph_query(actor=Actor(user=owner), query="shop.auth.login", callers=True)
    assert len(answer.data["calls"]) == 6 and answer.data["targets"] == ["shop.auth.login"]
    lines = answer.text.splitlines()
    assert lines[0] == "6 call(s) of shop.auth.login:"
    assert "call auth.login() in LoginView.post — shop/views.py:8" in lines


def test_the_tool_says_when_nothing_matches_and_refuses_outsider(owner, outsider, project):
    nothing = codegraph_query(actor=Actor(user=owner), query="zzzz")
    assert (nothing.text, nothing.data["symbols"]) == ("No symbols match 'zzzz'.", [])
    assert codegraph_query(actor=Actor(user=outsider), query="login").text == (
        "No symbols match 'login'."
    )
    with pytest.raises(NotFound, match="No code project 'shop'"):
        codegraph_query(actor=Actor(user=outsider), query="login", project="shop")


def test_the_tool_checks_its_arguments_and_the_token_scope(owner, project, make_token):
    with pytest.raises(InvalidInput, match="limit"):
        codegraph_query(actor=Actor(user=owner), query="login", limit=0)
    token, _ = make_token(owner, scopes=("write",))
    with pytest.raises(Forbidden, match="'read' scope"):
        codegraph_query(actor=Actor(user=owner, token=token), query="login")
    assert codegraph_query.read_only and codegraph_query.idempotent
    assert codegraph_query.input_schema()["properties"]["query"]["type"] == "string"


def test_scan_and_query_commands(owner, tree, capsys):
    call_command("codegraph_scan", str(tree), "--name", "cli", "--user", "alice")
    out, err = capsys.readouterr()
    assert "cli: 5 files (5 parsed" in out
    assert "5/5" in err  # the progress bar
    call_command(
        "codegraph_query", "shop.auth.login", "--callers", "--project", "cli", "--user", "alice"
    )
    assert "shop/views.py:7" in capsys.readouterr().out
    call_command("codegraph_query", "relogin", "--user", "alice")
    assert capsys.readouterr().out.strip() == "function relogin — shop/auth.py:4"


def test_the_scan_command_refuses_a_bad_folder(owner, tree):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("codegraph_scan", str(tree / "nope"), "--name", "x", "--user", "alice")
    with pytest.raises(CommandError, match="No user"):
        call_command("codegraph_scan", str(tree), "--name", "x", "--user", "nobody")
