"""Teams, memberships, per-user memory settings, agent tokens, the audit trail, and the
abstract scoped row that carries the one access rule every app obeys."""

import hashlib
from typing import Self

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from memoryhub.engine.models import validate_endpoint_url


class Visibility(models.TextChoices):
    PRIVATE = "private", "Private"
    TEAM = "team", "Team"
    GLOBAL = "global", "Global"


# Who may read a row, narrowest first: moving a row up this list widens it.
VISIBILITY_REACH = {Visibility.PRIVATE: 0, Visibility.TEAM: 1, Visibility.GLOBAL: 2}


class Role(models.TextChoices):
    MEMBER = "member", "Member"
    ADMIN = "admin", "Admin"


class Membership(models.Model):
    """A user's place in a team (a Django auth Group), with their role in it.

    The rows are Django's own user-to-group links (``auth_user_groups``) with a role and
    a start time added, so there is one list of members: ``user.groups``, the admin's
    Groups field and this model read and write the same rows. A link made through
    ``user.groups.add(team)`` is a plain member (the database fills in the role).
    """

    # The key as Django types the auth app's own link model.
    id = models.AutoField(primary_key=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    team = models.ForeignKey(
        Group, on_delete=models.CASCADE, related_name="memberships", db_column="group_id"
    )
    role = models.CharField(
        max_length=16, choices=Role.choices, default=Role.MEMBER, db_default=Role.MEMBER
    )
    created_at = models.DateTimeField(default=timezone.now, db_default=Now())

    class Meta:
        db_table = "auth_user_groups"
        # Django's auth app creates and owns the table (User.groups); migration 0002
        # added the two columns, and a change to them needs a hand-written migration.
        managed = False
        # The unique index the auth app keeps on the table.
        unique_together = [("user", "team")]
        ordering = ["team__name", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


class MemorySettings(models.Model):
    """Per-user defaults for new rows: which team they belong to and who sees them."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_settings"
    )
    active_team = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    default_visibility = models.CharField(
        max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE
    )

    def __str__(self) -> str:
        return f"memory settings of {self.user}"


def team_ids_of(user: AbstractBaseUser | AnonymousUser) -> models.QuerySet:
    """Subquery of the ids of the teams ``user`` belongs to."""
    return Membership.objects.filter(user_id=user.pk).values("team_id")


def reading_fleet(user: AbstractBaseUser | AnonymousUser | None) -> str:
    """The fleet an agent acting as ``user`` belongs to ("" for a person, or an agent of
    no fleet): set on the user its token authenticated (``agent_token_authenticate``)."""
    return getattr(user, "agent_fleet", "") or ""


def reading_team(user: AbstractBaseUser | AnonymousUser | None) -> int | None:
    """The one team whose team rows an agent acting as ``user`` reads: the team its token
    names, else its user's active team (Settings), set on the user its token
    authenticated; None for a person, or when neither names one: the team rows of every
    team of theirs."""
    return getattr(user, "agent_team_id", None)


def _has_fleet(model: type[models.Model]) -> bool:
    return any(field.name == "fleet" for field in model._meta.concrete_fields)


class ScopedQuerySet(models.QuerySet):
    def visible_to(
        self, user: AbstractBaseUser | AnonymousUser | None, *, cross_fleet: bool = False
    ) -> Self:
        """The access rule: global rows, the user's own rows, and team rows of the
        user's teams (an agent: of its user's active team, when one is set). Anonymous
        and inactive users see nothing. An agent of a fleet reads rows of its own fleet
        and of none, of a model that has fleets; another fleet's only with
        ``cross_fleet``, which the caller justifies and audits."""
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        teams = Q(visibility=Visibility.TEAM, team_id__in=team_ids_of(user))
        if (active := reading_team(user)) is not None:
            teams &= Q(team_id=active)
        rows = self.filter(Q(visibility=Visibility.GLOBAL) | Q(owner_id=user.pk) | teams)
        fleet = reading_fleet(user)
        if fleet and not cross_fleet and _has_fleet(self.model):
            rows = rows.filter(fleet__in=(fleet, ""))
        return rows

    def owned_by(self, user: AbstractBaseUser) -> Self:
        """The rows ``user`` owns, active or not: their own data, as an export of it
        holds (who may ask for that export is checked by the export). An agent of a
        fleet gets its fleet's and those of none, as everywhere."""
        rows = self.filter(owner_id=user.pk)
        fleet = reading_fleet(user)
        if fleet and _has_fleet(self.model):
            rows = rows.filter(fleet__in=(fleet, ""))
        return rows


class ScopedModel(models.Model):
    """A row that belongs to an owner, optionally a team, and a project scope key."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    visibility = models.CharField(
        max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE, db_index=True
    )
    project = models.CharField(max_length=200, blank=True, default="", db_index=True)

    objects = ScopedQuerySet.as_manager()

    class Meta:
        abstract = True

    def is_visible_to(self, user: AbstractBaseUser | AnonymousUser | None) -> bool:
        """The access rule for one row already in memory (mirrors ``visible_to``)."""
        if user is None or not user.is_authenticated or not user.is_active:
            return False
        fleet = reading_fleet(user)
        if fleet and getattr(self, "fleet", "") not in ("", fleet):
            return False
        active = reading_team(user)
        if (
            active is not None
            and self.visibility == Visibility.TEAM
            and self.owner_id != user.pk
            and self.team_id != active
        ):
            return False
        return self.reaches(user.pk)

    def reaches(self, user_id: int) -> bool:
        """Whether the row's scope takes in the user ``user_id``: the access rule without
        what depends on the reader's state (an active account, an agent's fleet)."""
        if self.visibility == Visibility.GLOBAL or self.owner_id == user_id:
            return True
        return (
            self.visibility == Visibility.TEAM
            and self.team_id is not None
            and Membership.objects.filter(user_id=user_id, team_id=self.team_id).exists()
        )

    def is_editable_by(self, user: AbstractBaseUser | AnonymousUser | None) -> bool:
        """Owners edit their rows; team admins edit their team's team rows. An agent of
        a fleet edits none of another fleet's."""
        if user is None or not user.is_authenticated or not user.is_active:
            return False
        fleet = reading_fleet(user)
        if fleet and getattr(self, "fleet", "") not in ("", fleet):
            return False
        if self.owner_id == user.pk:
            return True
        return (
            self.visibility == Visibility.TEAM
            and self.team_id is not None
            and Membership.objects.filter(
                user_id=user.pk, team_id=self.team_id, role=Role.ADMIN
            ).exists()
        )

    def widens(self, *, visibility: str, team_id: int | None) -> bool:
        """Whether moving this row to ``visibility`` (in team ``team_id``) lets people
        read it who cannot now: private -> team -> global, or a team row moved to
        another team. Narrowing, or moving a private row between teams, does not."""
        before, after = VISIBILITY_REACH[self.visibility], VISIBILITY_REACH[visibility]
        if before != after:
            return after > before
        return visibility == Visibility.TEAM and team_id != self.team_id

    def is_widenable_by(self, user: AbstractBaseUser | AnonymousUser | None) -> bool:
        """Who may let more people read this row: its owner, and staff who may edit it
        (the change is audited). A team admin narrows a member's team row or deletes
        it, but never publishes what the member shared with the team only."""
        if not self.is_editable_by(user):
            return False
        return self.owner_id == user.pk or bool(user.is_staff)


