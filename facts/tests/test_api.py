"""The memories API: contract, access rule, bad input and export."""

import json

import pytest

from facts.models import Category, Fact, Status
from facts.search import FACT_FTS
from facts.services.embedding import facts_backfill
from teams.models import AuditEvent, Visibility

pytestmark = pytest.mark.django_db


def post(client, path: str, body: object):
    return client.post(path, body, content_type="application/json")


@pytest.fixture
def alice(owner, agent_client, team):
    return agent_client(owner)


@pytest.fixture
def bob(teammate, agent_client):
    return agent_client(teammate)


@pytest.fixture
def charlie(outsider, agent_client):
    return agent_client(outsider)


@pytest.fixture
def world(owner, team, remember):
    return {
        "private": remember(owner, "Private: alice's salary expectations", visibility="private"),
        "team": remember(owner, "Team: the platform roadmap for Q3", visibility="team"),
        "global": remember(owner, "Global: the company holiday is on Friday", visibility="global"),
    }


def test_create_returns_201_with_the_stored_fact(alice):
    response = post(
        alice,
        "/api/memories",
        {
            "content": "Prefers concise answers",
            "category": "preference",
            "importance": 0.8,
            "tags": ["Style"],
            "project": "assistant",
            "session_id": "s-1",
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert body["content"] == "Prefers concise answers"
    assert (body["category"], body["importance"], body["tags"]) == ("preference", 0.8, ["style"])
    assert (body["visibility"], body["team"], body["project"]) == (
        "private",
        "Platform",
        "assistant",
    )
    assert body["provenance"]["agent"] == "agent"
    assert body["provenance"]["session_id"] == "s-1"
    assert AuditEvent.objects.filter(action="fact.create", target_id=str(body["id"])).exists()


def test_an_extracted_write_is_recorded_as_extracted(alice):
    body = post(alice, "/api/memories", {"content": "Uses pnpm", "source": "extracted"}).json()
    assert (body["source"], body["provenance"]["origin"]) == ("extracted", "extracted")
    body = post(alice, "/api/memories", {"content": "Prefers dark mode"}).json()
    assert (body["source"], body["provenance"]["origin"]) == ("explicit", "user_stated")


def test_near_duplicate_returns_200_with_the_existing_fact(alice):
    first = post(alice, "/api/memories", {"content": "Uses vim keybindings"}).json()
    response = post(alice, "/api/memories", {"content": "uses Vim keybindings!"})
    assert response.status_code == 200
    assert response.json()["id"] == first["id"]
    assert response.json()["provenance"]["origin"] == "merged"


def test_batch_create(alice):
    items = [{"content": f"Batch fact {i} about service {i * 3}"} for i in range(5)]
    response = post(alice, "/api/memories/batch", {"items": items})
    assert response.status_code == 201
    assert response.json()["created"] == 5
    assert Fact.objects.count() == 5


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"content": ""}, 400, "must not be empty"),
        ({"content": "x" * 5000}, 400, "maximum"),
        ({"content": "x", "category": "gossip"}, 400, "Unknown category"),
        ({"content": "x", "importance": 2}, 400, "between 0 and 1"),
        ({"content": "x", "importance": "very"}, 422, "importance"),
        ({"content": "x", "team": "Elsewhere"}, 400, "Unknown team"),
        ({"content": "x", "supersedes": 999999}, 404, "No fact 999999"),
        ({"tags": ["no content"]}, 422, "content"),
        ({"content": "x", "occurred_at": "last tuesday"}, 422, "occurred_at"),
        ({"content": "x", "occurred_at": "0001-01-01T00:00:00Z"}, 400, "between the years"),
        ({"content": "x", "speaker": "s" * 201}, 422, "speaker"),
        ({"content": "x", "speaker": 7}, 422, "speaker"),
    ],
)
def test_bad_input_is_4xx_and_writes_nothing(alice, body, status, message):
    response = post(alice, "/api/memories", body)
    assert response.status_code == status
    assert message in response.json()["detail"]
    assert not Fact.objects.exists()


