"""CodeGraph and the wiki can be switched off in Settings -> Memory: their tools leave
the tool list (REST and MCP), their API and pages answer 404 saying the feature is off,
the navigation leaves them out, and what they stored is kept for when they are back."""

import json

import anyio
import pytest
from django.test import Client

from memoryhub.engine.config import memory_config_get
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor
from tests.test_mcp import beside_the_loop, over_http
from wiki.models import Page
from wiki.services import wiki_page_create

pytestmark = pytest.mark.django_db


def switch(**values: bool) -> None:
    memory_config_get()
    MemoryConfig.objects.filter(pk=1).update(**values)


def bearer(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


def test_a_feature_switched_off_leaves_the_tool_list_and_refuses_its_tools(owner, make_token):
    _, secret = make_token(owner)
    client = bearer(secret)
    switch(codegraph_enabled=False, wiki_enabled=False)

    names = [t["name"] for t in client.get("/api/tools").json()["tools"]]
    refused = client.post(
        "/api/tools/wiki_search", json.dumps({"query": "deploy"}), content_type="application/json"
    )

    assert not {"codegraph_query", "wiki_search", "wiki_read", "wiki_write"} & set(names)
    assert {"recall", "memory_write", "concept_query"} <= set(names)
    assert refused.status_code == 404
    assert refused.json()["detail"].startswith("The wiki is switched off on this server")
    switch(wiki_enabled=True)
    assert "wiki_search" in [t["name"] for t in client.get("/api/tools").json()["tools"]]


def test_its_api_answers_404_saying_so_and_its_data_is_kept(owner, make_token):
    _, secret = make_token(owner)
    client = bearer(secret)
    wiki_page_create(actor=Actor(user=owner), title="Deploys", content="We deploy on Fridays.")
    switch(wiki_enabled=False, codegraph_enabled=False)

    pages = client.get("/api/wiki")
    projects = client.get("/api/codegraph/projects")

    assert pages.status_code == 404 and "The wiki is switched off" in pages.json()["detail"]
    assert projects.status_code == 404 and "CodeGraph is switched off" in projects.json()["detail"]
    assert Page.objects.filter(title="Deploys").exists()
    switch(wiki_enabled=True)
    assert client.get("/api/wiki").status_code == 200


def test_its_pages_say_it_is_off_and_the_navigation_leaves_it_out(owner_client):
    switch(codegraph_enabled=False)

    page = owner_client.get("/codegraph/")
    home = owner_client.get("/").content.decode()

    assert page.status_code == 404
    assert "CodeGraph is switched off on this server" in page.content.decode()
    assert 'href="/codegraph/"' not in home and 'href="/wiki/"' in home


def test_staff_switch_a_feature_in_settings(staff_client):
    form = staff_client.get("/memory/settings/").content.decode()
    assert 'name="codegraph_enabled"' in form and 'name="wiki_enabled"' in form


def test_mcp_lists_no_tool_of_a_feature_switched_off(live_server, owner, make_token):
    _, secret = make_token(owner)
    switch(codegraph_enabled=False)

    async def listed() -> list[str]:
        async with over_http(live_server.url, secret) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = beside_the_loop(anyio.run, listed)
    assert "codegraph_query" not in names and "wiki_search" in names