class Scope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Write"


def hash_secret(secret: str) -> str:
    # Secrets are 256 random bits, so a fast hash is enough: nothing to brute-force.
    return hashlib.sha256(secret.encode()).hexdigest()


class AgentToken(models.Model):
    """A named credential an agent uses to act as its owner, narrowed by scopes."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_tokens"
    )
    name = models.CharField(max_length=100)
    fleet = models.CharField(max_length=100, blank=True, default="")
    role = models.CharField(max_length=100, blank=True, default="")
    scopes = models.JSONField(default=list)
    # The agent tools it may call by name; None: every tool its scopes allow.
    tools = models.JSONField(null=True, blank=True, default=None)
    # The one team whose team rows it reads, whatever its user's active team is (null:
    # the active team). A team its user has left gives it no team rows at all.
    team = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The chat model its calls to the OpenAI-compatible endpoint go to (blank: the one of
    # Settings -> Memory); the key stays on the server and is never shown or logged.
    chat_url = models.CharField(
        max_length=200, blank=True, default="", validators=[validate_endpoint_url]
    )
    chat_model = models.CharField(max_length=200, blank=True, default="")
    chat_api_key = models.CharField(max_length=500, blank=True, default="")
    prefix = models.CharField(max_length=16, help_text="Shown to tell tokens apart.")
    secret_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "name"],
                condition=Q(revoked_at__isnull=True),
                name="agent_token_unique_active_name",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def has_tool(self, name: str) -> bool:
        return self.tools is None or name in self.tools


class AuditEvent(models.Model):
    """One thing that happened: who (user, and token if an agent), what, to what."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="audit_events",
    )
    actor_token = models.ForeignKey(
        AgentToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as text so the trail still reads right after a user or token is deleted.
    actor_label = models.CharField(max_length=200, blank=True, default="")
    action = models.CharField(max_length=64, db_index=True)
    target_type = models.CharField(max_length=64, blank=True, default="")
    target_id = models.CharField(max_length=64, blank=True, default="")
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["actor", "-created_at"], name="audit_actor_time"),
            # The history of one row (a fact's edits and merges, in its export).
            models.Index(fields=["target_type", "target_id"], name="audit_target"),
        ]

    def __str__(self) -> str:
        return f"{self.actor_label} {self.action} {self.target_type}:{self.target_id}"
