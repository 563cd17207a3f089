"""Writes for teams, memberships, memory settings, agent tokens and the audit trail."""

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from memoryhub.engine.cleaning import clean_name
from memoryhub.engine.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryhub.engine.locking import row_for_update
from memoryhub.engine.models import validate_endpoint_url
from memoryhub.engine.refs import id_of, shortened
from teams.models import (
    AgentToken,
    AuditEvent,
    Membership,
    MemorySettings,
    Role,
    Scope,
    ScopedModel,
    Visibility,
    hash_secret,
)

TOKEN_PREFIX = "mh_"
TEAM_NAME_MAX = Group._meta.get_field("name").max_length
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class Actor:
    """Who is acting: a user, or an agent acting as its token's user."""

    user: AbstractBaseUser
    token: AgentToken | None = None

    @classmethod
    def from_request(cls, request: HttpRequest) -> "Actor":
        return cls(user=request.user, token=getattr(request, "agent_token", None))

    @property
    def label(self) -> str:
        if self.token is not None:
            return f"{self.user.get_username()} via agent {self.token.name}"
        return self.user.get_username()

    def require_scope(self, scope: str) -> None:
        """An agent's token must carry ``scope`` (read, write); a person acts in full."""
        if self.token is not None and not self.token.has_scope(scope):
            raise Forbidden(
                f"This token lacks the '{scope}' scope; create one with it under Agents."
            )

    def require_tool(self, name: str) -> None:
        """An agent's token must have the tool enabled; a person may call every tool."""
        if self.token is not None and not self.token.has_tool(name):
            raise Forbidden(
                f"The tool {name} is not enabled for this token "
                f"(it may call: {', '.join(self.token.tools or []) or 'no tools'}); "
                "change its tools under Agents."
            )


# --- Audit -------------------------------------------------------------------------------


