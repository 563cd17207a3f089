"""The fact store's agent tools: compact answers, the access rule, scopes and arguments."""

import pytest

from facts.models import Fact
from facts.tools import memory_get, memory_write
from memoryhub.engine.errors import Forbidden, InvalidInput
from memoryhub.engine.toolkit import tool_get
from teams.services import Actor

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent(owner, make_token):
    token, _ = make_token(owner)
    return Actor(user=owner, token=token)


def test_an_agent_writes_then_recalls_a_memory_in_a_few_tokens(agent):
    written = memory_write(actor=agent, content="The staging database is db-stage-2")
    assert written.data["outcome"] == "created"
    assert written.text == f"created memory {written.data['id']}"
    recall = tool_get(name="recall")  # the agent surface's, with the role preset's reads
    answer = recall(actor=agent, query="which host is the staging database?")
    assert answer.text.startswith("## Recalled Facts\n- [fact] The staging database is")
    assert answer.data["items"][0]["id"] == written.data["id"]


def test_repeating_a_memory_merges_and_says_so(agent):
    first = memory_write(actor=agent, content="Deploys go out on Tuesdays after standup")
    again = memory_write(actor=agent, content="deploys go out on Tuesdays after standup!")
    assert (again.data["id"], again.data["outcome"]) == (first.data["id"], "merged")
    assert again.text == f"merged memory {first.data['id']}"


def test_memory_get_gives_whole_memories_and_lists_what_the_caller_cannot_read(
    owner, outsider, agent, make_token
):
    mine = memory_write(actor=agent, content="Alice's laptop is a ThinkPad").data["id"]
    answer = memory_get(actor=agent, ids=[mine, 999_999])
    assert answer.data["items"][0]["provenance"]["agent"] == "agent"
    assert answer.data["missing"] == [999_999]
    token, _ = make_token(outsider, name="theirs")
    theirs = memory_get(actor=Actor(user=outsider, token=token), ids=[mine])
    assert theirs.data == {"items": [], "missing": [mine]}
    assert "ThinkPad" not in theirs.text


def test_a_read_only_token_cannot_write(owner, make_token):
    token, _ = make_token(owner, name="ro", scopes=("read",))
    with pytest.raises(Forbidden, match="'write' scope"):
        memory_write(actor=Actor(user=owner, token=token), content="x y z")
    assert not Fact.objects.exists()


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"content": "x", "importance": 2}, "importance"),
        ({"content": "x", "visibility": "everyone"}, "visibility"),
        ({"content": "x", "colour": "red"}, None),  # extra fields are ignored
        ({"content": "\ud800"}, "not storable Unicode text"),
        ({}, "content"),
    ],
)
def test_arguments_off_the_schema_are_refused_clearly(agent, arguments, says):
    if says is None:
        assert memory_write(actor=agent, **arguments).data["outcome"] == "created"
        return
    with pytest.raises(InvalidInput, match=says):
        memory_write(actor=agent, **arguments)


def test_the_tools_declare_their_shape():
    recall = tool_get(name="recall")
    assert recall.read_only and recall.idempotent and not recall.destructive
    assert memory_write.scope == "write" and not memory_write.read_only
    schema = memory_write.input_schema()
    assert schema["required"] == ["content"]
    assert "preference" in schema["properties"]["category"]["enum"]
    assert memory_get.input_schema()["properties"]["ids"]["maxItems"] == 50
