"""The fact store: small statements agents remember, with their provenance."""

import hashlib
import math
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q
from django.utils import timezone

from teams.models import AgentToken, ScopedModel, ScopedQuerySet, Visibility


class Category(models.TextChoices):
    PREFERENCE = "preference", "Preference"
    FACT = "fact", "Fact"
    CONTEXT = "context", "Context"
    RELATIONSHIP = "relationship", "Relationship"
    PATTERN = "pattern", "Pattern"
    PERSONALITY = "personality", "Personality"
    SUMMARY = "summary", "Summary"
    PROFILE = "profile", "Profile"
    LEARNING = "learning", "Learning"


class Source(models.TextChoices):
    EXTRACTED = "extracted", "Extracted"
    EXPLICIT = "explicit", "Explicit"
    OBSERVED = "observed", "Observed"


class Layer(models.IntegerChoices):
    RAW = 1, "Raw facts"
    SUMMARY = 2, "Summaries"
    PROFILE = 3, "Profile"


class Status(models.TextChoices):
    ACTIVE = "active", "Active"
    PENDING_REVIEW = "pending_review", "Pending review"
    ARCHIVED = "archived", "Archived"


class Sentiment(models.TextChoices):
    NONE = "", "—"
    POSITIVE = "positive", "Positive"
    NEUTRAL = "neutral", "Neutral"
    NEGATIVE = "negative", "Negative"


class Tier(models.TextChoices):
    PROJECT = "project", "Project"
    ORG = "org", "Organisation"
    SKILL = "skill", "Skill"


class Origin(models.TextChoices):
    USER_STATED = "user_stated", "Stated by the user"
    EXTRACTED = "extracted", "Extracted"
    INFERRED = "inferred", "Inferred"
    MERGED = "merged", "Merged"
    IMPORTED = "imported", "Imported"


# Where a fact comes from when its writer says only how it was learned: asked to be
# remembered (stated by the user), picked out of a conversation (extracted), or seen
# in what happened (inferred). The same rule extraction's proposals follow.
ORIGIN_OF_SOURCE = {
    Source.EXPLICIT: Origin.USER_STATED,
    Source.EXTRACTED: Origin.EXTRACTED,
    Source.OBSERVED: Origin.INFERRED,
}


class FactQuerySet(ScopedQuerySet):
    def recallable(self) -> "FactQuerySet":
        """Facts recall may return: active and not superseded or expired."""
        now = timezone.now()
        return self.filter(status=Status.ACTIVE, superseded_by__isnull=True).filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=now)
        )


def recency_score(
    last_accessed_at: datetime | None,
    created_at: datetime,
    *,
    now: datetime,
    half_life_days: float,
) -> float:
    """1 for a fact created or last used at ``now``, halving every ``half_life_days``."""
    age_days = max(0.0, (now - (last_accessed_at or created_at)).total_seconds() / 86400)
    return 0.5 ** (age_days / max(half_life_days, 0.1))


def use_score(access_count: int, *, saturation: int) -> float:
    """An access count on a log scale, 1 at ``saturation`` accesses and beyond."""
    return min(1.0, math.log1p(access_count) / math.log1p(saturation))


def fact_key(*, created_at: datetime, content: str) -> str:
    """The import key of a fact that has none of its own: its creation time and content."""
    when = created_at.astimezone(UTC).isoformat()
    digest = hashlib.sha256(f"{when}\n{content}".encode()).hexdigest()
    return f"sha256:{digest[:40]}"


