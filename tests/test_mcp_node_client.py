"""The tool registry over MCP with a second, independent client: the official TypeScript
SDK's, run with Node.js against a live server (``make test`` installs it from
``tests/mcp_node``'s lock file), in both the initialize handshake and the per-request
protocol. It checks each answer against the tool's output schema itself."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT
from facts.models import Fact
from memoryhub.engine.toolkit import tool_registry
from teams.models import AuditEvent
from teams.services import Actor, agent_token_revoke

pytestmark = pytest.mark.django_db(transaction=True)

NODE_CLIENT = REPO_ROOT / "tests" / "mcp_node"
PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def node_client(url: str, secret: str, mode: str, calls: list) -> dict:
    """What the TypeScript client reports of a session: the protocol it spoke, the tools
    listed and each call's outcome, or the error that stopped it."""
    node = shutil.which("node")
    if node is None or not (NODE_CLIENT / "node_modules" / "@modelcontextprotocol").is_dir():
        message = "The Node.js MCP client is not installed (npm ci --prefix tests/mcp_node)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    done = subprocess.run(
        [node, "mcp_client.mjs", f"{url}/mcp", mode, json.dumps(calls)],
        cwd=NODE_CLIENT,
        env={"PATH": os.environ.get("PATH", ""), "MEMORYHUB_TOKEN": secret},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_typescript_client_lists_tools_recalls_and_writes(
    live_server, owner, make_token, remember, mode
):
    remember(owner, "The staging database is db-stage-2")
    _, secret = make_token(owner)
    calls = [
        ["recall", {"query": "staging database"}],
        ["memory_write", {"content": "Deploys go out on Tuesdays"}],
        ["recall", {"query": "when do deploys go out"}],
    ]
    report = node_client(live_server.url, secret, mode, calls)
    assert "error" not in report, report
    assert report["protocol"] == PROTOCOL[mode]
    assert report["tools"] == list(tool_registry())
    recalled, written, again = report["calls"]
    assert not recalled["isError"] and "db-stage-2" in recalled["text"]
    assert recalled["structured"]["items"][0]["content"] == "The staging database is db-stage-2"
    assert not written["isError"] and written["structured"]["outcome"] == "created"
    stored = Fact.objects.get(content="Deploys go out on Tuesdays")
    assert stored.created_by == owner and written["structured"]["id"] == stored.pk
    assert "Deploys go out on Tuesdays" in again["text"]
    transports = set(
        AuditEvent.objects.filter(action="tool.call").values_list("details__transport", flat=True)
    )
    assert transports == {"mcp-http"}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_typescript_client_is_refused_a_wrong_or_revoked_token(
    live_server, owner, make_token, mode
):
    token, secret = make_token(owner)
    agent_token_revoke(actor=Actor(user=owner), token=token)
    write = [["memory_write", {"content": "Not stored"}]]
    for refused, message in (
        (secret, "This token has been revoked."),
        ("mh_nope", "Invalid token."),
    ):
        report = node_client(live_server.url, refused, mode, write)
        assert "tools" not in report
        assert (message if mode == "legacy" else "HTTP 401") in report["error"]
    _, read_only = make_token(owner, name="ro", scopes=("read",))
    report = node_client(live_server.url, read_only, mode, write)
    assert "memory_write" not in report["tools"] and "recall" in report["tools"]
    assert report["calls"][0]["isError"] and "'write' scope" in report["calls"][0]["text"]
    assert not Fact.objects.exists()
