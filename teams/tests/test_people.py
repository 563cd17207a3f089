"""People on the Teams page: staff invite, deactivate and reactivate them without the
Django admin; members see who is in their team; every change says it was made."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from teams.models import AuditEvent, Membership, Role

pytestmark = pytest.mark.django_db

User = get_user_model()
NEW_PASSWORD = "plum orchard lantern 42"
FIXTURE_PASSWORD = "correct horse battery staple"  # make_user's


def invite(client: Client, **data: object):
    return client.post("/teams/people/new/", {"role": "member", **data}, follow=True)


def invite_link(response) -> str:
    match = re.search(
        r'id="invite-link">https?://[^/]+(/invite/[^<]+)</code>', response.content.decode()
    )
    assert match, "no invite link on the page"
    return match.group(1)


def accept(link: str, password: str = NEW_PASSWORD) -> Client:
    """Follow an invite link in a fresh browser session and set the password."""
    browser = Client()
    response = browser.get(link)
    assert response.status_code == 302  # the token moves out of the address
    form_url = response["Location"]
    response = browser.post(form_url, {"new_password1": password, "new_password2": password})
    assert response.status_code == 302 and response["Location"] == "/login/"
    return browser


def log_in(username: str, password: str = NEW_PASSWORD) -> Client:
    browser = Client()
    response = browser.post("/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.content.decode()
    return browser


@pytest.fixture
def team_fact(owner_client, team) -> int:
    response = owner_client.post(
        "/api/memories",
        {"content": "Deploys freeze on Fridays after 3pm", "visibility": "team"},
        content_type="application/json",
    )
    assert response.status_code == 201
    return response.json()["id"]


def test_staff_invite_a_person_into_a_team_who_then_reads_its_facts(staff_client, team, team_fact):
    response = invite(staff_client, username="erin", email="Erin@Example.COM", team=team.pk)
    assert response.redirect_chain == [("/teams/#invite", 302)]  # a reload sends nothing
    page = response.content.decode()
    assert "erin is invited to Platform as member: send them the link to set a password." in page
    assert 'data-copy="invite-link"' in page
    # Shown once: the page reloaded has no link, and no second invite was made.
    assert 'id="invite-link"' not in staff_client.get("/teams/").content.decode()
    assert User.objects.filter(username="erin").count() == 1

    erin = User.objects.get(username="erin")
    assert not erin.has_usable_password()
    assert erin.email == "Erin@example.com"
    assert Membership.objects.get(user=erin, team=team).role == Role.MEMBER
    assert {"user.invite", "membership.add"} <= set(
        AuditEvent.objects.filter(actor_label="dana").values_list("action", flat=True)
    )

    link = invite_link(response)
    accept(link)
    erin_client = log_in("erin")
    assert erin_client.get(f"/api/memories/{team_fact}").status_code == 200
    assert AuditEvent.objects.filter(action="user.invite_accept", actor=erin).exists()

    # The link worked once.
    response = Client().get(link, follow=True)
    assert "This link is no longer valid" in response.content.decode()


def test_an_invite_without_a_team_reads_no_team_facts(staff_client, team, team_fact):
    accept(invite_link(invite(staff_client, username="frank")))
    assert log_in("frank").get(f"/api/memories/{team_fact}").status_code == 404


def test_only_staff_invite_or_deactivate_people(owner_client, teammate, team):
    response = invite(owner_client, username="mallory", team=team.pk)
    assert response.status_code == 403
    assert not User.objects.filter(username="mallory").exists()
    for path in (f"/teams/people/{teammate.pk}/active/", f"/teams/people/{teammate.pk}/invite/"):
        assert owner_client.post(path, {"active": "0"}).status_code == 403
    teammate.refresh_from_db()
    assert teammate.is_active
    assert "People" not in owner_client.get("/teams/").content.decode()


@pytest.mark.parametrize(
    ("username", "email", "status", "message"),
    [
        ("ALICE", "", 409, "There is already a person named"),
        ("has space", "", 400, "letters, digits and @ . + - _ only"),
        ("tab\tname", "", 400, "letters, digits and @ . + - _ only"),
        ("x" * 151, "", 400, "at most 150 characters"),
        ("gina", "not-an-email", 400, "Enter a valid email address."),
    ],
)
def test_bad_invites_are_refused_and_change_nothing(
    staff_client, owner, username, email, status, message
):
    before = User.objects.count()
    response = invite(staff_client, username=username, email=email)
    assert response.status_code == status
    assert message in response.content.decode()
    assert User.objects.count() == before


def test_a_username_with_a_lone_surrogate_is_refused(staff):
    from memoryhub.engine.errors import InvalidInput
    from teams.services import Actor, user_invite

    with pytest.raises(InvalidInput, match="letters, digits"):
        user_invite(actor=Actor(user=staff), username="\ud800")
    assert not User.objects.exclude(pk=staff.pk).exists()


def test_a_deactivated_person_can_no_longer_log_in_or_use_tokens(
    staff_client, teammate, team, team_fact, agent_client
):
    agent = agent_client(teammate)
    assert agent.get(f"/api/memories/{team_fact}").status_code == 200

    response = staff_client.post(f"/teams/people/{teammate.pk}/active/", {"active": "0"})
    assert response.status_code == 302
    page = staff_client.get("/teams/").content.decode()
    assert "bob is deactivated: they can no longer log in." in page

    teammate.refresh_from_db()
    assert not teammate.is_active
    assert agent.get(f"/api/memories/{team_fact}").status_code == 401
    response = Client().post("/login/", {"username": "bob", "password": FIXTURE_PASSWORD})
    assert response.status_code == 200
    assert AuditEvent.objects.filter(action="user.deactivate", target_id=str(teammate.pk)).exists()

    staff_client.post(f"/teams/people/{teammate.pk}/active/", {"active": "1"})
    assert "bob is reactivated." in staff_client.get("/teams/").content.decode()
    assert agent.get(f"/api/memories/{team_fact}").status_code == 200


def test_staff_cannot_deactivate_themselves(staff_client, staff):
    staff_client.post(f"/teams/people/{staff.pk}/active/", {"active": "0"})
    assert "You cannot deactivate yourself." in staff_client.get("/teams/").content.decode()
    staff.refresh_from_db()
    assert staff.is_active


def test_staff_make_a_new_invite_link_until_the_password_is_set(staff_client, owner):
    invite(staff_client, username="hana")
    hana = User.objects.get(username="hana")
    response = staff_client.post(f"/teams/people/{hana.pk}/invite/", follow=True)
    assert "A new invite link for hana is ready." in response.content.decode()
    accept(invite_link(response))

    staff_client.post(f"/teams/people/{hana.pk}/invite/")
    assert "hana has already set a password." in staff_client.get("/teams/").content.decode()
    response = staff_client.post(f"/teams/people/{owner.pk}/invite/")
    assert response.status_code == 302


def test_a_member_sees_who_is_in_their_team(teammate_client, team, other_team):
    page = teammate_client.get("/teams/").content.decode()
    assert "alice" in page and "bob" in page
    assert "Elsewhere" not in page and "charlie" not in page


def test_member_changes_on_the_team_page_say_what_changed(owner_client, team, teammate, make_user):
    erin = make_user("erin")
    htmx = {"HX-Request": "true"}
    response = owner_client.post(
        f"/teams/{team.pk}/members/", {"user": erin.pk, "role": "member"}, headers=htmx
    )
    assert "erin added to Platform as member." in response.content.decode()
    membership = Membership.objects.get(user=teammate, team=team)
    response = owner_client.post(
        f"/teams/{team.pk}/members/{membership.pk}/role/", {"role": "admin"}, headers=htmx
    )
    assert "bob is now admin of Platform." in response.content.decode()
    response = owner_client.post(f"/teams/{team.pk}/members/{membership.pk}/remove/", headers=htmx)
    assert "bob removed from Platform." in response.content.decode()


def test_the_people_list_costs_the_same_queries_for_more_people(
    staff_client, team, make_user, django_assert_max_num_queries
):
    staff_client.get("/teams/")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        staff_client.get("/teams/")
    for name in ("p1", "p2", "p3", "p4"):
        make_user(name).groups.add(team)
    with django_assert_max_num_queries(len(few)):
        assert "p4" in staff_client.get("/teams/").content.decode()


def test_staff_make_a_password_reset_link_that_works_once(staff_client, owner):
    response = staff_client.post(f"/teams/people/{owner.pk}/password/", follow=True)
    assert "A password reset link for alice is ready." in response.content.decode()
    link = invite_link(response)
    assert AuditEvent.objects.filter(action="user.password_reset", target_id=str(owner.pk)).exists()
    form = Client().get(link, follow=True).content.decode()
    assert "alice, choose a new password." in form

    accept(link, password="a new and long passphrase")
    assert log_in("alice", password="a new and long passphrase")
    assert "This link is no longer valid" in Client().get(link, follow=True).content.decode()
    assert not AuditEvent.objects.filter(action="user.invite_accept").exists()


def test_only_staff_make_a_password_reset_link(owner_client, teammate):
    assert owner_client.post(f"/teams/people/{teammate.pk}/password/").status_code == 403


def test_a_team_admin_renames_their_team_and_an_outsider_cannot(
    owner_client, outsider_client, team
):
    renamed = owner_client.post(f"/teams/{team.pk}/rename/", {"name": "Platform Core"}, follow=True)
    assert "The team is now called Platform Core." in renamed.content.decode()
    team.refresh_from_db()
    assert team.name == "Platform Core"
    assert AuditEvent.objects.filter(action="team.rename", details__from="Platform").exists()
    assert outsider_client.post(f"/teams/{team.pk}/rename/", {"name": "Mine"}).status_code == 404
    team.refresh_from_db()
    assert team.name == "Platform Core"