def _audit_event(
    actor: Actor | None,
    *,
    action: str,
    target_type: str = "",
    target_id: object = "",
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """An unsaved audit event of ``actor`` (None: the system)."""
    return AuditEvent(
        actor=actor.user if actor else None,
        actor_token=actor.token if actor else None,
        actor_label=actor.label if actor else "system",
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        details=details or {},
    )


def audit_log(
    *,
    actor: Actor | None,
    action: str,
    target_type: str = "",
    target_id: object = "",
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Record one audit event. Call it inside the transaction of the change it records."""
    event = _audit_event(
        actor, action=action, target_type=target_type, target_id=target_id, details=details
    )
    event.save(force_insert=True)
    return event


def audit_log_many(*, actor: Actor | None, events: Sequence[dict[str, Any]]) -> None:
    """Record several audit events of one actor in one statement; each event gives
    ``action`` and optionally ``target_type``, ``target_id`` and ``details``."""
    AuditEvent.objects.bulk_create(_audit_event(actor, **event) for event in events)


# --- Teams and memberships -----------------------------------------------------------------


def can_manage_team(*, user: AbstractBaseUser, team: Group) -> bool:
    """Staff manage every team; a team's admins manage its members."""
    if user.is_staff:
        return True
    return Membership.objects.filter(user_id=user.pk, team=team, role=Role.ADMIN).exists()


def _clean_team_name(name: str) -> str:
    return clean_name(name, owner="A team", max_length=TEAM_NAME_MAX)


@transaction.atomic
def team_create(*, actor: Actor, name: str) -> Group:
    """Create a team (staff only); the creator becomes its first admin."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can create teams.")
    name = _clean_team_name(name)
    if Group.objects.filter(name__iexact=name).exists():
        raise Conflict(f"A team named '{name}' already exists.")
    team = Group.objects.create(name=name)
    Membership.objects.create(user=actor.user, team=team, role=Role.ADMIN)
    audit_log(
        actor=actor,
        action="team.create",
        target_type="team",
        target_id=team.pk,
        details={"name": name},
    )
    return team


@transaction.atomic
def team_rename(*, actor: Actor, team: Group, name: str) -> Group:
    """Rename a team (staff, or an admin of the team): its rows and members stay."""
    if not can_manage_team(user=actor.user, team=team):
        raise Forbidden("Only staff or the team's admins can rename it.")
    name = _clean_team_name(name)
    if Group.objects.filter(name__iexact=name).exclude(pk=team.pk).exists():
        raise Conflict(f"A team named '{name}' already exists.")
    old = team.name
    if name != old:
        Group.objects.filter(pk=team.pk).update(name=name)
        team.name = name
        audit_log(
            actor=actor,
            action="team.rename",
            target_type="team",
            target_id=team.pk,
            details={"name": name, "from": old},
        )
    return team


@transaction.atomic
def team_delete(*, actor: Actor, team: Group) -> None:
    """Delete a team (staff only). Its rows fall back to their owners (team unset)."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can delete teams.")
    audit_log(
        actor=actor,
        action="team.delete",
        target_type="team",
        target_id=team.pk,
        details={"name": team.name},
    )
    team.delete()


def _check_role(role: str) -> str:
    if role not in Role.values:
        raise InvalidInput(f"Unknown role '{role}': use one of {', '.join(Role.values)}.")
    return role


@transaction.atomic
def membership_add(*, actor: Actor, team: Group, user: AbstractBaseUser, role: str) -> Membership:
    """Add ``user`` to ``team`` with ``role``."""
    if not can_manage_team(user=actor.user, team=team):
        raise Forbidden("Only staff and the team's admins can manage its members.")
    _check_role(role)
    if Membership.objects.filter(user=user, team=team).exists():
        raise Conflict(f"{user.get_username()} is already a member of {team.name}.")
    membership = Membership.objects.create(user=user, team=team, role=role)
    audit_log(
        actor=actor,
        action="membership.add",
        target_type="team",
        target_id=team.pk,
        details={"team": team.name, "user": user.get_username(), "role": role},
    )
    return membership


@transaction.atomic
def membership_set_role(*, actor: Actor, membership: Membership, role: str) -> Membership:
    """Change a member's role."""
    if not can_manage_team(user=actor.user, team=membership.team):
        raise Forbidden("Only staff and the team's admins can manage its members.")
    _check_role(role)
    membership = row_for_update(membership, missing="This person left the team meanwhile.")
    old = membership.role
    membership.role = role
    membership.save(update_fields=["role"])
    audit_log(
        actor=actor,
        action="membership.role",
        target_type="team",
        target_id=membership.team_id,
        details={
            "team": membership.team.name,
            "user": membership.user.get_username(),
            "from": old,
            "to": role,
        },
    )
    return membership


@transaction.atomic
def membership_remove(*, actor: Actor, membership: Membership) -> None:
    """Remove a member; their active team is cleared if it was this one. Removing one
    who left meanwhile is not found (and audited once, by whoever removed them)."""
    if not can_manage_team(user=actor.user, team=membership.team):
        raise Forbidden("Only staff and the team's admins can manage its members.")
    membership = row_for_update(membership, missing="This person left the team meanwhile.")
    MemorySettings.objects.filter(user=membership.user, active_team=membership.team).update(
        active_team=None
    )
    audit_log(
        actor=actor,
        action="membership.remove",
        target_type="team",
        target_id=membership.team_id,
        details={"team": membership.team.name, "user": membership.user.get_username()},
    )
    membership.delete()


@transaction.atomic
def membership_record_links(
    *,
    actor: Actor,
    user: AbstractBaseUser,
    added: Sequence[Group],
    removed: Sequence[Group],
) -> None:
    """Record memberships made or ended through a user's Groups (the Django admin's
    field): an audit event each, and an active team the user left is cleared."""
    MemorySettings.objects.filter(user=user, active_team__in=removed).update(active_team=None)
    who = user.get_username()
    events = [
        {
            "action": "membership.add",
            "target_type": "team",
            "target_id": team.pk,
            "details": {"team": team.name, "user": who, "role": Role.MEMBER, "via": "admin"},
        }
        for team in added
    ] + [
        {
            "action": "membership.remove",
            "target_type": "team",
            "target_id": team.pk,
            "details": {"team": team.name, "user": who, "via": "admin"},
        }
        for team in removed
    ]
    audit_log_many(actor=actor, events=events)


# --- People -------------------------------------------------------------------------------


def _clean_username(username: str) -> str:
    username = (username or "").strip()
    if not username:
        raise InvalidInput("A person needs a username.")
    if len(username) > 150:
        raise InvalidInput("A username is at most 150 characters.")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise InvalidInput(
            "A username has letters, digits and @ . + - _ only (no spaces)."
        ) from None
    return username


def _clean_email(email: str) -> str:
    email = (email or "").strip()
    if not email:
        return ""
    try:
        validate_email(email)
    except ValidationError:
        raise InvalidInput(f"'{email}' is not an email address.") from None
    return get_user_model().objects.normalize_email(email)


@transaction.atomic
def user_invite(
    *,
    actor: Actor,
    username: str,
    email: str = "",
    team: Group | None = None,
    role: str = Role.MEMBER,
) -> AbstractBaseUser:
    """Create a person (staff only), optionally as a member of ``team``. They have no
    password until they set one through the link of ``user_invite_link``."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can invite people.")
    username = _clean_username(username)
    email = _clean_email(email)
    _check_role(role)
    users = get_user_model().objects
    if users.filter(username__iexact=username).exists():
        raise Conflict(f"There is already a person named '{username}'.")
    user = users.create_user(username=username, email=email)
    audit_log(
        actor=actor,
        action="user.invite",
        target_type="user",
        target_id=user.pk,
        details={"username": username, "email": email, "team": team.name if team else None},
    )
    if team is not None:
        Membership.objects.create(user=user, team=team, role=role)
        audit_log(
            actor=actor,
            action="membership.add",
            target_type="team",
            target_id=team.pk,
            details={"team": team.name, "user": username, "role": role},
        )
    return user


def _password_set_path(user: AbstractBaseUser) -> str:
    """Where ``user`` sets a password: valid once, until it is set, for
    ``PASSWORD_RESET_TIMEOUT`` seconds."""
    return reverse(
        "invite-accept",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": default_token_generator.make_token(user),
        },
    )


def user_invite_link(*, actor: Actor, user: AbstractBaseUser) -> str:
    """The path where an invited person sets their password (staff only). It works
    once, until the password is set, for ``PASSWORD_RESET_TIMEOUT`` seconds."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can invite people.")
    if not user.is_active:
        raise InvalidInput(f"{user.get_username()} is deactivated: reactivate them first.")
    if user.has_usable_password():
        raise Conflict(f"{user.get_username()} has already set a password.")
    return _password_set_path(user)


