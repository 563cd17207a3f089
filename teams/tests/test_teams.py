"""Teams (partitions), memberships and per-user memory settings, in the dashboard and
the API; outsiders are refused and bad input changes nothing."""

import pytest
from django.contrib.auth.models import Group

from teams.models import AuditEvent, Membership, MemorySettings

pytestmark = pytest.mark.django_db


def test_only_staff_create_teams(owner_client, staff_client):
    response = owner_client.post("/teams/new/", {"name": "Rogue"})
    assert response.status_code == 403
    assert not Group.objects.filter(name="Rogue").exists()
    response = staff_client.post("/teams/new/", {"name": "Research"})
    assert response.status_code == 302
    assert Group.objects.filter(name="Research").exists()


def test_duplicate_or_blank_team_name_is_refused(staff_client, team):
    assert staff_client.post("/teams/new/", {"name": "platform"}).status_code == 409
    assert staff_client.post("/teams/new/", {"name": "   "}).status_code == 400
    assert Group.objects.count() == 1


def test_outsider_cannot_see_or_manage_a_team(outsider_client, team, outsider, teammate):
    assert outsider_client.get(f"/teams/{team.pk}/").status_code == 404
    response = outsider_client.post(
        f"/teams/{team.pk}/members/", {"user": outsider.pk, "role": "admin"}
    )
    assert response.status_code == 404
    membership = Membership.objects.get(team=team, user=teammate)
    response = outsider_client.post(f"/teams/{team.pk}/members/{membership.pk}/remove/")
    assert response.status_code == 404
    assert Membership.objects.filter(team=team).count() == 2
    assert "Platform" not in outsider_client.get("/teams/").content.decode()


def test_plain_member_sees_the_team_but_cannot_manage_it(
    teammate_client, team, teammate, make_user
):
    newcomer = make_user("erin")
    page = teammate_client.get(f"/teams/{team.pk}/").content.decode()
    assert "alice" in page and "Add member" not in page
    response = teammate_client.post(
        f"/teams/{team.pk}/members/", {"user": newcomer.pk, "role": "member"}
    )
    assert response.status_code == 403
    assert not Membership.objects.filter(user=newcomer).exists()


def test_team_admin_manages_members_with_htmx_partials(owner_client, team, make_user):
    newcomer = make_user("erin")
    response = owner_client.post(
        f"/teams/{team.pk}/members/",
        {"user": newcomer.pk, "role": "member"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="members">')
    assert "erin" in html
    assert Membership.objects.filter(user=newcomer, team=team).exists()


def test_removing_a_member_clears_their_active_team(owner_client, team, teammate):
    MemorySettings.objects.update_or_create(user=teammate, defaults={"active_team": team})
    membership = Membership.objects.get(team=team, user=teammate)
    owner_client.post(f"/teams/{team.pk}/members/{membership.pk}/remove/")
    assert MemorySettings.objects.get(user=teammate).active_team is None


def test_bad_role_is_refused(owner_client, team, teammate):
    membership = Membership.objects.get(team=team, user=teammate)
    response = owner_client.post(
        f"/teams/{team.pk}/members/{membership.pk}/role/", {"role": "emperor"}
    )
    assert response.status_code == 400
    membership.refresh_from_db()
    assert membership.role == "member"


def test_settings_page_sets_active_team_and_default_visibility(owner_client, owner, team):
    response = owner_client.post(
        "/settings/", {"active_team": team.pk, "default_visibility": "team"}
    )
    assert response.status_code == 302
    prefs = MemorySettings.objects.get(user=owner)
    assert (prefs.active_team, prefs.default_visibility) == (team, "team")


def test_a_team_the_user_is_not_in_cannot_be_made_active(outsider_client, outsider, team):
    response = outsider_client.post(
        "/settings/", {"active_team": team.pk, "default_visibility": "private"}
    )
    assert response.status_code == 400
    assert not MemorySettings.objects.filter(user=outsider, active_team=team).exists()


def test_api_settings_refuse_non_member_team_and_change_nothing(outsider, agent_client, team):
    client = agent_client(outsider)
    before = AuditEvent.objects.count()
    response = client.put(
        "/api/me/settings",
        {"active_team": "Platform", "default_visibility": "team"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "not a member" in response.json()["detail"]
    assert not MemorySettings.objects.filter(user=outsider, active_team=team).exists()
    assert AuditEvent.objects.count() == before


def test_api_settings_refuse_unknown_team_and_unknown_visibility(owner, agent_client, team):
    client = agent_client(owner)
    response = client.put(
        "/api/me/settings", {"active_team": "Nope"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "Unknown team 'Nope'" in response.json()["detail"]
    response = client.put(
        "/api/me/settings", {"default_visibility": "public"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "Unknown visibility 'public'" in response.json()["detail"]


def test_api_settings_accept_team_by_name_or_id(owner, agent_client, team):
    client = agent_client(owner)
    response = client.put(
        "/api/me/settings",
        {"active_team": team.pk, "default_visibility": "team"},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["settings"] == {"active_team": "Platform", "default_visibility": "team"}


def test_api_teams_lists_only_the_callers_teams(outsider, agent_client, team, other_team):
    response = agent_client(outsider).get("/api/teams")
    assert [t["name"] for t in response.json()] == ["Elsewhere"]