def test_a_fact_says_when_it_happened_and_who_said_it(alice):
    response = post(
        alice,
        "/api/memories",
        {
            "content": "I adopted a puppy called Biscuit",
            "speaker": "  Caroline   Smith ",
            "session_id": "chat-7",
            "occurred_at": "2023-05-08T13:56:00",
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert body["speaker"] == "Caroline Smith"
    assert body["occurred_at"].startswith("2023-05-08T13:56:00")  # taken as UTC
    assert body["provenance"]["session_id"] == "chat-7"
    plain = post(alice, "/api/memories", {"content": "The office plants need water"}).json()
    assert plain["speaker"] == "" and plain["occurred_at"] >= body["created_at"]
    got = alice.get(f"/api/memories/{body['id']}").json()
    assert (got["speaker"], got["occurred_at"]) == (body["speaker"], body["occurred_at"])


def test_bad_json_is_4xx(alice):
    response = alice.post("/api/memories", "{oops", content_type="application/json")
    assert 400 <= response.status_code < 500
    assert not Fact.objects.exists()


def test_supersedes_someone_elses_private_fact_is_404(charlie, world):
    response = post(
        charlie, "/api/memories", {"content": "mine now", "supersedes": world["private"].pk}
    )
    assert response.status_code == 404
    assert Fact.objects.count() == 3


# --- Who may widen a fact ----------------------------------------------------------------


@pytest.fixture
def bobs_note(teammate, team, remember):
    """Bob's team fact in the team alice administers."""
    return remember(
        teammate, "Team: bob's notes on the billing outage", visibility="team", team=team.name
    )


def test_a_team_admin_cannot_widen_a_members_team_fact(alice, charlie, owner, teammate, bobs_note):
    from django.contrib.auth.models import Group

    from teams.models import Membership

    # Moved to another team of both, a team fact is read by other people too.
    billing = Group.objects.create(name="Billing")
    for member in (owner, teammate):
        Membership.objects.create(user=member, team=billing, role="admin")
    for change in ({"visibility": "global"}, {"team": "Billing"}):
        response = alice.patch(
            f"/api/memories/{bobs_note.pk}", change, content_type="application/json"
        )
        assert response.status_code == 403, (change, response.content)
        assert "Only bob" in response.json()["detail"]
    bobs_note.refresh_from_db()
    assert (bobs_note.visibility, bobs_note.team.name) == ("team", "Platform")
    assert charlie.get(f"/api/memories/{bobs_note.pk}").status_code == 404
    assert not AuditEvent.objects.filter(action="fact.update").exists()


def test_a_team_admin_may_narrow_a_members_team_fact_and_its_owner_keeps_it(alice, bob, bobs_note):
    response = alice.patch(
        f"/api/memories/{bobs_note.pk}", {"visibility": "private"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert bob.get(f"/api/memories/{bobs_note.pk}").status_code == 200
    assert alice.get(f"/api/memories/{bobs_note.pk}").status_code == 404


def test_the_owner_widens_their_own_team_fact(bob, charlie, bobs_note):
    response = bob.patch(
        f"/api/memories/{bobs_note.pk}", {"visibility": "global"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert charlie.get(f"/api/memories/{bobs_note.pk}").status_code == 200
    assert not AuditEvent.objects.filter(action="visibility.widen").exists()


def test_staff_who_administer_the_team_widen_a_members_fact_audited(
    make_user, agent_client, team, charlie, bobs_note
):
    from teams.models import Membership

    dana = make_user("dana", is_staff=True)
    Membership.objects.create(user=dana, team=team, role="admin")
    response = agent_client(dana).patch(
        f"/api/memories/{bobs_note.pk}", {"visibility": "global"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert charlie.get(f"/api/memories/{bobs_note.pk}").status_code == 200
    event = AuditEvent.objects.get(action="visibility.widen")
    assert (event.actor, event.target_type, event.target_id) == (dana, "fact", str(bobs_note.pk))
    assert event.details == {
        "owner": "bob",
        "from": {"visibility": "team", "team": "Platform"},
        "to": {"visibility": "global", "team": "Platform"},
    }


def test_a_supersede_never_hides_a_fact_from_its_owner(alice, bob, bobs_note):
    body = {"content": "Billing outage notes, rewritten", "supersedes": bobs_note.pk}
    response = post(alice, "/api/memories", {**body, "visibility": "private"})
    assert response.status_code == 403, response.content
    assert "bob" in response.json()["detail"]
    bobs_note.refresh_from_db()
    assert bobs_note.superseded_by_id is None
    assert Fact.objects.count() == 1
    recalled = post(bob, "/api/recall", {"query": "billing outage notes"}).json()
    assert [item["id"] for item in recalled["items"]] == [bobs_note.pk]
    # Superseded by a statement bob can read, it is replaced for him too.
    response = post(alice, "/api/memories", {**body, "visibility": "team"})
    assert response.status_code == 201, response.content
    bobs_note.refresh_from_db()
    assert bobs_note.superseded_by_id == response.json()["id"]


def test_list_is_paginated_with_next(alice, remember, owner):
    for i in range(7):
        remember(owner, f"Numbered fact {i} about item {i * 17}")
    page = alice.get("/api/memories", {"limit": 5}).json()
    assert page["count"] == 7 and len(page["items"]) == 5
    rest = alice.get(page["next"]).json()
    assert len(rest["items"]) == 2 and rest["next"] is None


def test_list_refuses_a_page_window_it_cannot_serve(alice):
    for params, message in [
        ({"offset": -1}, "offset must be between 0 and 1000000000."),
        ({"offset": 10**30}, "offset must be between 0 and 1000000000."),
        ({"limit": 0}, "limit must be between 1 and 200."),
    ]:
        response = alice.get("/api/memories", params)
        assert (response.status_code, response.json()["detail"]) == (400, message)
    assert alice.get("/api/memories", {"offset": 10**9}).json()["items"] == []


def test_list_filters_and_sorts(alice, owner, remember):
    remember(owner, "Low importance note", importance=0.1, category="context")
    remember(owner, "High importance note", importance=0.9)
    items = alice.get("/api/memories", {"sort": "importance"}).json()["items"]
    assert [i["content"] for i in items] == ["High importance note", "Low importance note"]
    items = alice.get("/api/memories", {"category": "context"}).json()["items"]
    assert [i["content"] for i in items] == ["Low importance note"]
    assert alice.get("/api/memories", {"sort": "random"}).status_code == 400
    assert alice.get("/api/memories", {"category": "gossip"}).status_code == 400


def test_list_runs_a_constant_number_of_queries(
    alice, owner, remember, django_assert_max_num_queries
):
    for i in range(20):
        remember(owner, f"Query count fact {i} on subject {i * 19}")
    with django_assert_max_num_queries(8):
        response = alice.get("/api/memories")
    assert len(response.json()["items"]) == 20


def test_outsider_is_refused_everywhere(charlie, world):
    assert charlie.get("/api/memories").json()["count"] == 1  # the global one only
    for fact in (world["private"], world["team"]):
        assert charlie.get(f"/api/memories/{fact.pk}").status_code == 404
        response = charlie.patch(
            f"/api/memories/{fact.pk}", {"content": "hacked"}, content_type="application/json"
        )
        assert response.status_code == 404
        assert charlie.delete(f"/api/memories/{fact.pk}").status_code == 404
    found = charlie.get("/api/memories/search", {"q": "roadmap salary holiday"}).json()
    assert [i["id"] for i in found["items"]] == [world["global"].pk]
    found = charlie.get("/api/memories/search", {"q": "roadmap salary", "mode": "exact"}).json()
    assert found["count"] == 0
    found = charlie.get("/api/memories/search", {"q": "holiday"}).json()
    assert [i["content"] for i in found["items"]] == ["Global: the company holiday is on Friday"]
    recalled = post(charlie, "/api/recall", {"query": "salary roadmap holiday"}).json()
    assert {i["id"] for i in recalled["items"]} <= {world["global"].pk}
    assert charlie.get("/api/memories/stats").json()["total"] == 1
    assert charlie.get("/api/memories/layer-stats").json()[0]["total"] == 1
    export = json.loads(b"".join(charlie.get("/api/memories/export").streaming_content))
    assert [f["id"] for f in export["facts"]] == [world["global"].pk]
    assert Fact.objects.get(pk=world["team"].pk).content.startswith("Team:")


def test_teammate_reads_team_facts_but_cannot_change_them(bob, world):
    assert bob.get(f"/api/memories/{world['team'].pk}").status_code == 200
    assert bob.get(f"/api/memories/{world['private'].pk}").status_code == 404
    response = bob.patch(
        f"/api/memories/{world['team'].pk}", {"content": "edited"}, content_type="application/json"
    )
    assert response.status_code == 403
    assert bob.delete(f"/api/memories/{world['team'].pk}").status_code == 403


def test_patch_and_delete(alice, world):
    fact = world["private"]
    response = alice.patch(
        f"/api/memories/{fact.pk}",
        {"importance": 0.9, "content": "Updated content"},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert (response.json()["importance"], response.json()["content"]) == (0.9, "Updated content")
    assert FACT_FTS.content_of(fact.pk)[0] == "Updated content"
    response = alice.patch(
        f"/api/memories/{fact.pk}", {"importance": 9}, content_type="application/json"
    )
    assert response.status_code == 400
    assert Fact.objects.get(pk=fact.pk).importance == 0.9
    assert alice.delete(f"/api/memories/{fact.pk}").status_code == 204
    assert not Fact.objects.filter(pk=fact.pk).exists()


def test_patch_with_null_fields_answers_below_500(alice, world):
    """null clears what may be empty (sentiment, tags) and is refused, with a message,
    where a value is required."""
    fact = world["private"]
    for field, status in [
        ("sentiment", 200),
        ("tags", 200),
        ("content", 400),
        ("category", 400),
        ("importance", 400),
        ("status", 400),
    ]:
        response = alice.patch(
            f"/api/memories/{fact.pk}", {field: None}, content_type="application/json"
        )
        assert response.status_code == status, (field, response.content)
        if status == 400:
            assert response.json()["detail"]
    fact.refresh_from_db()
    assert (fact.sentiment, fact.tags, fact.content) == ("", [], world["private"].content)


def test_search_accepts_fts_syntax_as_words(alice, world):
    for q in ['"roadmap', "roadmap AND (", "platform:roadmap", "road*", "NOT"]:
        assert alice.get("/api/memories/search", {"q": q}).status_code == 200
    found = alice.get("/api/memories/search", {"q": "roadmap Q3"}).json()
    assert [i["id"] for i in found["items"]] == [world["team"].pk]
    assert alice.get("/api/memories/search", {"q": "road"}).json()["count"] == 1  # prefix
    assert alice.get("/api/memories/search", {"q": " "}).status_code == 400


def test_search_finds_by_tag(alice, owner, remember):
    fact = remember(owner, "Runbook for failovers", tags=["disaster-recovery"])
    found = alice.get("/api/memories/search", {"q": "disaster recovery"}).json()
    assert [i["id"] for i in found["items"]] == [fact.pk]


def test_recall_contract(alice, world):
    response = post(alice, "/api/recall", {"query": "when is the company holiday?"})
    assert response.status_code == 200
    body = response.json()
    assert body["block"].startswith("## Recalled Facts\n")
    assert body["items"][0]["content"] == "Global: the company holiday is on Friday"
    assert {"id", "content", "category", "score"} <= set(body["items"][0])
    assert post(alice, "/api/recall", {"query": ""}).status_code == 400
    assert post(alice, "/api/recall", {"query": "x", "max_items": 0}).status_code == 400
    assert post(alice, "/api/recall", {}).status_code == 422


def test_stats_and_layer_stats(alice, world):
    stats = alice.get("/api/memories/stats").json()
    assert stats["total"] == 3 and stats["by_visibility"] == {"private": 1, "team": 1, "global": 1}
    layers = alice.get("/api/memories/layer-stats").json()
    assert layers[0] == {"layer": 1, "name": "Raw facts", "total": 3, "active": 3, "distilled": 0}


def test_lists_search_and_counts_show_active_memories_unless_the_status_asks(
    alice, owner, world, remember
):
    remember(owner, "Private: alice's salary expectations!", visibility="private")  # merges
    retired = remember(owner, "Retired: the VPN used to be OpenVPN")
    Fact.objects.filter(pk=retired.pk).update(status=Status.ARCHIVED)
    facts_backfill()  # archived rows embedded too: a search by meaning could meet them
    archived = set(Fact.objects.filter(status=Status.ARCHIVED).values_list("pk", flat=True))
    assert len(archived) == 2  # the earlier wording a merge keeps, and the retired fact
    active = {fact.pk for fact in world.values()}

    def listed(**params: str) -> set[int]:
        body = alice.get("/api/memories", params).json()
        assert body["count"] == len(body["items"])
        return {item["id"] for item in body["items"]}

    assert listed() == listed(status="active") == active
    assert listed(sort="oldest") == listed(sort="updated") == active
    assert listed(status="archived") == archived
    assert listed(status="all") == active | archived
    assert alice.get("/api/memories", {"status": "gone"}).status_code == 400
    for mode in ("hybrid", "exact"):
        found = alice.get("/api/memories/search", {"q": "salary expectations", "mode": mode})
        assert [item["id"] for item in found.json()["items"]] == [world["private"].pk], mode
        found = alice.get("/api/memories/search", {"q": "VPN OpenVPN", "mode": mode})
        assert retired.pk not in {item["id"] for item in found.json()["items"]}, mode
    stats = alice.get("/api/memories/stats").json()
    assert stats["total"] == 3 and sum(stats["by_visibility"].values()) == 3
    assert stats["by_status"] == {"active": 3, "archived": 2}  # every status, to choose from
    assert alice.get("/api/memories/stats", {"status": "all"}).json()["total"] == 5
    assert alice.get("/api/memories/stats", {"status": "archived"}).json()["total"] == 2
    assert alice.get("/api/memories/stats", {"status": "gone"}).status_code == 400
    [raw, *_] = alice.get("/api/memories/layer-stats").json()
    assert (raw["total"], raw["active"]) == (3, 3)
    [raw, *_] = alice.get("/api/memories/layer-stats", {"status": "all"}).json()
    assert (raw["total"], raw["active"]) == (5, 3)


def test_export_is_versioned_json_with_provenance_and_audited(alice, world):
    response = alice.get("/api/memories/export")
    assert response.streaming
    body = json.loads(b"".join(response.streaming_content))
    assert (body["format"], body["version"]) == ("memoryhub.facts", 1)
    assert len(body["facts"]) == 3
    assert body["facts"][0]["provenance"]["origin"] == "user_stated"
    assert AuditEvent.objects.filter(action="fact.export").exists()


def test_export_includes_superseded_and_archived_facts(alice, owner, remember):
    old = remember(owner, "Old endpoint is api1")
    remember(owner, "New endpoint is api2", supersedes=old.pk)
    body = json.loads(b"".join(alice.get("/api/memories/export").streaming_content))
    exported = {f["id"]: f for f in body["facts"]}
    assert exported[old.pk]["superseded_by"] is not None


def test_read_only_token_cannot_write_memories(owner, agent_client):
    client = agent_client(owner, scopes=("read",), name="reader")
    assert post(client, "/api/memories", {"content": "x"}).status_code == 403
    assert client.get("/api/memories").status_code == 200


def test_anonymous_is_401_everywhere(client, world):
    fact_id = world["global"].pk
    for method, path in [
        ("get", "/api/memories"),
        ("post", "/api/memories"),
        ("get", f"/api/memories/{fact_id}"),
        ("post", "/api/recall"),
        ("get", "/api/memories/export"),
        ("get", "/api/memories/stats"),
        ("get", "/api/memories/search?q=x"),
        ("delete", f"/api/memories/{fact_id}"),
    ]:
        assert getattr(client, method)(path).status_code == 401, path


def test_openapi_lists_the_values_the_api_accepts(client):
    """The schema agents read names the choices and ranges the services enforce."""
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]
    for schema in ("FactIn", "FactPatch"):
        fields = schemas[schema]["properties"]
        assert fields["category"]["enum"] == [*Category.values, None]
        assert fields["visibility"]["enum"] == [*Visibility.values, None]
        assert (fields["importance"]["minimum"], fields["importance"]["maximum"]) == (0, 1)
    assert schemas["FactPatch"]["properties"]["status"]["enum"] == [*Status.values, None]
