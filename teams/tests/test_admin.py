"""The Django admin and the teams agree: a user's Groups are their team memberships, so
adding or removing a group in the admin grants or revokes what the team may read."""

import pytest
from django.contrib.auth.models import Group
from django.forms import MultiWidget
from django.test import Client

from teams.models import AgentToken, AuditEvent, Membership, MemorySettings, Role
from teams.services import Actor, membership_add, membership_remove

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser(make_user):
    return make_user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def admin_client(superuser) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def newcomer(make_user):
    return make_user("erin")


@pytest.fixture
def team_fact(owner_client, team) -> int:
    response = owner_client.post(
        "/api/memories",
        {"content": "The platform on-call rota lives in PagerDuty", "visibility": "team"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def change_form_data(client: Client, url: str) -> dict:
    """What the admin's change form would post back unchanged, read from the form the
    admin renders."""
    response = client.get(url)
    assert response.status_code == 200
    form = response.context["adminform"].form
    data: dict = {"_save": "Save"}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form[name].value()
        if isinstance(field.widget, MultiWidget):
            for index, part in enumerate(field.widget.decompress(value)):
                data[f"{name}_{index}"] = "" if part is None else str(part)
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, list | tuple):
            data[name] = [str(item) for item in value]
        elif value is not None:
            data[name] = str(value)
    return data


def save_groups(client: Client, user, teams: list[Group]):
    url = f"/admin/auth/user/{user.pk}/change/"
    data = change_form_data(client, url)
    data["groups"] = [str(team.pk) for team in teams]
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    return response


def reads(client: Client, fact_id: int) -> bool:
    return client.get(f"/api/memories/{fact_id}").status_code == 200


def test_adding_a_group_in_the_admin_lets_the_user_read_the_teams_facts(
    admin_client, newcomer, team, team_fact
):
    newcomer_client = Client()
    newcomer_client.force_login(newcomer)
    assert not reads(newcomer_client, team_fact)

    save_groups(admin_client, newcomer, [team])

    membership = Membership.objects.get(user=newcomer, team=team)
    assert membership.role == Role.MEMBER
    assert membership.created_at is not None
    assert reads(newcomer_client, team_fact)
    page = Client()
    page.force_login(team.memberships.get(role=Role.ADMIN).user)
    assert "erin" in page.get(f"/teams/{team.pk}/").content.decode()


def test_removing_a_group_in_the_admin_revokes_the_teams_facts(
    admin_client, teammate, teammate_client, team, team_fact
):
    MemorySettings.objects.update_or_create(user=teammate, defaults={"active_team": team})
    assert reads(teammate_client, team_fact)

    save_groups(admin_client, teammate, [])

    assert not Membership.objects.filter(user=teammate, team=team).exists()
    assert not reads(teammate_client, team_fact)
    assert MemorySettings.objects.get(user=teammate).active_team is None
    event = AuditEvent.objects.get(action="membership.remove")
    assert event.details == {"team": "Platform", "user": "bob", "via": "admin"}
    assert event.actor_label == "root"


def test_a_member_added_on_the_teams_page_shows_as_a_group_in_the_admin(
    admin_client, owner, team, newcomer
):
    membership_add(actor=Actor(user=owner), team=team, user=newcomer, role=Role.ADMIN)

    assert list(newcomer.groups.all()) == [team]
    data = change_form_data(admin_client, f"/admin/auth/user/{newcomer.pk}/change/")
    assert data["groups"] == [str(team.pk)]


def test_saving_a_user_in_the_admin_keeps_their_team_role(admin_client, owner, team):
    save_groups(admin_client, owner, [team])
    assert Membership.objects.get(user=owner, team=team).role == Role.ADMIN


def test_groups_add_and_remove_are_memberships(newcomer, team):
    newcomer.groups.add(team)
    assert Membership.objects.get(user=newcomer, team=team).role == Role.MEMBER

    newcomer.groups.remove(team)
    assert not Membership.objects.filter(user=newcomer).exists()


def test_deleting_a_user_or_a_team_removes_their_memberships(owner, teammate, team):
    teammate.delete()
    assert list(Membership.objects.values_list("user__username", flat=True)) == ["alice"]
    team.delete()
    assert not Membership.objects.exists()
    assert not owner.groups.exists()


def test_removing_a_member_on_the_teams_page_removes_the_group(owner, teammate, team):
    membership = Membership.objects.get(user=teammate, team=team)
    membership_remove(actor=Actor(user=owner), membership=membership)
    assert not teammate.groups.exists()


def test_the_team_admin_lists_members_with_their_roles(admin_client, team):
    page = admin_client.get(f"/admin/auth/group/{team.pk}/change/").content.decode()
    assert "alice" in page and "bob" in page
    assert 'value="admin" selected' in page
    listing = admin_client.get("/admin/auth/group/").content.decode()
    assert "Platform" in listing


def test_admin_changes_are_audited(admin_client, team):
    data = change_form_data(admin_client, f"/admin/auth/group/{team.pk}/change/")
    data.update(
        {
            "name": "Platform Ops",
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
        }
    )
    response = admin_client.post(f"/admin/auth/group/{team.pk}/change/", data)
    assert response.status_code == 302
    event = AuditEvent.objects.get(action="admin.change")
    assert (event.target_type, event.target_id) == ("team", str(team.pk))
    assert "Name" in event.details["change"]


def test_the_token_admin_never_shows_the_secret_and_revokes(admin_client, owner, make_token):
    token, secret = make_token(owner, name="ci-bot")
    page = admin_client.get(f"/admin/teams/agenttoken/{token.pk}/change/").content.decode()
    assert "ci-bot" in page
    assert token.secret_hash not in page and secret not in page
    assert admin_client.get("/admin/teams/agenttoken/add/").status_code == 403

    response = admin_client.post(
        "/admin/teams/agenttoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert response.status_code == 302
    assert AgentToken.objects.get(pk=token.pk).revoked_at is not None
    assert AuditEvent.objects.filter(action="token.revoke", actor_label="root").exists()


def test_the_audit_trail_is_read_only_in_the_admin(admin_client, owner):
    event = AuditEvent.objects.create(actor=owner, actor_label="alice", action="fact.delete")
    assert admin_client.get("/admin/teams/auditevent/").status_code == 200
    assert admin_client.get("/admin/teams/auditevent/add/").status_code == 403
    url = f"/admin/teams/auditevent/{event.pk}/"
    assert admin_client.post(f"{url}change/", {"action": "nothing"}).status_code == 403
    assert admin_client.post(f"{url}delete/", {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.get(pk=event.pk).action == "fact.delete"


def test_the_admin_shows_no_rows_the_access_rule_hides(admin_client):
    """Facts, wiki pages and code are read through the dashboard and the API, where the
    access rule applies; the admin lists none of them."""
    index = admin_client.get("/admin/").content.decode()
    for app in ("facts", "wiki", "codegraph", "concepts"):
        assert f"/admin/{app}/" not in index
    assert admin_client.get("/admin/facts/fact/").status_code == 404


def test_people_who_are_not_staff_cannot_open_the_admin(owner_client):
    response = owner_client.get("/admin/auth/user/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