class Fact(ScopedModel):
    content = models.TextField()
    category = models.CharField(
        max_length=16, choices=Category.choices, default=Category.FACT, db_index=True
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.EXPLICIT)
    layer = models.PositiveSmallIntegerField(
        choices=Layer.choices, default=Layer.RAW, db_index=True
    )
    distilled = models.BooleanField(default=False, help_text="Rolled into a higher layer.")
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=1.0)
    sentiment = models.CharField(
        max_length=16, choices=Sentiment.choices, blank=True, default=Sentiment.NONE
    )
    tags = models.JSONField(default=list, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.ACTIVE, db_index=True
    )
    valid_from = models.DateTimeField(default=timezone.now)
    valid_until = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    tier = models.CharField(max_length=16, choices=Tier.choices, default=Tier.PROJECT)
    fleet = models.CharField(max_length=100, blank=True, default="", db_index=True)
    skill = models.CharField(max_length=200, blank=True, default="")
    resolution_ref = models.CharField(max_length=500, blank=True, default="")
    # A learning's fingerprint cluster (the failure it is about) and the agent that wrote it.
    fingerprint = models.CharField(max_length=200, blank=True, default="", db_index=True)
    agent = models.CharField(max_length=200, blank=True, default="")
    # Provenance
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.USER_STATED)
    session_id = models.CharField(max_length=200, blank=True, default="")
    # The sessions the statement was said in: its own, and those of the repeats merged
    # into it (at most OBSERVED_SESSIONS_KEPT). Said in three or more, it is a pattern.
    said_in_sessions = models.JSONField(default=list, blank=True)
    # When the statement was made or the event it reports happened (an imported chat
    # turn, a ticket comment), and who said or wrote it. A session's facts are in the
    # order of ``occurred_at`` (then id): see ``facts.sessions``.
    occurred_at = models.DateTimeField(default=timezone.now)
    speaker = models.CharField(max_length=200, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_token = models.ForeignKey(
        AgentToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_excerpt = models.CharField(max_length=200, blank=True, default="")
    extraction_confidence = models.FloatField(null=True, blank=True)
    derived_from = models.ManyToManyField(
        "self", symmetrical=False, blank=True, related_name="derivatives"
    )
    # What an import knows this fact by (see ``export_key``): set on imported facts,
    # so importing the same document again adds nothing.
    import_key = models.CharField(max_length=100, blank=True, default="", db_index=True)
    # What wrote a summary or profile: "offline" (the built-in rules) or the chat
    # model's id; "" for any other fact.
    provider = models.CharField(max_length=200, blank=True, default="")
    # Which embedding model produced this fact's stored vector ("" = none yet).
    embedding_model = models.CharField(max_length=200, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = FactQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "project", "status"], name="fact_owner_scope"),
            models.Index(fields=["team", "visibility"], name="fact_team_visibility"),
            models.Index(
                fields=["owner", "session_id", "occurred_at", "id"], name="fact_session_order"
            ),
            models.Index(fields=["occurred_at"], name="fact_occurred_at"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(importance__gte=0, importance__lte=1), name="fact_importance_0_1"
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0, confidence__lte=1), name="fact_confidence_0_1"
            ),
        ]

    def __str__(self) -> str:
        return self.content[:60]

    @property
    def export_key(self) -> str:
        """What an export calls this fact so that an import recognises it again: the
        key it was imported with, or else a hash of when it was created and what it
        said (the same in every export of the fact while its content stays)."""
        return self.import_key or fact_key(created_at=self.created_at, content=self.content)

    @property
    def version(self) -> str:
        """Changes with every write to the fact: the API's ETag, checked by If-Match."""
        return str(round(self.updated_at.timestamp() * 1_000_000))

    def recency(self, *, now: datetime, half_life_days: float) -> float:
        """1 when just created or used, halving every ``half_life_days``."""
        return recency_score(
            self.last_accessed_at, self.created_at, now=now, half_life_days=half_life_days
        )

    def use(self, *, saturation: int) -> float:
        """Access count on a log scale, 1 at ``saturation`` accesses and beyond."""
        return use_score(self.access_count, saturation=saturation)

    @property
    def origin_label(self) -> str:
        """Where the fact came from, naming the agent that wrote it: "Written by agent
        ci-bot (bob's token)" rather than "Stated by the user" for an agent's write. A
        merged fact keeps the provenance of its first wording, so its agent wrote that."""
        token = self.created_by_token
        if token is None:
            return self.get_origin_display()
        agent = f"agent {token.name} ({token.user.get_username()}'s token)"
        return {
            Origin.USER_STATED: f"Written by {agent}",
            Origin.EXTRACTED: f"Extracted by {agent}",
            Origin.INFERRED: f"Inferred by {agent}",
        }.get(self.origin, f"{self.get_origin_display()}; first written by {agent}")

    @property
    def is_recallable(self) -> bool:
        return (
            self.status == Status.ACTIVE
            and self.superseded_by_id is None
            and (self.valid_until is None or self.valid_until > timezone.now())
        )


