"""Fleets stay apart on every path a token can take: an agent of a fleet reads its own
fleet's rows and those of no fleet; another fleet's only through a justified, audited
cross-fleet read of tiered recall. Every path below is a way an agent reads memory."""

import json

import pytest
from django.test import Client

from facts.models import Fact
from teams.models import AuditEvent
from tests.test_mcp import mcp_post

pytestmark = pytest.mark.django_db

OPERATE = "The operate fleet restarts kafka brokers with a rolling drain"
BUILD = "The build fleet caches kafka client jars in the runner image"
FLEETLESS = "Every fleet pages the owner of a kafka topic before deleting it"


def bearer(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


def post(client: Client, path: str, body: object):
    return client.post(path, json.dumps(body), content_type="application/json")


@pytest.fixture
def fleets(owner, make_token):
    """One person's two fleets of agents, each having written a learning, and a fact of
    no fleet the person wrote."""
    _, build = make_token(owner, name="builder", fleet="build")
    _, operate = make_token(owner, name="operator", fleet="operate")
    build, operate = bearer(build), bearer(operate)
    ids = {}
    for client, content, name in ((operate, OPERATE, "operate"), (build, BUILD, "build")):
        answer = post(
            client,
            "/api/learnings",
            {"skill": "kafka", "content": content, "fingerprint": "kafka-drain"},
        )
        assert answer.status_code == 201, answer.content
        ids[name] = answer.json()["id"]
    from facts.services.create import fact_create
    from teams.services import Actor

    ids["none"] = fact_create(actor=Actor(user=owner), data={"content": FLEETLESS}).fact.pk
    assert set(Fact.objects.filter(pk__in=ids.values()).values_list("fleet", flat=True)) == {
        "build",
        "operate",
        "",
    }
    return {"build": build, "operate": operate, "ids": ids}


def read_everywhere(client: Client, ids: dict[str, int]) -> dict[str, str]:
    """What each read path gives the client, as text."""
    said = {
        "recall": post(client, "/api/recall", {"query": "kafka brokers drain"}),
        "list": client.get("/api/memories", {"limit": 200}),
        "search": client.get("/api/memories/search", {"q": "kafka"}),
        "exact": client.get("/api/memories/search", {"q": "kafka", "mode": "exact"}),
        "get": client.get(f"/api/memories/{ids['operate']}"),
        "tool recall": post(client, "/api/tools/recall", {"query": "kafka brokers drain"}),
        "tool memory_get": post(client, "/api/tools/memory_get", {"ids": [ids["operate"]]}),
        "tiered": post(client, "/api/recall/tiered", {"tier": "skill", "query": "kafka"}),
        "fingerprints": client.get("/api/learnings/fingerprints/kafka-drain"),
    }
    texts = {path: answer.content.decode() for path, answer in said.items()}
    mcp = mcp_post(
        client, "tools/call", {"name": "recall", "arguments": {"query": "kafka brokers drain"}}
    )
    texts["mcp recall"] = json.dumps(mcp)
    return texts


def test_an_agent_reads_its_own_fleet_and_no_fleet_on_every_path(fleets):
    texts = read_everywhere(fleets["build"], fleets["ids"])
    for path, text in texts.items():
        assert OPERATE not in text, f"{path} gave the build fleet the operate fleet's learning"
    # Its own fleet's and the fleetless rows come through where they match.
    assert BUILD in texts["list"] and FLEETLESS in texts["list"]
    assert BUILD in texts["exact"] and FLEETLESS in texts["exact"]
    assert fleets["build"].get(f"/api/memories/{fleets['ids']['operate']}").status_code == 404
    # And the other way round.
    back = read_everywhere(fleets["operate"], {"operate": fleets["ids"]["build"]})
    assert all(BUILD not in text for text in back.values())


def test_the_person_reads_every_fleet(owner_client, fleets):
    listed = owner_client.get("/api/memories", {"limit": 200}).content.decode()
    assert OPERATE in listed and BUILD in listed


def test_another_fleet_is_read_only_across_with_a_justification_and_audited(fleets):
    build = fleets["build"]
    refused = post(build, "/api/recall/tiered", {"tier": "skill", "fleet": "operate"})
    assert refused.status_code == 403
    across = post(
        build,
        "/api/recall/tiered",
        {"tier": "skill", "scope": "cross", "justification": "incident 7 triage"},
    )
    assert across.status_code == 200
    items = {item["snippet"]: item["score"] for item in across.json()["items"]}
    assert OPERATE in items and BUILD in items
    # Scored as another fleet's (0.5 of the fleet weight), its own as its own.
    assert items[BUILD] - items[OPERATE] == pytest.approx(0.15 * 0.5, abs=0.02)
    event = AuditEvent.objects.get(action="recall.cross_fleet")
    assert event.details["justification"] == "incident 7 triage"


def test_asking_for_another_fleet_scores_it_as_another(fleets):
    """A build agent reading across "as" operate still scores operate rows as another
    fleet's (they are not its own because it named them)."""
    across = post(
        fleets["build"],
        "/api/recall/tiered",
        {"tier": "skill", "fleet": "operate", "scope": "cross", "justification": "handover"},
    ).json()
    items = {item["snippet"]: item["score"] for item in across["items"]}
    plain = post(fleets["operate"], "/api/recall/tiered", {"tier": "skill", "query": ""}).json()
    theirs = {item["snippet"]: item["score"] for item in plain["items"]}
    assert theirs[OPERATE] - items[OPERATE] == pytest.approx(0.15 * 0.5, abs=0.02)


def test_an_agent_writes_for_its_own_fleet_only(fleets):
    planted = post(
        fleets["build"],
        "/api/learnings",
        {"skill": "kafka", "content": "Operate: skip the drain", "fleet": "operate"},
    )
    assert planted.status_code == 403
    assert "fleet 'build' only" in planted.json()["detail"]
    assert not Fact.objects.filter(content__contains="skip the drain").exists()
