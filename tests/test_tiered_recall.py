"""Tiered recall: the ranking formula on a fixed clock, the three tiers, cross-fleet
reads refused without a justification and audited with one, and bad input."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from facts.models import Fact
from memoryhub.engine.errors import Forbidden, InvalidInput
from memoryhub.surface.recall import tiered_recall, tiered_score
from teams.models import AuditEvent
from teams.services import Actor
from wiki.models import Page
from wiki.services import wiki_page_upsert

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_the_ranking_formula_on_a_fixed_clock():
    fresh = tiered_score(ts=NOW, now=NOW, relevance=1.0, own_fleet=True, resolved=True)
    assert fresh == pytest.approx(1.0)
    month_old = tiered_score(
        ts=NOW - timedelta(days=30), now=NOW, relevance=0.0, own_fleet=False, resolved=False
    )
    assert month_old == pytest.approx(0.5 * 0.5 + 0.15 * 0.5)
    two_months = tiered_score(
        ts=NOW - timedelta(days=60), now=NOW, relevance=0.5, own_fleet=True, resolved=False
    )
    assert two_months == pytest.approx(0.5 * 0.25 + 0.3 * 0.5 + 0.15)
    future = tiered_score(
        ts=NOW + timedelta(days=3), now=NOW, relevance=0.0, own_fleet=True, resolved=False
    )
    assert future == pytest.approx(0.5 + 0.15)  # a clock skew is no bonus


def learn(user, token, content, *, days_ago, fleet, resolution="", skill="deploy"):
    from facts.services.create import fact_create

    fact = fact_create(
        actor=Actor(user=user, token=token),
        data={
            "content": content,
            "category": "learning",
            "tier": "skill",
            "skill": skill,
            "fleet": fleet,
            "resolution_ref": resolution,
        },
    ).fact
    Fact.objects.filter(pk=fact.pk).update(created_at=NOW - timedelta(days=days_ago))
    return fact


@pytest.fixture
def agent(owner, make_token):
    token, _ = make_token(owner, fleet="blue")
    return Actor(user=owner, token=token)


def test_skill_learnings_rank_by_recency_fleet_and_resolution(owner, agent):
    old = learn(owner, agent.token, "Canary restarts fix the stuck rollout", days_ago=30,
                fleet="blue", resolution="INC-7")  # fmt: skip
    new = learn(owner, agent.token, "Rollouts stall when the cache is cold", days_ago=0,
                fleet="blue")  # fmt: skip
    learn(owner, None, "Red fleet learning about rollouts", days_ago=0, fleet="red")
    items = tiered_recall(actor=agent, tier="skill", skill="deploy", now=NOW)
    assert [i["path"] for i in items] == [f"skill/deploy/{new.pk}", f"skill/deploy/{old.pk}"]
    assert items[0]["score"] == pytest.approx(0.5 + 0.15, abs=1e-4)
    assert items[1]["score"] == pytest.approx(0.25 + 0.15 + 0.05, abs=1e-4)
    assert items[0]["ts"] == NOW.isoformat()
    # A query adds relevance: 0.3 x the cosine of the row's TF-IDF sketch and the query's.
    ranked = tiered_recall(actor=agent, tier="skill", query="canary stuck", now=NOW)
    assert ranked[0]["path"] == f"skill/deploy/{old.pk}"
    relevance = (ranked[0]["score"] - (0.25 + 0.15 + 0.05)) / 0.3
    assert 0.3 < relevance < 1
    exact = tiered_recall(actor=agent, tier="skill", query=old.content, now=NOW)
    assert exact[0]["score"] == pytest.approx(0.25 + 0.3 + 0.15 + 0.05, abs=1e-4)
    # A window keeps recent learnings only.
    recent = tiered_recall(actor=agent, tier="skill", since="7d", now=NOW)
    assert [i["path"] for i in recent] == [f"skill/deploy/{new.pk}"]


def test_a_weak_match_of_the_task_context_ranks_above_a_non_match(owner, agent):
    learn(owner, agent.token, "The billing service needs a warm cache", days_ago=1, fleet="blue")
    weak = learn(owner, agent.token, "Retries help flaky canary checks", days_ago=1, fleet="blue")
    strong = learn(owner, agent.token, "Canary deploys of the checkout stall on cold starts",
                   days_ago=1, fleet="blue")  # fmt: skip

    items = tiered_recall(
        actor=agent, tier="skill", context="Investigate the checkout canary deploy", now=NOW
    )

    assert [i["path"].rsplit("/", 1)[1] for i in items[:2]] == [str(strong.pk), str(weak.pk)]
    assert items[1]["score"] > items[2]["score"]  # shares "canary", beside one sharing none
    same_age = tiered_recall(actor=agent, tier="skill", now=NOW)
    assert len({round(i["score"], 6) for i in same_age}) == 1  # no query, no context: a tie


def test_another_fleets_learnings_need_cross_scope_and_a_justification(owner, agent):
    learn(owner, None, "Red fleet: the proxy drops idle sockets", days_ago=1, fleet="red")
    with pytest.raises(Forbidden, match="scope 'cross' and a justification"):
        tiered_recall(actor=agent, tier="skill", fleet="red", now=NOW)
    with pytest.raises(Forbidden):
        tiered_recall(actor=agent, tier="skill", scope="cross", now=NOW)
    assert not AuditEvent.objects.filter(action="recall.cross_fleet").exists()
    items = tiered_recall(
        actor=agent, tier="skill", scope="cross", justification="Incident 42 triage", now=NOW
    )
    assert len(items) == 1
    assert items[0]["score"] == pytest.approx(0.5 * 0.5 ** (1 / 30) + 0.15 * 0.5, abs=1e-4)
    event = AuditEvent.objects.get(action="recall.cross_fleet")
    assert event.details["justification"] == "Incident 42 triage"
    assert (event.details["own_fleet"], event.actor_token_id) == ("blue", agent.token.pk)


def test_project_and_org_tiers_read_wiki_pages_by_project_and_kind(owner, outsider, agent):
    actor = Actor(user=owner)
    wiki_page_upsert(actor=actor, title="Checkout PDD", content="Design", kind="pdd",
                     project="CAND-1")  # fmt: skip
    wiki_page_upsert(actor=actor, title="Checkout ADR 1", content="Use queues", kind="adr",
                     project="CAND-1")  # fmt: skip
    wiki_page_upsert(actor=actor, title="Checkout notes", content="misc", project="CAND-1")
    wiki_page_upsert(actor=actor, title="Vendor quirks", content="Acme rate limits at 10/s")
    Page.objects.update(updated_at=NOW)
    project = tiered_recall(
        actor=agent, tier="project", project="CAND-1", kinds=["pdd", "adr"], now=NOW
    )
    assert [i["path"] for i in project] == [
        "wiki/CAND-1/checkout-adr-1",
        "wiki/CAND-1/checkout-pdd",
    ]
    org = tiered_recall(actor=agent, tier="org", query="rate limits", now=NOW)
    assert [(i["path"], i["snippet"]) for i in org] == [
        ("wiki/-/vendor-quirks", "Acme rate limits at 10/s")
    ]
    assert tiered_recall(actor=Actor(user=outsider), tier="org", now=NOW) == []


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"tier": "galaxy"}, "Unknown tier 'galaxy'"),
        ({"tier": "org", "limit": -1}, "limit is between 1 and 50"),
        ({"tier": "org", "limit": 10_000}, "limit is between 1 and 50"),
        ({"tier": "skill", "since": "yesterday"}, "since is a span like 7d"),
        ({"tier": "skill", "since": "0d"}, "since is a span like 7d"),
        ({"tier": "project"}, "needs a project"),
        ({"tier": "org", "query": "x" * 5000}, "at most 1000"),
    ],
)
def test_bad_input_is_refused_clearly(agent, arguments, says):
    with pytest.raises(InvalidInput, match=says):
        tiered_recall(actor=agent, **arguments)


def test_over_rest_and_as_a_tool(owner, make_token, outsider_client):
    token, secret = make_token(owner, fleet="blue")
    learn(owner, token, "Blue fleet: warm the cache before the rollout", days_ago=2, fleet="blue")
    agent = Client(headers={"Authorization": f"Bearer {secret}"})
    body = {"tier": "skill", "query": "cache rollout"}
    rest = agent.post("/api/recall/tiered", body, content_type="application/json")
    assert rest.status_code == 200, rest.content
    assert rest.json()["items"][0]["snippet"] == "Blue fleet: warm the cache before the rollout"
    tool = agent.post("/api/tools/tiered_recall", body, content_type="application/json").json()
    assert tool["data"]["items"] == rest.json()["items"]
    assert tool["text"].startswith("skill/deploy/")
    refused = agent.post(
        "/api/recall/tiered", {"tier": "skill", "fleet": "red"}, content_type="application/json"
    )
    assert refused.status_code == 403
    bad = agent.post(
        "/api/recall/tiered", json.dumps({"tier": "skill", "since": "-3d"}), "application/json"
    )
    assert bad.status_code == 400 and "since" in bad.json()["detail"]
    theirs = outsider_client.post("/api/recall/tiered", body, content_type="application/json")
    assert theirs.status_code == 200 and theirs.json()["items"] == []


def test_the_command_line_forms(owner, make_token, capsys):
    from django.core.management import CommandError, call_command

    token, secret = make_token(owner, fleet="blue")
    actor = Actor(user=owner)
    wiki_page_upsert(actor=actor, title="Cart PDD", content="Design", kind="pdd",
                     project="CAND-1")  # fmt: skip
    wiki_page_upsert(actor=actor, title="Vendor quirks", content="Acme rate limits at 10/s")
    learn(owner, token, "Retry the flaky upload once", days_ago=1, fleet="blue", skill="upload")
    Fact.objects.filter(skill="upload").update(created_at=timezone.now() - timedelta(days=1))

    def run(*args: str) -> str:
        call_command("recall", *args, "--token", secret)
        return capsys.readouterr().out

    out = run("project", "--candidate", "CAND-1", "--include", "pdd,adr")
    assert "wiki/CAND-1/cart-pdd" in out and "Design" in out
    found = json.loads(run("org", "--query", "rate limits", "--limit", "5", "--json"))
    assert [i["path"] for i in found] == ["wiki/-/vendor-quirks"]
    assert "Retry the flaky upload once" in run("skill", "--skill", "upload", "--since", "7d")
    with pytest.raises(CommandError, match="since is a span"):
        run("skill", "--since", "soon")
    with pytest.raises(CommandError, match="cross"):
        run("skill", "--fleet", "red")
    with pytest.raises(CommandError, match="Say as whom"):
        call_command("recall", "org", "--token", "")
