"""The tool registry over MCP, driven by the SDK's own client: streamable HTTP at /mcp
(in both the initialize handshake and the per-request protocol) and stdio through
``manage.py mcp``. Every call runs as the token's user, within its scopes and tools."""

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import AsyncIterator

import anyio
import httpx2
import jsonschema
import pytest
from django.test import Client as DjangoClient
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import REPO_ROOT, worker_env
from facts.models import Fact
from memoryhub.engine.toolkit import tool_registry
from teams.models import AuditEvent
from teams.services import Actor, agent_token_revoke

pytestmark = pytest.mark.django_db(transaction=True)

EVERY_TOOL = list(tool_registry())


def beside_the_loop(call, *args, **kwargs):
    """``call(*args, **kwargs)``, on a thread of its own if an event loop runs in this
    one: browser tests leave Playwright's loop running in the test thread, where neither
    ``anyio.run`` nor the view's ``async_to_sync`` may start another (a web server's
    threads run none)."""
    from django.db import connections

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return call(*args, **kwargs)
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call(*args, **kwargs)
        except BaseException as exc:  # raised again in the test thread
            outcome["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


@contextlib.asynccontextmanager
async def over_http(url: str, secret: str, mode: str = "auto") -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as c:
        yield c


def over_stdio(secret: str, tmp_path) -> Client:
    env = worker_env(data_dir=tmp_path)
    return Client(
        StdioServerParameters(
            command=sys.executable,
            args=["manage.py", "mcp", "--token", secret],
            env=env,
            cwd=str(REPO_ROOT),
        ),
        read_timeout_seconds=60,
    )


def check_every_tool(client_of, tool_world) -> None:
    """List the tools and call each one; the SDK client checks each answer against
    the tool's output schema."""

    async def run() -> None:
        async with client_of() as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == EVERY_TOOL
            forget = next(t for t in listed if t.name == "memory_forget")
            assert forget.annotations.destructive_hint and not forget.annotations.read_only_hint
            for name in EVERY_TOOL:
                result = await client.call_tool(name, tool_world[name])
                assert not result.is_error, (name, result.content)
                assert result.content[0].text
                jsonschema.validate(
                    result.structured_content, tool_registry()[name].output_schema()
                )
            recalled = await client.call_tool("recall", tool_world["recall"])
            assert "db-stage-2" in recalled.content[0].text

    beside_the_loop(anyio.run, run)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_tool_over_streamable_http(live_server, owner, make_token, tool_world, mode):
    _, secret = make_token(owner)
    check_every_tool(lambda: over_http(live_server.url, secret, mode), tool_world)
    assert Fact.objects.filter(content="Deploys go out on Tuesdays").exists()
    transports = set(
        AuditEvent.objects.filter(action="tool.call").values_list("details__transport", flat=True)
    )
    assert transports == {"mcp-http"}


def test_every_tool_over_stdio(owner, make_token, tool_world, tmp_path):
    _, secret = make_token(owner)
    check_every_tool(lambda: over_stdio(secret, tmp_path), tool_world)
    assert AuditEvent.objects.filter(action="tool.call", details__transport="mcp-stdio").exists()


def refusals(client_of, *, owner, make_token) -> None:
    """A read-only token, a token limited to recall, an unknown tool, arguments off the
    schema and a user id named by the caller."""

    async def run() -> None:
        async with client_of(make_token(owner, name="ro", scopes=("read",))[1]) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "memory_write" not in names and "recall" in names
            result = await client.call_tool("memory_write", {"content": "Not stored"})
            assert result.is_error and "'write' scope" in result.content[0].text
            with pytest.raises(MCPError, match="no tool named 'drop_tables'"):
                await client.call_tool("drop_tables", {})
            off = await client.call_tool("recall", {"query": "x", "max_items": -3})
            assert off.is_error and "max_items" in off.content[0].text
            # A token's role is its own: it cannot claim one that reads across fleets.
            claimed = await client.call_tool("tiered_recall", {"role": "strategist"})
            assert claimed.is_error and "has no role" in claimed.content[0].text
        limited, secret = make_token(owner, name="recall-only")
        limited.tools = ["recall"]
        limited.save(update_fields=["tools"])
        async with client_of(secret) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["recall"]
            result = await client.call_tool("wiki_write", {"title": "T", "content": "c"})
            assert result.is_error and "not enabled for this token" in result.content[0].text

    beside_the_loop(anyio.run, run)
    assert not Fact.objects.exists()


def test_refusals_over_streamable_http(live_server, owner, make_token):
    refusals(lambda secret: over_http(live_server.url, secret), owner=owner, make_token=make_token)


def test_refusals_over_stdio(owner, make_token, tmp_path):
    refusals(lambda secret: over_stdio(secret, tmp_path), owner=owner, make_token=make_token)


def test_the_caller_cannot_name_another_user(live_server, owner, outsider, make_token, remember):
    remember(owner, "Alice's bank PIN hint is her first cat")
    _, secret = make_token(outsider, name="theirs")

    async def run() -> str:
        async with over_http(live_server.url, secret) as client:
            arguments = {"query": "bank PIN hint", "user": "alice", "user_id": owner.pk}
            return json.dumps((await client.call_tool("recall", arguments)).structured_content)

    assert "first cat" not in beside_the_loop(anyio.run, run)


def test_a_revoked_token_is_refused_over_streamable_http(live_server, owner, make_token):
    token, secret = make_token(owner)
    agent_token_revoke(actor=Actor(user=owner), token=token)

    async def run() -> None:
        async with over_http(live_server.url, secret) as client:
            await client.list_tools()

    with pytest.raises(BaseException) as caught:
        beside_the_loop(anyio.run, run)
    assert "This token has been revoked." in repr(caught.value)


def test_a_revoked_token_is_refused_over_stdio(owner, make_token, tmp_path):
    token, secret = make_token(owner)

    async def run() -> None:
        async with over_stdio(secret, tmp_path) as client:
            assert (await client.call_tool("recall", {"query": "x"})).is_error is False
            agent_token_revoke(actor=Actor(user=owner), token=token)
            with pytest.raises(MCPError, match="revoked"):
                await client.call_tool("recall", {"query": "x"})

    beside_the_loop(anyio.run, run)
    revoked_at_start = over_stdio(secret, tmp_path)

    async def start() -> None:
        async with revoked_at_start:
            pass

    with pytest.raises(BaseException):  # noqa: B017 - the server exits at once
        beside_the_loop(anyio.run, start)


def test_the_http_endpoint_answers_plainly_without_a_token_or_to_a_get(owner, make_token):
    response = beside_the_loop(DjangoClient().post, "/mcp", "{}", content_type="application/json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    bad = beside_the_loop(
        DjangoClient(headers={"Authorization": "Bearer mh_nope"}).post,
        "/mcp",
        "{}",
        content_type="application/json",
    )
    assert bad.status_code == 401 and bad.json()["detail"] == "Invalid token."
    _, secret = make_token(owner)
    agent = DjangoClient(headers={"Authorization": f"Bearer {secret}"})
    assert beside_the_loop(agent.get, "/mcp").status_code == 405
    garbage = beside_the_loop(
        agent.post,
        "/mcp",
        "not json",
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    )
    assert 400 <= garbage.status_code < 500


def mcp_post(client: DjangoClient, method: str, params: dict) -> dict:
    """One JSON-RPC message to /mcp, as any MCP client over HTTP sends it."""
    response = beside_the_loop(
        client.post,
        "/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        content_type="application/json",
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_one_post_calls_a_tool_without_a_session(owner, make_token, remember):
    remember(owner, "The office wifi password rotates on Mondays")
    agent = DjangoClient(headers={"Authorization": f"Bearer {make_token(owner)[1]}"})
    listed = mcp_post(agent, "tools/list", {})
    assert [t["name"] for t in listed["result"]["tools"]] == EVERY_TOOL
    called = mcp_post(agent, "tools/call", {"name": "recall", "arguments": {"query": "wifi"}})
    assert "rotates on Mondays" in called["result"]["content"][0]["text"]
    assert called["result"]["structuredContent"]["items"][0]["category"] == "fact"


def test_the_web_server_of_make_run_serves_mcp(start_web, owner, make_token, remember):
    remember(owner, "The release train leaves on Thursdays")
    url = start_web()
    _, secret = make_token(owner)

    async def run() -> str:
        async with over_http(url, secret) as client:
            return (await client.call_tool("recall", {"query": "release train"})).content[0].text

    assert "leaves on Thursdays" in beside_the_loop(anyio.run, run)


PER_REQUEST_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def mcp_call(client: DjangoClient, name: str, arguments: dict, *, per_request: bool) -> dict:
    """A ``tools/call`` message to /mcp, in the initialize-handshake protocol's shape or
    in the per-request one's (its version, method and tool in headers too)."""
    params: dict = {"name": name, "arguments": arguments}
    headers = {"Accept": "application/json, text/event-stream"}
    if per_request:
        params["_meta"] = PER_REQUEST_META
        headers |= {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
    response = beside_the_loop(
        client.post,
        "/mcp",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
        content_type="application/json",
        headers=headers,
    )
    return response.json()


@pytest.mark.django_db
def test_a_worker_answers_call_after_call_whatever_came_before(owner, make_token, remember):
    """One thread serves request after request, in both protocols, and a refused or
    malformed one leaves it answering the next."""
    remember(owner, "The staging database is db-stage-2")
    agent = DjangoClient(headers={"Authorization": f"Bearer {make_token(owner)[1]}"})
    for per_request in (False, True):
        unknown = mcp_call(agent, "drop_tables", {}, per_request=per_request)
        assert "no tool named 'drop_tables'" in unknown["error"]["message"]
        garbage = beside_the_loop(
            agent.post,
            "/mcp",
            "not json",
            content_type="application/json",
            HTTP_ACCEPT="application/json",
        )
        assert 400 <= garbage.status_code < 500
        for _ in range(3):
            called = mcp_call(
                agent, "recall", {"query": "staging database"}, per_request=per_request
            )
            assert "db-stage-2" in called["result"]["content"][0]["text"]
