"""Team rows follow the active team, as Aura's ACL has it: an agent reads the team rows
of its user's active team (Settings), on every path a token takes; with no team active,
those of every team of theirs. People on the dashboard see every team of theirs."""

import json

import pytest
from django.contrib.auth.models import Group

from teams.models import Membership, MemorySettings, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_teams(owner, teammate, outsider, team):
    """alice is in Platform (active) and Research; bob writes to Platform, charlie to
    Research."""
    research = Group.objects.create(name="Research")
    Membership.objects.create(user=owner, team=research, role=Role.MEMBER)
    Membership.objects.create(user=outsider, team=research, role=Role.ADMIN)
    return team, research


def write(client, content: str, team: str) -> int:
    answer = client.post(
        "/api/memories",
        json.dumps({"content": content, "visibility": "team", "team": team}),
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


def recalled(client, query: str) -> set[int]:
    answer = client.post(
        "/api/recall", json.dumps({"query": query}), content_type="application/json"
    )
    return {item["id"] for item in answer.json()["items"]}


def test_an_agent_reads_the_team_rows_of_its_users_active_team_only(
    owner, teammate, outsider, two_teams, agent_client, owner_client
):
    _, research = two_teams
    deploys = write(agent_client(teammate), "Platform deploys freeze on Fridays", "Platform")
    grants = write(agent_client(outsider), "Research grants close in March", "Research")
    alice = agent_client(owner)

    assert recalled(alice, "deploys freeze Fridays") == {deploys}
    assert recalled(alice, "research grants March") == set()
    assert alice.get(f"/api/memories/{grants}").status_code == 404
    tool = alice.post(
        "/api/tools/memory_get", json.dumps({"ids": [grants]}), content_type="application/json"
    )
    assert "March" not in tool.content.decode()
    # On the dashboard alice reads both teams' rows.
    assert owner_client.get(f"/memory/{grants}/").status_code == 200

    MemorySettings.objects.filter(user=owner).update(active_team=research)
    assert recalled(alice, "research grants March") == {grants}
    assert alice.get(f"/api/memories/{deploys}").status_code == 404

    MemorySettings.objects.filter(user=owner).update(active_team=None)
    assert recalled(alice, "deploys freeze Fridays research grants March") == {deploys, grants}


def test_an_agent_still_reads_its_users_own_rows_of_another_team(owner, two_teams, agent_client):
    alice = agent_client(owner)
    own = write(alice, "Research datasets live on the lab share", "Research")
    assert alice.get(f"/api/memories/{own}").status_code == 200


def test_the_dashboard_lists_every_team_of_theirs_with_a_team_filter(
    owner, teammate, outsider, two_teams, agent_client, owner_client
):
    _, research = two_teams
    deploys = write(agent_client(teammate), "Platform deploys freeze on Fridays", "Platform")
    grants = write(agent_client(outsider), "Research grants close in March", "Research")

    everything = owner_client.get("/memory/").content.decode()
    only_research = owner_client.get("/memory/", {"team": research.pk}).content.decode()

    assert f'id="fact-{deploys}"' in everything and f'id="fact-{grants}"' in everything
    assert f'id="fact-{grants}"' in only_research and f'id="fact-{deploys}"' not in only_research
    assert '<option value="' + str(research.pk) + '">Research</option>' in everything
    # A team of someone else's is no choice: the filter is refused, nothing listed.
    other = Group.objects.create(name="Hidden")
    refused = owner_client.get("/memory/", {"team": other.pk})
    assert f'id="fact-{deploys}"' not in refused.content.decode()


def test_a_token_that_names_its_team_reads_that_teams_rows_whatever_is_active(
    owner, teammate, outsider, two_teams, agent_client, make_token, owner_client
):
    from django.test import Client

    from teams.services import Actor, agent_token_create, membership_remove

    _, research = two_teams
    deploys = write(agent_client(teammate), "Platform deploys freeze on Fridays", "Platform")
    grants = write(agent_client(outsider), "Research grants close in March", "Research")
    # alice's active team is Platform; this token of hers reads Research's rows instead.
    token, secret = agent_token_create(
        actor=Actor(user=owner), name="research-bot", scopes=["read"], team="Research"
    )
    assert token.team == research
    bot = Client(headers={"Authorization": f"Bearer {secret}"})
    assert recalled(bot, "research grants March") == {grants}
    assert recalled(bot, "deploys freeze Fridays") == set()
    assert bot.get(f"/api/memories/{deploys}").status_code == 404
    # Changing the active team changes nothing for it.
    MemorySettings.objects.filter(user=owner).update(active_team=None)
    assert recalled(bot, "deploys freeze Fridays") == set()
    # Once alice leaves Research, it reads no team rows at all.
    membership = Membership.objects.get(user=owner, team=research)
    membership_remove(actor=Actor(user=outsider), membership=membership)
    assert recalled(bot, "research grants March") == set()
    assert recalled(bot, "deploys freeze Fridays") == set()
    # A token names only a team its user belongs to; the Agents form offers those.
    with pytest.raises(Exception, match="not a member"):
        agent_token_create(actor=Actor(user=owner), name="x", scopes=["read"], team="Research")
    page = owner_client.get("/agents/").content.decode()
    assert ">Platform</option>" in page and ">Research</option>" not in page
