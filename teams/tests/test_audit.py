"""Token creation and revocation, team and membership changes are audited; the audit
page filters and paginates, and shows people only what they may read."""

import datetime
import html
import re

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from teams.models import AgentToken, AuditEvent, Membership

pytestmark = pytest.mark.django_db


def listed(html: bytes) -> set[str]:
    """The actions shown in the results table (not the filter's dropdown)."""
    return set(re.findall(r"<td class=\"audit-action\"><code>([^<]+)</code></td>", html.decode()))


def actions() -> list[str]:
    return list(AuditEvent.objects.order_by("id").values_list("action", flat=True))


def test_token_create_and_revoke_are_audited(owner_client, owner):
    response = owner_client.post("/agents/", {"name": "deploy-bot", "scopes": ["read"]})
    assert response.status_code == 200
    token = AgentToken.objects.get(name="deploy-bot")
    owner_client.post(f"/agents/{token.pk}/revoke/")
    events = AuditEvent.objects.order_by("id")
    assert [e.action for e in events] == ["token.create", "token.revoke"]
    assert all(e.actor == owner and e.target_id == str(token.pk) for e in events)
    assert events[0].details["scopes"] == ["read"]


def test_secret_is_shown_once_on_creation_and_never_again(owner_client):
    response = owner_client.post("/agents/", {"name": "deploy-bot", "scopes": ["read", "write"]})
    html = response.content.decode()
    start = html.index('id="new-secret">') + len('id="new-secret">')
    secret = html[start : html.index("</code>", start)]
    assert secret.startswith("mh_")
    assert secret not in owner_client.get("/agents/").content.decode()


def test_team_and_membership_changes_are_audited(staff_client, staff, owner, teammate):
    staff_client.post("/teams/new/", {"name": "Research"})
    team = Group.objects.get(name="Research")
    staff_client.post(f"/teams/{team.pk}/members/", {"user": owner.pk, "role": "member"})
    membership = Membership.objects.get(team=team, user=owner)
    staff_client.post(f"/teams/{team.pk}/members/{membership.pk}/role/", {"role": "admin"})
    staff_client.post(f"/teams/{team.pk}/members/{membership.pk}/remove/")
    staff_client.post(f"/teams/{team.pk}/delete/")
    assert actions() == [
        "team.create",
        "membership.add",
        "membership.role",
        "membership.remove",
        "team.delete",
    ]
    role_event = AuditEvent.objects.get(action="membership.role")
    assert role_event.details == {
        "team": "Research",
        "user": "alice",
        "from": "member",
        "to": "admin",
    }
    assert not Group.objects.filter(name="Research").exists()


def test_agent_actions_are_attributed_to_user_and_token(owner, agent_client, team):
    client = agent_client(owner, name="ci-bot")
    client.put(
        "/api/me/settings",
        {"active_team": "Platform", "default_visibility": "team"},
        content_type="application/json",
    )
    event = AuditEvent.objects.get(action="settings.memory")
    assert event.actor == owner
    assert event.actor_token.name == "ci-bot"
    assert event.actor_label == "alice via agent ci-bot"


def test_audit_page_filters_by_actor_action_and_date(staff_client, staff, owner):
    from teams.services import Actor, audit_log

    audit_log(actor=Actor(user=owner), action="fact.create", target_type="fact", target_id=1)
    audit_log(actor=Actor(user=staff), action="team.create", target_type="team", target_id=2)
    old = audit_log(actor=Actor(user=owner), action="fact.delete", target_type="fact", target_id=3)
    AuditEvent.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - datetime.timedelta(days=10)
    )
    assert listed(staff_client.get("/audit/").content) == {
        "fact.create",
        "fact.delete",
        "team.create",
    }
    assert listed(staff_client.get("/audit/", {"actor": "alice"}).content) == {
        "fact.create",
        "fact.delete",
    }
    assert listed(staff_client.get("/audit/", {"action": "team.create"}).content) == {"team.create"}
    since = (timezone.now() - datetime.timedelta(days=2)).date().isoformat()
    assert listed(staff_client.get("/audit/", {"date_from": since}).content) == {
        "fact.create",
        "team.create",
    }
    until = (timezone.now() - datetime.timedelta(days=5)).date().isoformat()
    assert listed(staff_client.get("/audit/", {"date_to": until}).content) == {"fact.delete"}


def test_audit_page_paginates(staff_client, staff, settings):
    from teams.services import Actor, audit_log

    settings.AUDIT_PAGE_SIZE = 5
    for i in range(12):
        audit_log(actor=Actor(user=staff), action="probe", target_type="n", target_id=i)
    first = staff_client.get("/audit/").content.decode()
    assert "Page 1 of 3" in first and "n #11" in first and "n #6" not in first
    third = staff_client.get("/audit/", {"page": 3}).content.decode()
    assert "n #0" in third and "n #11" not in third


def test_people_see_only_their_own_events_staff_see_all(
    owner_client, outsider_client, owner, outsider
):
    from teams.services import Actor, audit_log

    audit_log(actor=Actor(user=owner), action="secret.thing", target_type="fact", target_id=7)
    assert "secret.thing" in listed(owner_client.get("/audit/").content)
    assert "secret.thing" not in outsider_client.get("/audit/").content.decode()


def test_audit_page_lists_in_a_constant_number_of_queries(
    staff_client, staff, django_assert_max_num_queries
):
    from teams.services import Actor, audit_log

    for i in range(30):
        audit_log(actor=Actor(user=staff), action="probe", target_type="n", target_id=i)
    with django_assert_max_num_queries(8):
        assert staff_client.get("/audit/").status_code == 200


def test_audit_page_needs_login(client):
    response = client.get("/audit/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def sentences(content: bytes) -> list[str]:
    """The results' sentences as read, tags stripped."""
    cells = re.findall(
        r'<td class="audit-sentence">(.*?)(?:<details|</td>)', content.decode(), re.S
    )
    return [html.unescape(" ".join(re.sub(r"<[^>]+>", "", cell).split())) for cell in cells]


def test_each_event_reads_as_a_sentence_linking_to_what_still_exists(
    owner, owner_client, agent_client
):
    agent = agent_client(owner, name="ci-bot")
    kept = agent.post("/api/memories", {"content": "Deploys run on Tuesdays"},
                      content_type="application/json").json()["id"]  # fmt: skip
    gone = agent.post("/api/memories", {"content": "The staging box is called kestrel"},
                      content_type="application/json").json()["id"]  # fmt: skip
    owner_client.post(
        "/api/forget", {"topic": "kestrel", "ids": [gone]}, content_type="application/json"
    )
    assert agent.get(f"/api/memories/{gone}").status_code == 404

    content = owner_client.get("/audit/").content
    said = sentences(content)

    assert f"alice's agent ci-bot wrote fact #{kept}" in said
    assert f"alice's agent ci-bot wrote fact #{gone}" in said
    assert "alice forgot 1 fact" in said
    page = content.decode()
    assert f'<a href="/memory/{kept}/">fact #{kept}</a>' in page
    assert f'<a href="/memory/{gone}/">' not in page  # forgotten: no link to a 404
    assert "{'" not in page and "': " not in page.split("<details")[0]  # no Python repr


def test_a_sentence_escapes_what_people_typed(staff, staff_client):
    from teams.services import Actor, audit_log

    audit_log(
        actor=Actor(user=staff),
        action="team.create",
        target_type="team",
        target_id=999,
        details={"name": "<script>alert(1)</script>"},
    )
    page = staff_client.get("/audit/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "created team &lt;script&gt;alert(1)&lt;/script&gt; #999" in page
