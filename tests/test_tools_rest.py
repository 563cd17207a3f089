"""The tool registry over REST: GET /api/tools lists the tools a token may call (for a
system prompt, or in the OpenAI function-calling shape); POST /api/tools/{name} runs one
as the token's user, within its scopes and tool list, and audits the call."""

import json

import jsonschema
import pytest
from django.test import Client

from facts.models import Fact
from memoryhub.engine.toolkit import tool_registry
from teams.models import AuditEvent
from teams.services import Actor, agent_token_revoke

pytestmark = pytest.mark.django_db

# Recall and the other tools that span apps first, then each app's.
EVERY_TOOL = [
    "recall",
    "tiered_recall",
    "memory_forget",
    "memory_write",
    "memory_get",
    "learning_write",
    "codegraph_query",
    "wiki_search",
    "wiki_read",
    "wiki_write",
    "concept_query",
]


def bearer(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


def call(client: Client, name: str, arguments: object):
    return client.post(f"/api/tools/{name}", json.dumps(arguments), content_type="application/json")


def test_the_registry_holds_each_app_tool_once_with_its_schemas_and_annotations():
    registry = tool_registry()
    assert list(registry) == EVERY_TOOL
    for found in registry.values():
        assert found.description
        assert found.input_schema()["type"] == "object"
        assert found.output_schema()["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(found.output_schema())
    forget = registry["memory_forget"]
    assert (forget.read_only, forget.destructive, forget.scope) == (False, True, "write")
    assert registry["recall"].read_only and registry["recall"].idempotent


def test_an_agent_lists_its_tools_ready_for_a_system_prompt(owner, make_token):
    _, secret = make_token(owner)
    answer = bearer(secret).get("/api/tools").json()
    assert [t["name"] for t in answer["tools"]] == EVERY_TOOL
    recall = answer["tools"][0]
    assert recall["annotations"] == {"read_only": True, "destructive": False, "idempotent": True}
    assert recall["input_schema"]["required"] == ["query"]
    assert "block" in recall["output_schema"]["properties"]
    assert answer["prompt"].startswith("## MemoryHub tools\n")
    assert "- recall(query, project?, max_items?) [read-only]: The memories" in answer["prompt"]
    assert "- memory_forget(topic, dry_run?, ids?) [destructive]" in answer["prompt"]


def test_the_openai_format_gives_function_definitions(owner, make_token):
    _, secret = make_token(owner)
    tools = bearer(secret).get("/api/tools", {"format": "openai"}).json()["tools"]
    assert tools[0]["type"] == "function"
    assert tools[0]["function"]["name"] == "recall"
    assert tools[0]["function"]["parameters"]["properties"]["query"]["type"] == "string"


def test_a_read_only_token_lists_only_the_tools_it_can_call(owner, make_token):
    _, secret = make_token(owner, scopes=("read",))
    names = [t["name"] for t in bearer(secret).get("/api/tools").json()["tools"]]
    assert names == [
        "recall",
        "tiered_recall",
        "memory_get",
        "codegraph_query",
        "wiki_search",
        "wiki_read",
        "concept_query",
    ]


@pytest.mark.parametrize("name", EVERY_TOOL)
def test_every_tool_runs_over_rest_and_answers_its_output_schema(
    owner, make_token, tool_world, name
):
    _, secret = make_token(owner)
    response = call(bearer(secret), name, tool_world[name])
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["tool"] == name and answer["text"]
    jsonschema.validate(answer["data"], tool_registry()[name].output_schema())


def test_recall_through_the_tool_gives_the_block_and_ids_to_fetch_whole(
    owner, make_token, tool_world
):
    client = bearer(make_token(owner)[1])
    recalled = call(client, "recall", tool_world["recall"]).json()
    assert recalled["text"].startswith("## Recalled Facts\n- [fact] The staging database")
    first = recalled["data"]["items"][0]["id"]
    whole = call(client, "memory_get", {"ids": [first]}).json()
    assert whole["data"]["items"][0]["provenance"]["origin"] == "user_stated"


def test_forgetting_previews_first_then_forgets_the_chosen_ids(owner, make_token, tool_world):
    client = bearer(make_token(owner)[1])
    preview = call(client, "memory_forget", {"topic": "espresso"}).json()
    assert preview["data"]["dry_run"] is True
    ids = [m["id"] for m in preview["data"]["matches"]]
    assert len(ids) == 1 and "espresso" in preview["text"]
    assert Fact.objects.filter(pk__in=ids).exists()  # a preview forgets nothing
    refused = call(client, "memory_forget", {"topic": "espresso", "dry_run": False})
    assert refused.status_code == 400 and "Preview first" in refused.json()["detail"]
    done = call(client, "memory_forget", {"topic": "espresso", "dry_run": False, "ids": ids})
    assert done.status_code == 200, done.content
    assert done.json()["data"]["removed"]["facts"] == 1
    assert not Fact.objects.filter(pk__in=ids).exists()
    assert Fact.objects.filter(content__contains="staging").exists()


def test_an_outsider_reads_nothing_of_the_owners_through_the_tools(
    owner, outsider, make_token, tool_world
):
    client = bearer(make_token(outsider, name="theirs")[1])
    answers = {
        name: call(client, name, tool_world[name])
        for name in ("recall", "memory_get", "memory_forget", "wiki_search", "codegraph_query")
    }
    assert all(r.status_code == 200 for r in answers.values())
    text = json.dumps({name: r.json() for name, r in answers.items()})
    for secret_word in ("db-stage-2", "espresso without", "Restart the", "auth.py"):
        assert secret_word not in text
    assert answers["memory_get"].json()["data"]["missing"] == tool_world["memory_get"]["ids"]
    assert call(client, "wiki_read", tool_world["wiki_read"]).status_code == 404


def test_a_token_without_the_write_scope_cannot_call_a_write_tool(owner, make_token):
    client = bearer(make_token(owner, scopes=("read",))[1])
    response = call(client, "memory_write", {"content": "Nope, not stored"})
    assert response.status_code == 403
    assert "'write' scope" in response.json()["detail"]
    assert not Fact.objects.exists()


def test_a_token_limited_to_some_tools_lists_and_calls_only_those(owner, make_token):
    token, secret = make_token(owner)
    token.tools = ["recall"]
    token.save(update_fields=["tools"])
    client = bearer(secret)
    assert [t["name"] for t in client.get("/api/tools").json()["tools"]] == ["recall"]
    response = call(client, "memory_write", {"content": "Not through this token"})
    assert response.status_code == 403
    assert "not enabled for this token" in response.json()["detail"]
    assert not Fact.objects.exists()
    assert call(client, "recall", {"query": "anything"}).status_code == 200


def test_a_revoked_token_and_no_token_are_refused(owner, make_token):
    token, secret = make_token(owner)
    agent_token_revoke(actor=Actor(user=owner), token=token)
    response = call(bearer(secret), "recall", {"query": "x"})
    assert response.status_code == 401 and "revoked" in response.json()["detail"]
    assert bearer(secret).get("/api/tools").status_code == 401
    assert call(Client(), "recall", {"query": "x"}).status_code == 401


def test_an_unknown_tool_is_a_404_naming_the_tools(owner, make_token):
    response = call(bearer(make_token(owner)[1]), "drop_tables", {})
    assert response.status_code == 404
    assert "no tool named 'drop_tables'" in response.json()["detail"]
    assert "recall" in response.json()["detail"]


@pytest.mark.parametrize(
    ("name", "arguments", "status", "says"),
    [
        ("memory_write", {}, 400, "content: Field required"),
        ("memory_write", {"content": "x", "importance": "very"}, 400, "importance"),
        ("memory_get", {"ids": []}, 400, "ids"),
        ("memory_get", {"ids": ["one"]}, 400, "ids"),
        ("recall", {"query": "x", "max_items": -1}, 400, "max_items"),
        ("recall", {"query": "x", "max_items": 10**30}, 400, "max_items"),
        ("memory_write", {"content": "\ud800"}, 400, "Unicode"),
        ("memory_write", ["content"], 422, "valid dictionary"),
        ("memory_write", "content", 422, "valid dictionary"),
        ("memory_forget", {"topic": "x", "dry_run": False, "ids": [1] * 20_000}, 400, "ids"),
    ],
)
def test_arguments_off_the_schema_are_refused_clearly_and_change_nothing(
    owner, make_token, name, arguments, status, says
):
    client = bearer(make_token(owner)[1])
    body = json.dumps(arguments) if "\ud800" not in str(arguments) else '{"content": "\\ud800"}'
    response = client.post(f"/api/tools/{name}", body, content_type="application/json")
    assert response.status_code == status, response.content
    assert says in response.json()["detail"]
    assert not Fact.objects.exists()


def test_huge_and_odd_arguments_never_fail_the_server(owner, make_token):
    client = bearer(make_token(owner)[1])
    for name, arguments in [
        ("recall", {"query": "x" * 200_000}),
        ("recall", {"query": 'NEAR("a" "b") AND OR *'}),
        ("wiki_search", {"query": "\" ' ( ) * ^"}),
        ("codegraph_query", {"query": "a" * 100_000, "callers": True}),
    ]:
        assert call(client, name, arguments).status_code < 500
    # Ids no database column holds are refused as bad input.
    for name, arguments in [
        ("memory_get", {"ids": [1, 2**64]}),
        ("memory_forget", {"topic": "x", "dry_run": False, "ids": [-(2**63) - 1]}),
    ]:
        assert call(client, name, arguments).status_code == 400


def test_every_call_is_audited_with_its_size_and_outcome_never_its_content(owner, make_token):
    token, secret = make_token(owner, scopes=("read",))
    client = bearer(secret)
    call(client, "recall", {"query": "where is the staging database"})
    call(client, "memory_write", {"content": "top secret plan"})
    call(client, "no_such_tool", {"query": "x"})
    call(client, "memory_get", {"ids": []})
    events = list(AuditEvent.objects.filter(action="tool.call").order_by("id"))
    assert [(e.target_id, e.details["outcome"], e.details["status"]) for e in events] == [
        ("recall", "ok", 200),
        ("memory_write", "refused", 403),
        ("no_such_tool", "unknown", 404),
        ("memory_get", "invalid", 400),
    ]
    assert all(e.actor_token_id == token.pk and e.details["transport"] == "rest" for e in events)
    assert events[0].details["argument_bytes"] == len(
        json.dumps({"query": "where is the staging database"})
    )
    stored = json.dumps([e.details for e in events])
    assert "staging" not in stored and "secret" not in stored


def test_a_person_calls_tools_through_the_dashboard_session(owner_client, tool_world):
    answer = owner_client.get("/api/tools").json()
    assert [t["name"] for t in answer["tools"]] == EVERY_TOOL
    response = call(owner_client, "recall", tool_world["recall"])
    assert response.status_code == 200
    assert "db-stage-2" in response.json()["text"]
