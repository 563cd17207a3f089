"""The Python client against a live server: typed answers, the agent loop of the README,
and errors that say what went wrong."""

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from facts.models import Fact
from memoryhub.surface.client import (
    AuthError,
    BadInput,
    ForgetPreview,
    MemoryHub,
    NotFoundError,
    Recall,
    Refused,
    ServerError,
    Written,
)
from teams.services import Actor, agent_token_revoke

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hub(live_server, owner, make_token):
    with MemoryHub(live_server.url, make_token(owner)[1]) as client:
        yield client


def test_an_agent_remembers_then_recalls_with_typed_answers(hub):
    written = hub.remember("The staging database runs on host db-stage-2", tags=["infra"])
    assert isinstance(written, Written) and written.outcome == "created"
    assert hub.remember("the staging database runs on host db-stage-2").outcome == "merged"
    recalled = hub.recall("Which host runs the staging database?", max_items=5)
    assert isinstance(recalled, Recall)
    assert (
        recalled.block == "## Recalled Facts\n- [fact] the staging database runs on host db-stage-2"
    )
    assert recalled.items[0].id == written.id and recalled.items[0].score > 0
    whole = hub.get(written.id, 999_999)
    assert [item["tags"] for item in whole] == [["infra"]]


def test_forgetting_previews_then_forgets(hub):
    hub.remember("Alice drinks her espresso without sugar")
    kept = hub.remember("The staging database runs on host db-stage-2")
    preview = hub.forget_preview("espresso")
    assert isinstance(preview, ForgetPreview) and len(preview.ids) == 1
    assert Fact.objects.count() == 2
    receipt = hub.forget("espresso", ids=preview.ids)
    assert receipt.removed["facts"] == 1 and receipt.fact_ids == preview.ids
    assert list(Fact.objects.values_list("pk", flat=True)) == [kept.id]
    assert hub.forget("espresso").fact_ids == []  # nothing left to forget


def test_the_client_lists_and_calls_any_tool(hub):
    names = [t.name for t in hub.tools()]
    assert names[:4] == ["recall", "tiered_recall", "memory_forget", "memory_write"]
    forget = next(t for t in hub.tools() if t.name == "memory_forget")
    assert forget.destructive and not forget.read_only
    assert hub.tools_prompt().startswith("## MemoryHub tools")
    assert hub.openai_tools()[0]["function"]["name"] == "recall"
    written = hub.call("wiki_write", title="Vendors", content="Acme ships on Mondays.")
    assert written.text == "created: vendors"
    assert hub.call("wiki_read", title_or_slug="vendors").data["content"] == (
        "Acme ships on Mondays."
    )


def test_the_errors_say_what_went_wrong(live_server, owner, make_token, hub):
    with pytest.raises(NotFoundError, match="no tool named 'nope'"):
        hub.call("nope")
    with pytest.raises(BadInput, match="importance"):
        hub.remember("x", importance=7)
    with pytest.raises(NotFoundError):
        hub.call("wiki_read", title_or_slug="no such page")
    read_only = MemoryHub(live_server.url, make_token(owner, name="ro", scopes=("read",))[1])
    with pytest.raises(Refused, match="'write' scope"):
        read_only.remember("Not stored")
    token, secret = make_token(owner, name="gone")
    agent_token_revoke(actor=Actor(user=owner), token=token)
    with pytest.raises(AuthError, match="revoked") as caught:
        MemoryHub(live_server.url, secret).recall("x")
    assert caught.value.status == 401
    with pytest.raises(ServerError, match="could not be reached"):
        MemoryHub("http://127.0.0.1:9", secret, timeout=2).recall("x")
    with pytest.raises(ValueError, match="http"):
        MemoryHub("ftp://example.org", secret)
    assert not Fact.objects.exists()


