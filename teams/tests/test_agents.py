"""The Agents page: a new token comes with a copy button, the settings an agent needs and
a curl command that works as shown, all shown once."""

import html as html_lib
import json
import re
import shlex

import pytest
from django.test import Client

from teams.models import AgentToken, AuditEvent

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def created_panel(client: Client, **extra) -> str:
    response = client.post(
        "/agents/", {"name": "deploy-bot", "scopes": ["read", "write"]}, headers=HTMX, **extra
    )
    assert response.status_code == 200
    return response.content.decode()


def block(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}">(.*?)</(?:pre|code)>', html, re.S)
    assert found, element_id
    return html_lib.unescape(found.group(1))


def test_a_new_token_comes_with_agent_settings_for_this_server(owner_client):
    html = created_panel(owner_client)
    secret = block(html, "new-secret")
    assert secret.startswith("mh_")
    assert block(html, "new-token-env") == (
        f"MEMORYHUB_URL=http://testserver\nMEMORYHUB_TOKEN={secret}"
    )
    assert 'data-copy="new-secret"' in html and 'data-copy="new-token-env"' in html


def test_the_settings_name_the_host_the_browser_reached(owner_client, settings):
    settings.ALLOWED_HOSTS = ["memory.example.com"]
    html = created_panel(owner_client, HTTP_HOST="memory.example.com", secure=True)
    assert "MEMORYHUB_URL=https://memory.example.com\n" in block(html, "new-token-env")
    assert "'https://memory.example.com/api/recall'" in block(html, "new-token-curl")


def test_the_curl_command_recalls_with_the_new_token_as_shown(owner_client, remember, owner):
    remember(owner, "Deploys start from the release branch")
    command = shlex.split(block(created_panel(owner_client), "new-token-curl").replace("\\\n", ""))
    assert command[:4] == ["curl", "-sS", "-X", "POST"]
    url = command[4]
    headers = dict(command[i + 1].split(": ", 1) for i, part in enumerate(command) if part == "-H")
    body = command[command.index("-d") + 1]
    assert url == "http://testserver/api/recall"
    assert headers["Content-Type"] == "application/json"

    agent = Client(headers={"Authorization": headers["Authorization"]})
    response = agent.post(
        url.removeprefix("http://testserver"), body, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert json.loads(body)["query"]
    assert "Deploys start from the release branch" in response.json()["block"]


def test_a_token_without_read_says_the_example_needs_it(owner_client):
    response = owner_client.post("/agents/", {"name": "writer", "scopes": ["write"]}, headers=HTMX)
    assert "the token needs the <code>read</code> scope" in response.content.decode()


def test_the_snippets_are_shown_once(owner_client):
    secret = block(created_panel(owner_client), "new-secret")
    page = owner_client.get("/agents/").content.decode()
    assert secret not in page
    assert "new-token-env" not in page and "new-token-curl" not in page


def test_a_refused_token_shows_no_snippet_and_creates_nothing(owner_client):
    response = owner_client.post("/agents/", {"name": "", "scopes": ["read"]}, headers=HTMX)
    assert response.status_code == 400
    assert "new-token-env" not in response.content.decode()
    assert not AgentToken.objects.exists()


def test_a_token_created_with_some_tools_can_call_only_those(owner_client):
    response = owner_client.post(
        "/agents/",
        {"name": "reader", "scopes": ["read", "write"], "tools": ["recall", "wiki_search"]},
        headers=HTMX,
    )
    assert response.status_code == 200
    token = AgentToken.objects.get(name="reader")
    assert token.tools == ["recall", "wiki_search"]
    secret = block(response.content.decode(), "new-secret")
    agent = Client(headers={"Authorization": f"Bearer {secret}"})
    names = [t["name"] for t in agent.get("/api/tools").json()["tools"]]
    assert names == ["recall", "wiki_search"]


def test_a_token_created_with_no_tool_checked_may_call_every_tool(owner_client):
    created_panel(owner_client)
    assert AgentToken.objects.get(name="deploy-bot").tools is None
    assert "<td>\n            all" in owner_client.get("/agents/").content.decode()


def test_the_owner_changes_a_tokens_tools_on_the_agents_page(owner, owner_client, make_token):
    token, _ = make_token(owner)
    response = owner_client.post(
        f"/agents/{token.pk}/tools/", {"tools": ["memory_get", "recall"]}, headers=HTMX
    )
    assert response.status_code == 200
    assert "recall, memory_get" in response.content.decode()  # the registry's order
    token.refresh_from_db()
    assert token.tools == ["recall", "memory_get"]
    owner_client.post(f"/agents/{token.pk}/tools/", {}, headers=HTMX)
    token.refresh_from_db()
    assert token.tools is None
    actions = list(
        AuditEvent.objects.filter(action="token.tools")
        .order_by("id")
        .values_list("details__to", flat=True)
    )
    assert actions == [["recall", "memory_get"], None]


def test_an_unknown_tool_or_someone_elses_token_changes_nothing(
    owner, outsider_client, owner_client, make_token
):
    token, _ = make_token(owner)
    response = owner_client.post(f"/agents/{token.pk}/tools/", {"tools": ["rm_rf"]}, headers=HTMX)
    assert response.status_code == 400
    assert "rm_rf" in response.content.decode()
    assert outsider_client.post(
        f"/agents/{token.pk}/tools/", {"tools": ["recall"]}
    ).status_code == (404)
    token.refresh_from_db()
    assert token.tools is None
