"""A row named by id or by name: only ASCII digits within a column's range make an id,
so odd digits and huge numbers get a 4xx, never a 500."""

import pytest

from memoryhub.engine.refs import MAX_ID, id_of

ODD = ["²", "٣", str(10**30)]


def test_only_ascii_digits_in_range_make_an_id():
    assert [id_of(r) for r in (7, "7", " 12 ", MAX_ID)] == [7, 7, 12, MAX_ID]
    assert [id_of(r) for r in ("platform", "-3", True, MAX_ID + 1, *ODD)] == [None] * 7


@pytest.mark.django_db
@pytest.mark.parametrize("team", ODD)
def test_odd_team_references_are_refused_or_match_nothing(owner, agent_client, team):
    client = agent_client(owner)
    response = client.post(
        "/api/memories", {"content": "Deploys on Tuesday", "team": team}, "application/json"
    )
    assert response.status_code == 400 and "Unknown team" in response.json()["detail"]
    listed = client.get("/api/memories", {"team": team})
    assert (listed.status_code, listed.json()["count"]) == (200, 0)
    settings = client.put(
        "/api/me/settings",
        {"active_team": team, "default_visibility": "private"},
        "application/json",
    )
    assert settings.status_code == 400
    assert client.get("/api/codegraph/query", {"q": "login", "project": team}).status_code == 404