AGENT_LOOP = """
import os
from memoryhub.surface.client import MemoryHub

hub = MemoryHub(os.environ["MEMORYHUB_URL"], os.environ["MEMORYHUB_TOKEN"])
system = "You are a helpful agent."
for message in ["I'm allergic to peanuts.", "What snack do you suggest?"]:
    recalled = hub.recall(message)
    prompt = f"{system}\\n\\n{recalled.block}" if recalled.block else system
    reply = "(the model answers here)"  # call your model with prompt + message
    if message.startswith("I'm"):
        hub.remember(message.replace("I'm", "The user is"), category="preference")
print(prompt)
"""


def test_the_readme_agent_loop_runs_outside_django(live_server, owner, make_token, tmp_path):
    """The client needs no Django settings: a plain script uses it."""
    _, secret = make_token(owner)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO_ROOT),
        "MEMORYHUB_URL": live_server.url,
        "MEMORYHUB_TOKEN": secret,
    }
    done = subprocess.run(
        [sys.executable, "-c", AGENT_LOOP],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "## Recalled Facts" in done.stdout
    assert "The user is allergic to peanuts." in done.stdout


def test_tiered_recall_through_the_client(hub, owner):
    from wiki.services import wiki_page_upsert

    wiki_page_upsert(
        actor=Actor(user=owner), title="Vendor quirks", content="Acme rate limits at 10/s"
    )
    hits = hub.tiered_recall(tier="org", query="rate limits", limit=5)
    assert [(h.path, h.snippet) for h in hits] == [
        ("wiki/-/vendor-quirks", "Acme rate limits at 10/s")
    ]
    with pytest.raises(BadInput, match="Unknown tier"):
        hub.tiered_recall(tier="galaxy")
    with pytest.raises(Refused, match="justification"):
        hub.tiered_recall(tier="skill", fleet="red")


def test_an_agent_learns_and_reads_by_fingerprint_and_role_through_the_client(
    live_server, owner, make_token, role_presets
):
    _, secret = make_token(owner, name="diagnose", role="diagnostician")
    with MemoryHub(live_server.url, secret) as hub:
        learned = hub.learn("deploy", "Warm the cache before the canary.", fingerprint="stall")
        hits = hub.tiered_recall(tier="skill", fingerprint="stall")
        assert [h.path for h in hits] == [f"skill/deploy/{learned}"]
        by_role = [f"skill/deploy/{learned}"]
        assert [h.path for h in hub.tiered_recall(role="diagnostician")] == by_role
        assert [h.path for h in hub.tiered_recall()] == by_role  # the token's role
        with pytest.raises(Refused, match="its role is diagnostician"):
            hub.tiered_recall(role="strategist")
    _, lost = make_token(owner, name="lost", role="astronaut")
    with MemoryHub(live_server.url, lost) as hub, pytest.raises(NotFoundError, match="no preset"):
        hub.tiered_recall()


def test_the_skills_one_line_form_reads_the_server_and_token_from_the_environment(
    live_server, owner, make_token, monkeypatch
):
    from memoryhub.surface.client import recall
    from wiki.services import wiki_page_upsert

    wiki_page_upsert(
        actor=Actor(user=owner), title="Token rotation", content="GitHub tokens rotate monthly."
    )
    monkeypatch.delenv("MEMORYHUB_URL", raising=False)
    monkeypatch.delenv("MEMORYHUB_TOKEN", raising=False)
    with pytest.raises(ValueError, match="Set MEMORYHUB_URL and MEMORYHUB_TOKEN"):
        recall(tier="org", query="token rotation")
    monkeypatch.setenv("MEMORYHUB_URL", live_server.url)
    monkeypatch.setenv("MEMORYHUB_TOKEN", make_token(owner, fleet="operate")[1])
    ctx = recall(tier="org", query="GitHub token rotation", fleet="operate", limit=5)
    assert [sorted(hit) for hit in ctx] == [["path", "score", "snippet", "ts"]]
    assert ctx[0]["path"] == "wiki/-/token-rotation" and "rotate monthly" in ctx[0]["snippet"]