def user_password_link(*, actor: Actor, user: AbstractBaseUser) -> str:
    """The path where a person who forgot their password sets a new one (staff only,
    audited): it works once, until the password is set, for ``PASSWORD_RESET_TIMEOUT``
    seconds; the old password keeps working until then."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can reset a password.")
    if not user.is_active:
        raise InvalidInput(f"{user.get_username()} is deactivated: reactivate them first.")
    if not user.has_usable_password():
        raise Conflict(f"{user.get_username()} has no password yet: send a new invite link.")
    audit_log(
        actor=actor,
        action="user.password_reset",
        target_type="user",
        target_id=user.pk,
        details={"username": user.get_username()},
    )
    return _password_set_path(user)


def user_invite_accept(*, user: AbstractBaseUser) -> None:
    """Record that an invited person set their password (the link's view saved it)."""
    audit_log(
        actor=Actor(user=user),
        action="user.invite_accept",
        target_type="user",
        target_id=user.pk,
        details={"username": user.get_username()},
    )


@transaction.atomic
def user_set_active(*, actor: Actor, user: AbstractBaseUser, active: bool) -> AbstractBaseUser:
    """Deactivate a person (they can no longer log in, their agents' tokens stop and the
    access rule shows them nothing) or reactivate them. Staff only, never themselves."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can deactivate or reactivate people.")
    if user.pk == actor.user.pk:
        raise InvalidInput("You cannot deactivate yourself.")
    user = row_for_update(user, missing="This account was deleted meanwhile.")
    if user.is_active != active:
        user.is_active = active
        user.save(update_fields=["is_active"])
        audit_log(
            actor=actor,
            action="user.reactivate" if active else "user.deactivate",
            target_type="user",
            target_id=user.pk,
            details={"username": user.get_username()},
        )
    return user


# --- Memory settings and new-row scope ----------------------------------------------------------


def memory_settings_get(*, user: AbstractBaseUser) -> MemorySettings:
    """The user's memory settings, created with defaults on first use."""
    found, _ = MemorySettings.objects.get_or_create(user=user)
    return found


def resolve_team(*, user: AbstractBaseUser, team: str | int | None) -> Group | None:
    """Find a team the user belongs to, by id or name. None stays None."""
    if team is None or team == "":
        return None
    groups = Group.objects.filter(memberships__user=user)
    ident = id_of(team)
    name = str(team).strip()
    if ident is not None:
        found = groups.filter(pk=ident).first()
    elif len(name) > TEAM_NAME_MAX:  # names no team can have (and too long to compare)
        found = None
    else:
        found = groups.filter(name__iexact=name).first()
    if found is None:
        raise InvalidInput(f"Unknown team '{shortened(name)}', or you are not a member of it.")
    return found


@transaction.atomic
def memory_settings_update(
    *,
    actor: Actor,
    active_team: str | int | None,
    default_visibility: str,
) -> MemorySettings:
    """Set the user's active team (one they belong to, or none) and default visibility."""
    if default_visibility not in Visibility.values:
        raise InvalidInput(
            f"Unknown visibility '{default_visibility}': use one of {', '.join(Visibility.values)}."
        )
    team = resolve_team(user=actor.user, team=active_team)
    if default_visibility == Visibility.TEAM and team is None:
        raise InvalidInput("Team visibility as a default needs an active team.")
    found = memory_settings_get(user=actor.user)
    found.active_team = team
    found.default_visibility = default_visibility
    found.save()
    audit_log(
        actor=actor,
        action="settings.memory",
        target_type="user",
        target_id=actor.user.pk,
        details={
            "active_team": team.name if team else None,
            "default_visibility": default_visibility,
        },
    )
    return found


def scope_for_new_row(
    *,
    user: AbstractBaseUser,
    team: str | int | None = None,
    visibility: str | None = None,
    project: str = "",
) -> dict[str, Any]:
    """Owner, team, visibility and project for a row ``user`` is about to create.

    Unset values come from the user's memory settings. A team must be one the user
    belongs to; team visibility needs a team.
    """
    prefs = memory_settings_get(user=user)
    chosen_team = resolve_team(user=user, team=team) if team not in (None, "") else None
    if chosen_team is None and team in (None, ""):
        chosen_team = prefs.active_team
        if (
            chosen_team is not None
            and not Membership.objects.filter(user=user, team=chosen_team).exists()
        ):
            chosen_team = None
    chosen_visibility = visibility or prefs.default_visibility
    if chosen_visibility not in Visibility.values:
        raise InvalidInput(
            f"Unknown visibility '{chosen_visibility}': use one of {', '.join(Visibility.values)}."
        )
    if chosen_visibility == Visibility.TEAM and chosen_team is None:
        raise InvalidInput("Team visibility needs a team: pass one or set an active team.")
    project = (project or "").strip()
    if len(project) > 200:
        raise InvalidInput("A project key is at most 200 characters.")
    return {"owner": user, "team": chosen_team, "visibility": chosen_visibility, "project": project}


def scope_change_check(
    *,
    actor: Actor,
    row: ScopedModel,
    visibility: str,
    team: Group | None,
    target_type: str,
    noun: str,
) -> None:
    """Refuse (Forbidden) to move ``row`` to ``visibility`` in ``team`` if that lets more
    people read it and ``actor`` may not widen it (``ScopedModel.is_widenable_by``).
    Staff widening someone else's row is recorded as ``visibility.widen``. Call it in
    the transaction of the change, once the caller may edit the row."""
    team_id = team.pk if team is not None else None
    if not row.widens(visibility=visibility, team_id=team_id):
        return
    owner = row.owner.get_username()
    if not row.is_widenable_by(actor.user):
        raise Forbidden(
            f"Only {owner}, who owns this {noun}, can let more people read it: an admin of "
            "its team may make it private or delete it, but not share it more widely."
        )
    if row.owner_id != actor.user.pk:
        audit_log(
            actor=actor,
            action="visibility.widen",
            target_type=target_type,
            target_id=row.pk,
            details={
                "owner": owner,
                "from": {"visibility": row.visibility, "team": row.team.name if row.team else None},
                "to": {"visibility": visibility, "team": team.name if team else None},
            },
        )


# --- Agent tokens -------------------------------------------------------------------------------


def _clean_tools(tools: list[str] | None) -> list[str] | None:
    """None (every tool) or the named tools, each one the registry knows."""
    if tools is None:
        return None
    from memoryhub.engine.toolkit import tool_names

    known = tool_names()
    unknown = sorted({str(name)[:64] for name in tools} - set(known))
    if unknown:
        raise InvalidInput(f"Unknown tool {', '.join(unknown)}: use {', '.join(known)}.")
    return [name for name in known if name in tools]


def _clean_scopes(scopes: list[str] | str) -> list[str]:
    if isinstance(scopes, str):
        scopes = [s.strip() for s in scopes.split(",") if s.strip()]
    unknown = sorted(set(scopes) - set(Scope.values))
    if unknown:
        raise InvalidInput(f"Unknown scope {', '.join(unknown)}: use {', '.join(Scope.values)}.")
    if not scopes:
        raise InvalidInput("A token needs at least one scope (read, write).")
    return [s for s in Scope.values if s in scopes]


@transaction.atomic
def agent_token_create(
    *,
    actor: Actor,
    name: str,
    fleet: str = "",
    role: str = "",
    scopes: list[str] | str = ("read",),
    tools: list[str] | None = None,
    chat_url: str = "",
    chat_model: str = "",
    chat_api_key: str = "",
    team: str | int | None = None,
) -> tuple[AgentToken, str]:
    """Create a token for the acting user, limited to ``tools`` (None: every tool), its
    calls to the OpenAI-compatible endpoint going to ``chat_url`` (blank: the chat model
    of Settings -> Memory) with ``chat_api_key``, which is kept and never shown.
    ``team`` (one of the user's, by id or name) is the one team whose team rows it
    reads; None: its user's active team at each call.
    Returns the token and its secret, which is never stored and cannot be shown again."""
    name = clean_name(name, owner="A token", max_length=100)
    own_team = resolve_team(user=actor.user, team=team)
    if len(fleet) > 100 or len(role) > 100:
        raise InvalidInput("Fleet and role are at most 100 characters each.")
    chat_url, chat_model = chat_url.strip(), chat_model.strip()
    if len(chat_url) > 200 or len(chat_model) > 200 or len(chat_api_key) > 500:
        raise InvalidInput("The chat model's URL and name are at most 200 characters, its key 500.")
    try:
        validate_endpoint_url(chat_url)
    except ValidationError as exc:
        raise InvalidInput(" ".join(exc.messages)) from None
    if (chat_model or chat_api_key) and not chat_url:
        raise InvalidInput("A chat model's name or key needs its URL too.")
    clean_scopes = _clean_scopes(list(scopes) if not isinstance(scopes, str) else scopes)
    clean_tools = _clean_tools(tools)
    if AgentToken.objects.filter(user=actor.user, name=name, revoked_at__isnull=True).exists():
        raise Conflict(f"You already have an active token named '{name}'.")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    try:
        token = AgentToken.objects.create(
            user=actor.user,
            name=name,
            fleet=fleet.strip(),
            role=role.strip(),
            scopes=clean_scopes,
            tools=clean_tools,
            chat_url=chat_url,
            chat_model=chat_model,
            chat_api_key=chat_api_key,
            team=own_team,
            prefix=secret[: len(TOKEN_PREFIX) + 6],
            secret_hash=hash_secret(secret),
        )
    except IntegrityError as exc:
        raise Conflict(f"You already have an active token named '{name}'.") from exc
    audit_log(
        actor=actor,
        action="token.create",
        target_type="agent_token",
        target_id=token.pk,
        details={
            "name": name,
            "fleet": token.fleet,
            "role": token.role,
            "scopes": clean_scopes,
            "tools": clean_tools,
            **({"chat_model": chat_model or "(named by each call)"} if chat_url else {}),
            **({"team": own_team.name} if own_team else {}),
        },
    )
    return token, secret


@transaction.atomic
def agent_token_set_tools(
    *, actor: Actor, token: AgentToken, tools: list[str] | None
) -> AgentToken:
    """Limit a token to ``tools`` (None: every tool); its owner or staff may do it."""
    if token.user_id != actor.user.pk and not actor.user.is_staff:
        raise NotFound("No such token.")
    clean_tools = _clean_tools(tools)
    token = row_for_update(token, missing="No such token.")
    if token.revoked_at is not None:
        raise Conflict("This token is revoked; create a new one.")
    if token.tools != clean_tools:
        before = token.tools
        token.tools = clean_tools
        token.save(update_fields=["tools"])
        audit_log(
            actor=actor,
            action="token.tools",
            target_type="agent_token",
            target_id=token.pk,
            details={"name": token.name, "from": before, "to": clean_tools},
        )
    return token


@transaction.atomic
def agent_token_revoke(*, actor: Actor, token: AgentToken) -> AgentToken:
    """Revoke a token now; its owner or staff may do it. Revoking twice is a no-op."""
    if token.user_id != actor.user.pk and not actor.user.is_staff:
        raise NotFound("No such token.")
    token = row_for_update(token, missing="No such token.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_log(
            actor=actor,
            action="token.revoke",
            target_type="agent_token",
            target_id=token.pk,
            details={"name": token.name},
        )
    return token


class TokenRejected(Exception):
    """The presented secret is unknown or revoked; the message says which."""


def agent_token_reads(token: AgentToken) -> Actor:
    """The agent of ``token``, reading as the token reads: the fleet and team rules of
    every read it makes (``ScopedQuerySet.visible_to``) are its fleet and the team it
    names, else its user's active team, set on ``token.user``."""
    token.user.agent_fleet = token.fleet
    if token.team_id is not None:
        token.user.agent_team_id = token.team_id
        return Actor(user=token.user, token=token)
    try:
        token.user.agent_team_id = token.user.memory_settings.active_team_id
    except MemorySettings.DoesNotExist:  # no settings saved: no team is active
        token.user.agent_team_id = None
    return Actor(user=token.user, token=token)


def agent_token_authenticate(*, secret: str) -> AgentToken:
    """The active token for ``secret``, its last use recorded (at minute resolution)."""
    token = (
        AgentToken.objects.select_related("user", "user__memory_settings")
        .filter(secret_hash=hash_secret(secret))
        .first()
    )
    if token is None:
        raise TokenRejected("Invalid token.")
    if token.revoked_at is not None:
        raise TokenRejected("This token has been revoked.")
    if not token.user.is_active:
        raise TokenRejected("The user of this token is inactive.")
    agent_token_reads(token)
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        AgentToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token
