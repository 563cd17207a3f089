"""A near-duplicate merge never changes who can read a statement: only facts of the
same visibility and team are merged, through every write path."""

import pytest

from facts.models import Fact

pytestmark = pytest.mark.django_db

PUBLIC = "Billing service staging host is dbstage01"
SECRET = "Billing service staging host is dbstage01 and the admin password is hunter2"


def post(client, path: str, body: object):
    return client.post(path, body, content_type="application/json")


@pytest.fixture
def alice(owner, team, agent_client):
    return agent_client(owner)


@pytest.fixture
def bob(teammate, agent_client):
    return agent_client(teammate)


@pytest.fixture
def charlie(outsider, agent_client):
    return agent_client(outsider)


def secret_seen(client, fact_ids: list[int]) -> list[str]:
    """The read paths (by id, search, recall, list) through which ``client`` reads the
    password: in any fact, or in one of ``fact_ids`` fetched by id."""
    found = []
    for fact_id in fact_ids:
        response = client.get(f"/api/memories/{fact_id}")
        if response.status_code == 200 and "hunter2" in response.json()["content"]:
            found.append("get")
    hits = client.get("/api/memories/search", {"q": "admin password hunter2"}).json()["items"]
    if any("hunter2" in hit["content"] for hit in hits):
        found.append("search")
    recalled = post(client, "/api/recall", {"query": "admin password hunter2"}).json()
    if "hunter2" in recalled["block"]:
        found.append("recall")
    listed = client.get("/api/memories", {"limit": 200}).json()["items"]
    if any("hunter2" in item["content"] for item in listed):
        found.append("list")
    return found


def test_a_private_repeat_of_a_global_fact_stays_private(alice, charlie):
    public = post(
        alice, "/api/memories", {"content": PUBLIC, "visibility": "global", "tags": ["billing"]}
    )
    assert public.status_code == 201
    secret = post(
        alice, "/api/memories", {"content": SECRET, "visibility": "private", "tags": ["billing"]}
    )
    assert secret.status_code == 201
    body = secret.json()
    assert body["id"] != public.json()["id"]
    assert (body["visibility"], body["outcome"]) == ("private", "created")
    assert Fact.objects.get(pk=public.json()["id"]).content == PUBLIC
    assert secret_seen(charlie, [public.json()["id"]]) == []
    assert secret_seen(charlie, [body["id"]]) == []
    assert not any(
        "hunter2" in item["content"]
        for item in charlie.get("/api/memories", {"limit": 200}).json()["items"]
    )


def test_a_private_repeat_of_a_team_fact_stays_out_of_the_team(alice, bob):
    team_fact = post(
        alice, "/api/memories", {"content": PUBLIC, "visibility": "team", "tags": ["billing"]}
    ).json()
    secret = post(
        alice, "/api/memories", {"content": SECRET, "visibility": "private", "tags": ["billing"]}
    )
    assert secret.status_code == 201
    assert Fact.objects.get(pk=team_fact["id"]).content == PUBLIC
    assert secret_seen(bob, [team_fact["id"]]) == []
    assert secret_seen(bob, [secret.json()["id"]]) == []


def test_a_global_repeat_of_a_private_fact_is_readable_by_everyone(alice, bob, charlie):
    private = post(
        alice, "/api/memories", {"content": SECRET, "visibility": "private", "tags": ["billing"]}
    ).json()
    public = post(
        alice,
        "/api/memories",
        {"content": SECRET + ".", "visibility": "global", "tags": ["billing"]},
    )
    assert public.status_code == 201
    assert public.json()["visibility"] == "global"
    assert Fact.objects.get(pk=private["id"]).visibility == "private"
    assert "get" in secret_seen(bob, [public.json()["id"]])
    assert "get" in secret_seen(charlie, [public.json()["id"]])


def test_a_batch_never_merges_across_visibilities(alice, bob, charlie):
    post(alice, "/api/memories", {"content": PUBLIC, "visibility": "global", "tags": ["billing"]})
    response = post(
        alice,
        "/api/memories/batch",
        {
            "items": [
                {"content": SECRET, "visibility": "private", "tags": ["billing"]},
                {"content": SECRET + "!", "visibility": "team", "tags": ["billing"]},
                {"content": SECRET + "?", "visibility": "private", "tags": ["billing"]},
            ]
        },
    )
    assert response.status_code == 201
    items = response.json()["items"]
    # The two private items are one statement; the team one stands apart.
    assert [item["created"] for item in items] == [True, True, False]
    assert items[2]["id"] == items[0]["id"]
    assert Fact.objects.get(pk=items[0]["id"]).visibility == "private"
    assert Fact.objects.get(pk=items[1]["id"]).visibility == "team"
    assert secret_seen(charlie, [item["id"] for item in items]) == []
    # The teammate reads the team statement, and only that one.
    assert bob.get(f"/api/memories/{items[0]['id']}").status_code == 404
    assert "get" in secret_seen(bob, [items[1]["id"]])


def test_facts_of_the_same_visibility_still_merge_and_the_answer_says_so(alice):
    first = post(alice, "/api/memories", {"content": PUBLIC, "visibility": "team"}).json()
    again = post(alice, "/api/memories", {"content": PUBLIC + "!", "visibility": "team"})
    assert again.status_code == 200
    assert (again.json()["id"], again.json()["outcome"]) == (first["id"], "merged")


def test_a_visibility_change_rekeys_the_fact(alice, owner):
    first = post(alice, "/api/memories", {"content": PUBLIC, "visibility": "private"}).json()
    assert (
        alice.patch(
            f"/api/memories/{first['id']}",
            {"visibility": "global"},
            content_type="application/json",
        ).status_code
        == 200
    )
    private_again = post(alice, "/api/memories", {"content": PUBLIC + "!", "visibility": "private"})
    assert private_again.status_code == 201
    global_again = post(alice, "/api/memories", {"content": PUBLIC + "?", "visibility": "global"})
    assert (global_again.status_code, global_again.json()["id"]) == (200, first["id"])
