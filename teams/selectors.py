"""Reads for teams, tokens and the audit trail."""

from collections.abc import Sequence
from datetime import date, datetime, time
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from teams.models import AgentToken, AuditEvent, Membership

# Longer than any user name or actor label stored: matches nothing.
ACTOR_MAX = AuditEvent._meta.get_field("actor_label").max_length


def team_list_for(*, user: AbstractBaseUser) -> QuerySet[Group]:
    """Teams the user can see, with their members: all of them for staff, their own
    otherwise."""
    teams = Group.objects.annotate(member_count=Count("memberships")).prefetch_related(
        Prefetch(
            "memberships",
            queryset=Membership.objects.select_related("user").order_by("user__username"),
        )
    )
    if not user.is_staff:
        teams = teams.filter(memberships__user=user)
    return teams.order_by("name")


def team_get_for(*, user: AbstractBaseUser, team_id: int) -> Group | None:
    return team_list_for(user=user).filter(pk=team_id).first()


def membership_list(*, team: Group) -> QuerySet[Membership]:
    return Membership.objects.filter(team=team).select_related("user").order_by("user__username")


def memberships_of(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("team").order_by("team__name")


def user_list_not_in(*, team: Group) -> QuerySet:
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .exclude(memberships__team=team)
        .order_by("username")
    )


def user_list_with_teams() -> QuerySet:
    """Everyone, with their memberships, for staff managing people."""
    return (
        get_user_model()
        .objects.prefetch_related(
            Prefetch(
                "memberships",
                queryset=Membership.objects.select_related("team").order_by("team__name"),
            )
        )
        .order_by("username")
    )


def agent_token_list(*, user: AbstractBaseUser) -> QuerySet[AgentToken]:
    return (
        AgentToken.objects.filter(user=user)
        .select_related("team")
        .order_by("revoked_at", "-created_at")
    )


def agent_token_list_active(*, user: AbstractBaseUser) -> QuerySet[AgentToken]:
    """The user's tokens that still work, by name."""
    return AgentToken.objects.filter(user=user, revoked_at__isnull=True).order_by("name")


def audit_event_list(
    *,
    viewer: AbstractBaseUser,
    actor: str = "",
    action: str = "",
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[AuditEvent]:
    """Audit events the viewer may read, newest first: staff read everything, others
    their own actions (including their agents')."""
    events = AuditEvent.objects.select_related("actor", "actor_token")
    if not viewer.is_staff:
        events = events.filter(actor=viewer)
    if len(actor) > ACTOR_MAX:  # longer than any name or label stored
        events = events.none()
    elif actor:
        events = events.filter(Q(actor__username__iexact=actor) | Q(actor_label__icontains=actor))
    if action:
        events = events.filter(action=action)
    tz = timezone.get_current_timezone()
    if date_from:
        events = events.filter(created_at__gte=datetime.combine(date_from, time.min, tz))
    if date_to:
        events = events.filter(created_at__lte=datetime.combine(date_to, time.max, tz))
    return events.order_by("-created_at", "-id")


def audit_action_names(*, viewer: AbstractBaseUser) -> list[str]:
    events = (
        AuditEvent.objects.all() if viewer.is_staff else AuditEvent.objects.filter(actor=viewer)
    )
    return list(events.order_by("action").values_list("action", flat=True).distinct())


def audit_event_as_dict(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.pk,
        "action": event.action,
        "actor": event.actor_label,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "details": event.details,
        "created_at": event.created_at.isoformat(),
    }


def audit_events_about(*, user: AbstractBaseUser) -> QuerySet[AuditEvent]:
    """What the audit trail holds about ``user``: what they (or their agents) did, and
    what was done to them (their account, their memberships), oldest first."""
    about = (
        Q(actor_id=user.pk)
        | Q(target_type="user", target_id=str(user.pk))
        | Q(target_type="team", action__startswith="membership.", details__user=user.get_username())
    )
    return AuditEvent.objects.filter(about).order_by("created_at", "id")


def audit_events_of(*, target_type: str, target_ids: Sequence[int]) -> dict[int, list[dict]]:
    """The audit events about each of these rows (a fact's creation, edits, merges),
    oldest first, by row id."""
    found: dict[int, list[dict]] = {}
    events = AuditEvent.objects.filter(
        target_type=target_type, target_id__in=[str(i) for i in target_ids]
    ).order_by("created_at", "id")
    for event in events:
        found.setdefault(int(event.target_id), []).append(
            {
                "action": event.action,
                "actor": event.actor_label,
                "details": event.details,
                "created_at": event.created_at.isoformat(),
            }
        )
    return found
