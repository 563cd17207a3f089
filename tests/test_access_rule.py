"""The one access rule (DESIGN section 2), for every viewer and visibility."""

import pytest
from django.contrib.auth.models import AnonymousUser

from facts.models import Fact
from teams.models import Visibility

pytestmark = pytest.mark.django_db

# (visibility, viewer) -> visible?
MATRIX = {
    ("private", "owner"): True,
    ("private", "teammate"): False,
    ("private", "outsider"): False,
    ("team", "owner"): True,
    ("team", "teammate"): True,
    ("team", "outsider"): False,
    ("global", "owner"): True,
    ("global", "teammate"): True,
    ("global", "outsider"): True,
}


@pytest.mark.parametrize(("visibility", "viewer"), sorted(MATRIX))
def test_visible_to_follows_the_rule(
    visibility, viewer, owner, teammate, outsider, team, other_team
):
    fact = Fact.objects.create(
        owner=owner, team=team, visibility=visibility, content=f"{visibility} note"
    )
    user = {"owner": owner, "teammate": teammate, "outsider": outsider}[viewer]
    expected = MATRIX[(visibility, viewer)]
    assert Fact.objects.visible_to(user).filter(pk=fact.pk).exists() is expected
    assert fact.is_visible_to(user) is expected


def test_anonymous_and_inactive_users_see_nothing(owner, team):
    Fact.objects.create(owner=owner, team=team, visibility=Visibility.GLOBAL, content="x")
    assert not Fact.objects.visible_to(AnonymousUser()).exists()
    assert not Fact.objects.visible_to(None).exists()
    owner.is_active = False
    owner.save()
    assert not Fact.objects.visible_to(owner).exists()


def test_team_rows_follow_membership_changes(owner, teammate, team):
    from teams.models import Membership

    fact = Fact.objects.create(owner=owner, team=team, visibility=Visibility.TEAM, content="x")
    assert Fact.objects.visible_to(teammate).filter(pk=fact.pk).exists()
    Membership.objects.filter(user=teammate, team=team).delete()
    assert not Fact.objects.visible_to(teammate).filter(pk=fact.pk).exists()


def test_team_visibility_without_a_team_stays_with_the_owner(owner, teammate, team):
    fact = Fact.objects.create(owner=owner, team=None, visibility=Visibility.TEAM, content="x")
    assert Fact.objects.visible_to(owner).filter(pk=fact.pk).exists()
    assert not Fact.objects.visible_to(teammate).filter(pk=fact.pk).exists()


def test_staff_do_not_see_others_private_rows(owner, staff):
    fact = Fact.objects.create(owner=owner, visibility=Visibility.PRIVATE, content="x")
    assert not Fact.objects.visible_to(staff).filter(pk=fact.pk).exists()


def test_visible_to_is_one_query_without_duplicates(
    owner, teammate, team, make_user, django_assert_num_queries
):
    from django.contrib.auth.models import Group

    from teams.models import Membership

    second = Group.objects.create(name="Second")
    Membership.objects.create(user=teammate, team=second)
    Membership.objects.create(user=owner, team=second)
    for i in range(3):
        Fact.objects.create(owner=owner, team=team, visibility=Visibility.TEAM, content=f"{i}")
    with django_assert_num_queries(1):
        rows = list(Fact.objects.visible_to(teammate))
    assert len(rows) == 3


def test_scope_for_new_row_uses_the_users_settings(owner, team):
    from teams.services import scope_for_new_row

    scope = scope_for_new_row(user=owner)
    assert scope == {"owner": owner, "team": team, "visibility": "private", "project": ""}
    scope = scope_for_new_row(user=owner, visibility="team", project=" web ")
    assert (scope["team"], scope["visibility"], scope["project"]) == (team, "team", "web")


def test_scope_for_new_row_refuses_a_team_the_user_is_not_in(owner, team, other_team):
    from memoryhub.engine.errors import InvalidInput
    from teams.services import scope_for_new_row

    with pytest.raises(InvalidInput, match="not a member"):
        scope_for_new_row(user=owner, team=other_team.name)
    with pytest.raises(InvalidInput, match="not a member"):
        scope_for_new_row(user=owner, team="No Such Team")


def test_team_visibility_needs_a_team(outsider):
    from memoryhub.engine.errors import InvalidInput
    from teams.services import scope_for_new_row

    with pytest.raises(InvalidInput, match="needs a team"):
        scope_for_new_row(user=outsider, visibility="team")