class FactKey(models.Model):
    """A hashed near-duplicate key of an active fact (see ``facts.dedupe``), on SQLite;
    PostgreSQL keeps a fact's keys in one ``FactKeyList`` (see ``facts.search``).

    Derived data: rebuilt from a fact's content, tags and scope whenever they change,
    and dropped when the fact stops being active, so a lookup only meets facts a new
    one may merge into."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="+")
    key = models.BigIntegerField()

    class Meta:
        # Covering: a lookup by key reads the fact ids from the index alone.
        indexes = [models.Index(fields=["key", "fact"], name="factkey_key_fact")]

    def __str__(self) -> str:
        return f"{self.fact_id}:{self.key}"


class KeyArrayField(models.Field):
    """A list of 64-bit keys: ``bigint[]`` on PostgreSQL, comma-separated text
    elsewhere."""

    def db_type(self, connection) -> str:
        return "bigint[]" if connection.vendor == "postgresql" else "text"

    def from_db_value(self, value, expression, connection) -> list[int] | None:
        if value is None or isinstance(value, list):
            return value
        return [int(key) for key in value.split(",") if key]

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None or connection.vendor == "postgresql":
            return value
        return ",".join(str(int(key)) for key in value)


class FactKeyList(models.Model):
    """The near-duplicate keys of an active fact, all in one row: how PostgreSQL stores
    them, found through a GIN index on ``keys`` that its migration adds (see
    ``memoryhub.engine.search.keys``). Unused on SQLite, which keeps a ``FactKey`` row per key."""

    fact = models.OneToOneField(Fact, on_delete=models.CASCADE, primary_key=True, related_name="+")
    keys = KeyArrayField()

    def __str__(self) -> str:
        return f"{self.fact_id}: {len(self.keys)} keys"


class ReviewState(models.TextChoices):
    PENDING = "pending", "Pending"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class MemoryReview(models.Model):
    """A fact proposed by extraction, waiting for its owner to approve (maybe edited)
    or reject it. A proposal is its owner's alone until approved: the visibility, team
    and project it carries are those the fact will get."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(
        Group, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    visibility = models.CharField(max_length=16, choices=Visibility.choices)
    project = models.CharField(max_length=200, blank=True, default="")
    content = models.TextField()
    category = models.CharField(max_length=16, choices=Category.choices, default=Category.FACT)
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=0.5)
    sentiment = models.CharField(max_length=16, choices=Sentiment.choices, blank=True, default="")
    tags = models.JSONField(default=list, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.EXTRACTED)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.EXTRACTED)
    source_excerpt = models.CharField(max_length=200, blank=True, default="")
    session_id = models.CharField(max_length=200, blank=True, default="")
    # The active fact this one would replace (same subject, another value).
    supersedes = models.ForeignKey(
        Fact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    provider = models.CharField(max_length=200, blank=True, default="")
    state = models.CharField(
        max_length=16, choices=ReviewState.choices, default=ReviewState.PENDING, db_index=True
    )
    fact = models.ForeignKey(
        Fact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "state", "-created_at"], name="review_owner_state")
        ]

    def __str__(self) -> str:
        return f"proposal {self.pk}: {self.content[:60]}"


class UndoKind(models.TextChoices):
    DELETE = "delete", "Delete"
    ARCHIVE = "archive", "Archive"


class FactUndo(models.Model):
    """What a delete or archive of many facts took away, kept a few seconds for the
    person who did it to take back, then purged.

    A delete is a real delete (the facts leave every read, index and vector at once);
    ``payload`` keeps the deleted rows, serialised, until ``expires_at``. An archive
    keeps the status each fact had. Only ``user`` may undo, and only before it expires."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=UndoKind.choices)
    payload = models.JSONField(default=dict)
    count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"undo {self.kind} of {self.count} facts"

    def is_expired(self, *, now: datetime | None = None) -> bool:
        return (now or timezone.now()) >= self.expires_at


class RecallDay(models.Model):
    """How many recalls one user was served on one day, in person or through their
    agents' tokens: what the home page charts. One row per user and day, counted up by
    every recall that counts its facts' use (``facts.recall``); Test recall does not."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    day = models.DateField(db_index=True)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "day"], name="recall_day_unique_user_day")
        ]

    def __str__(self) -> str:
        return f"{self.count} recalls of user {self.user_id} on {self.day}"
