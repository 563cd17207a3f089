"""Writes of the fact store: create (with near-duplicate merging and supersession),
bulk create, update, delete, embedding, backfill, the active-fact cap, and settings.

Every write keeps the FTS index in step inside its own transaction and queues
embedding after commit, so a fact is kept even when the embedder is down.
"""

import functools
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import Group
from django.core import serializers
from django.core.cache import cache
from django.db import connection, models, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from facts.dedupe import (
    DuplicateFinder,
    Signature,
    fact_keys_add,
    fact_keys_rebuild,
    fact_keys_refresh,
    fact_keys_stale,
    merged_tags,
    signature,
)
from facts.models import (
    Category,
    Fact,
    FactUndo,
    MemoryConfig,
    MemoryReview,
    Origin,
    ReviewState,
    Sentiment,
    Source,
    Status,
    Tier,
    UndoKind,
    fact_key,
)
from facts.ranking import RecallTuning
from facts.search import FACT_FTS, FACT_VECTORS
from facts.selectors import fact_ids_editable, memory_config_get
from facts.sessions import facts_index, facts_index_after_removal, neighbours_of
from memoryhub.cleaning import clean_tags
from memoryhub.db.bulk import insert_returning_ids, insert_rows, update_rows
from memoryhub.derived import facts_derived_prune, facts_derived_queue
from memoryhub.embeddings.pipeline import embed_chunks
from memoryhub.errors import ApplicationError, Conflict, Forbidden, InvalidInput, NotFound
from memoryhub.locking import row_for_update
from memoryhub.tasks import enqueue_on_commit
from teams.models import AgentToken, Visibility
from teams.services import Actor, audit_log, audit_log_many, resolve_team, scope_for_new_row

EXCERPT_LENGTH = 200
IMPORT_KEY_LENGTH = Fact._meta.get_field("import_key").max_length
EMBED_BATCH = 64
# Facts one embedding task takes along besides its own, and how long a sweep may hold
# the lock that keeps a second one from embedding the same facts (it is let go at the
# end; the timeout only frees it after a worker died mid-sweep).
EMBED_SWEEP = 1024
EMBED_SWEEP_LOCK = "facts:embed-sweep"
EMBED_SWEEP_LOCK_SECONDS = 300
# New facts of a batch are inserted this many items at a time.
WRITE_PIECE = 100


# --- Settings -------------------------------------------------------------------------------


SECRET_FIELDS = ("embeddings_api_key", "llm_api_key")
EDITABLE_SETTINGS = frozenset(
    f.name
    for f in MemoryConfig._meta.concrete_fields
    if f.editable and f.name not in ("id", "updated_at")
)


@transaction.atomic
def memory_config_update(*, actor: Actor, changes: dict[str, Any]) -> MemoryConfig:
    """Change instance settings (staff only). Empty secret fields keep the stored key.
    Switching embeddings on or changing the model queues a backfill."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can change the memory settings.")
    config = memory_config_get()
    before_key, before_enabled = config.embedder_key, config.embeddings_enabled
    changed: dict[str, Any] = {}
    for name, value in changes.items():
        if name in SECRET_FIELDS and not value:
            continue
        if name not in EDITABLE_SETTINGS:
            raise InvalidInput(f"Unknown memory setting '{name}'.")
        if name == "recall_tuning":
            value = RecallTuning.clean(value)
        if getattr(config, name) != value:
            setattr(config, name, value)
            changed[name] = "(set)" if name in SECRET_FIELDS else value
    if not changed:
        return config
    config.updated_at = timezone.now()
    # Only what changed: the row also holds counts other processes add to meanwhile.
    config.save(update_fields=[*changed, "updated_at"])
    audit_log(
        actor=actor,
        action="settings.instance",
        target_type="memory_config",
        target_id=1,
        details=changed,
    )
    if config.embeddings_enabled and (config.embedder_key != before_key or not before_enabled):
        from facts.tasks import facts_backfill_embeddings

        enqueue_on_commit(facts_backfill_embeddings)
    return config


def memory_config_llm_error_record(*, kind: str, message: str, at: datetime) -> None:
    """Count one failed chat model call and keep it as the last error, unless a later
    one was recorded meanwhile. One UPDATE, so errors of every process add up.

    ``message`` must hold no secret (the chat model client redacts its messages)."""
    memory_config_get()  # the row exists from here on
    newer = Q(llm_last_error_at__isnull=True) | Q(llm_last_error_at__lte=at)

    def latest(field: str, value: Any) -> Case:
        return Case(When(newer, then=Value(value)), default=F(field))

    MemoryConfig.objects.filter(pk=1).update(
        llm_error_count=F("llm_error_count") + 1,
        llm_last_error_at=latest("llm_last_error_at", at),
        llm_last_error_kind=latest("llm_last_error_kind", kind[:16]),
        llm_last_error_message=latest("llm_last_error_message", message[:300]),
    )


# --- Validation -----------------------------------------------------------------------------


def _clean_content(content: str, config: MemoryConfig) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("Content must not be empty.")
    content = content.strip()
    if len(content) > config.max_content_length:
        raise InvalidInput(
            f"Content is {len(content)} characters; the maximum is {config.max_content_length}."
        )
    return content


@functools.cache
def _choice_values(choices: type) -> frozenset[str]:
    return frozenset(choices.values)


def _clean_choice(value: str, choices: type, what: str) -> str:
    if value not in _choice_values(choices):
        raise InvalidInput(
            f"Unknown {what} '{value}': use one of {', '.join(map(str, choices.values))}."
        )
    return value


# The earliest and latest moments a statement may be dated.
EARLIEST_MOMENT = datetime(1900, 1, 1, tzinfo=UTC)
LATEST_MOMENT = datetime(2200, 1, 1, tzinfo=UTC)


def clean_moment(value: datetime | str | None, what: str) -> datetime | None:
    """A date-time given as a datetime or ISO 8601 text ("2023-05-08T13:56:00Z", or a
    date alone); without a time zone it is taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(
                f"{what} is not an ISO 8601 date-time (such as 2023-05-08T13:56:00Z)."
            ) from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be an ISO 8601 date-time.")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if not EARLIEST_MOMENT <= value <= LATEST_MOMENT:
        raise InvalidInput(f"{what} must lie between the years 1900 and 2200.")
    return value


def _clean_unit(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput(f"{what.capitalize()} must be a number between 0 and 1.")
    if not 0 <= value <= 1:
        raise InvalidInput(f"{what.capitalize()} must be between 0 and 1, not {value}.")
    return float(value)


@dataclass
class FactInput:
    """A validated fact to write."""

    content: str
    category: str = Category.FACT
    source: str = Source.EXPLICIT
    importance: float = 0.5
    confidence: float = 1.0
    sentiment: str = ""
    tags: list[str] = field(default_factory=list)
    visibility: str | None = None
    team: str | int | None = None
    project: str = ""
    session_id: str = ""
    occurred_at: datetime | str | None = None
    speaker: str = ""
    supersedes: int | None = None
    origin: str = Origin.USER_STATED
    source_excerpt: str = ""
    extraction_confidence: float | None = None
    tier: str = Tier.PROJECT
    fleet: str = ""
    skill: str = ""
    resolution_ref: str = ""
    fingerprint: str = ""
    agent: str = ""
    layer: int = 1
    import_key: str = ""


def fact_input_clean(*, data: dict[str, Any], config: MemoryConfig) -> FactInput:
    """Validate raw input (from the API, a tool or a form) into a FactInput."""
    known = set(FactInput.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidInput(f"Unknown field {', '.join(unknown)}.")
    values = {k: v for k, v in data.items() if v is not None}
    item = FactInput(**values)
    item.content = _clean_content(item.content, config)
    item.category = _clean_choice(item.category, Category, "category")
    item.source = _clean_choice(item.source, Source, "source")
    item.sentiment = _clean_choice(item.sentiment or "", Sentiment, "sentiment")
    item.origin = _clean_choice(item.origin, Origin, "origin")
    item.tier = _clean_choice(item.tier, Tier, "tier")
    item.importance = _clean_unit(item.importance, "importance")
    item.confidence = _clean_unit(item.confidence, "confidence")
    if item.extraction_confidence is not None:
        item.extraction_confidence = _clean_unit(
            item.extraction_confidence, "extraction confidence"
        )
    item.tags = clean_tags(item.tags)
    item.source_excerpt = (item.source_excerpt or "")[:EXCERPT_LENGTH]
    if len(item.session_id) > 200 or len(item.fleet) > 100 or len(item.skill) > 200:
        raise InvalidInput("session_id, fleet or skill is too long.")
    item.occurred_at = clean_moment(item.occurred_at, "occurred_at")
    if not isinstance(item.speaker, str) or len(item.speaker) > 200:
        raise InvalidInput("The speaker is a name of at most 200 characters.")
    item.speaker = " ".join(item.speaker.split())
    if len(item.fingerprint) > 200 or len(item.agent) > 200 or len(item.resolution_ref) > 500:
        raise InvalidInput("fingerprint, agent or resolution_ref is too long.")
    if item.layer not in (1, 2, 3):
        raise InvalidInput("Layer must be 1, 2 or 3.")
    if not isinstance(item.import_key, str) or len(item.import_key) > IMPORT_KEY_LENGTH:
        raise InvalidInput(f"An import key is text of at most {IMPORT_KEY_LENGTH} characters.")
    return item


# --- Create -----------------------------------------------------------------------------------


@dataclass
class WriteResult:
    fact: Fact
    created: bool  # False: merged into an existing fact
    archived: list[int] = field(default_factory=list)


def _fact_values(
    *, actor: Actor, item: FactInput, scope: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """The field values (by attribute name) of a new fact from ``item``."""
    team = scope["team"]
    return {
        "owner_id": scope["owner"].pk,
        "team_id": team.pk if team is not None else None,
        "visibility": scope["visibility"],
        "project": scope["project"],
        "content": item.content,
        "category": item.category,
        "source": item.source,
        "layer": item.layer,
        "importance": item.importance,
        "confidence": item.confidence,
        "sentiment": item.sentiment,
        "tags": item.tags,
        "origin": item.origin,
        "session_id": item.session_id,
        "occurred_at": item.occurred_at or now,
        "speaker": item.speaker,
        "source_excerpt": item.source_excerpt or item.content[:EXCERPT_LENGTH],
        "extraction_confidence": item.extraction_confidence,
        "tier": item.tier,
        "fleet": item.fleet or (actor.token.fleet if actor.token else ""),
        "skill": item.skill,
        "resolution_ref": item.resolution_ref,
        "fingerprint": item.fingerprint,
        "agent": item.agent,
        "import_key": item.import_key,
        "created_by_id": actor.user.pk,
        "created_by_token_id": actor.token.pk if actor.token else None,
        "created_at": now,
        "updated_at": now,
        "valid_from": now,
    }


def _fact_from_input(*, actor: Actor, item: FactInput, scope: dict[str, Any]) -> Fact:
    return Fact(**_fact_values(actor=actor, item=item, scope=scope, now=timezone.now()))


class _FactRows:
    """New facts written as plain rows (see ``memoryhub.db.bulk``): every column's
    value in model order, defaults filled in, and the saved rows handed back as
    ``Fact`` instances without going through the model layer per value."""

    def __init__(self) -> None:
        fields = Fact._meta.concrete_fields
        self.names = [f.attname for f in fields if not f.primary_key]
        self.defaults = {f.attname: f.get_default() for f in fields if not f.primary_key}
        self.pk_index = next(i for i, f in enumerate(fields) if f.primary_key)
        self.rows: list[tuple] = []

    def add(self, values: dict[str, Any]) -> int:
        """Queue a row; its index in ``rows``."""
        row = {**self.defaults, **values}
        self.rows.append(tuple(row[name] for name in self.names))
        return len(self.rows) - 1

    def add_copy(self, fact: Fact, **changes: Any) -> int:
        """Queue a copy of ``fact`` with some fields changed."""
        return self.add({**{name: getattr(fact, name) for name in self.names}, **changes})

    def insert(self) -> list[Fact]:
        """Write the queued rows; the saved facts, in order."""
        ids = insert_returning_ids(Fact, self.names, self.rows)
        names = list(self.names)
        names.insert(self.pk_index, "id")
        facts = []
        for pk, row in zip(ids, self.rows, strict=True):
            values = list(row)
            values.insert(self.pk_index, pk)
            facts.append(Fact.from_db(connection.alias, names, values))
        self.rows = []
        return facts


def _resolve_supersedes(*, actor: Actor, fact_id: int) -> Fact:
    old = Fact.objects.visible_to(actor.user).select_for_update().filter(pk=fact_id).first()
    if old is None:
        raise NotFound(f"No fact {fact_id} that you can see to supersede.")
    if not old.is_editable_by(actor.user):
        raise Forbidden(f"You cannot supersede fact {fact_id}: it is not yours.")
    if old.superseded_by_id is not None:
        raise InvalidInput(f"Fact {fact_id} is already superseded by {old.superseded_by_id}.")
    return old


def _queue_embedding(fact_ids: list[int], config: MemoryConfig) -> None:
    """Embed these facts once the transaction commits. With embeddings off nothing is
    queued: switching them on starts the backfill, which embeds every fact without a
    vector."""
    from facts.tasks import facts_embed

    if fact_ids and config.embeddings_enabled:
        enqueue_on_commit(facts_embed, fact_ids)
    # What they say changed: the concept graph reads them again.
    facts_derived_queue(fact_ids=fact_ids)


def _signature_of(item: FactInput, scope: dict[str, Any]) -> Signature:
    team = scope["team"]
    return signature(
        owner_id=scope["owner"].pk,
        team_id=team.pk if team is not None else None,
        visibility=scope["visibility"],
        project=scope["project"],
        layer=item.layer,
        speaker=item.speaker,
        content=item.content,
        tags=item.tags,
    )


def _keys_ensure_current() -> bool:
    """Re-key the stored facts if their keys were built by other rules (once, after an
    upgrade); whether it did. Inside the writing transaction."""
    if not fact_keys_stale():
        return False
    fact_keys_rebuild()
    return True


# The merged fact's content changed: it waits for its new vector like an edited one.
MERGED_FIELDS = (
    "content",
    "tags",
    "importance",
    "confidence",
    "origin",
    "updated_at",
    "embedding_model",
)


def _merges_apply(
    *,
    actor: Actor,
    merges: list[tuple[Fact, FactInput, dict[str, Any]]],
) -> list[int]:
    """Fold near-duplicates into the facts they repeat, in order; the ids of the facts
    merged into, to be embedded again.

    Each merge keeps both parents, the target's previous statement and the incoming
    one, as archived facts linked through ``derived_from``; the target takes the new
    content, the union of the tags and the higher importance and confidence. The
    writes of a whole batch go in a few statements."""
    if not merges:
        return []
    now = timezone.now()
    parents = _FactRows()
    for target, item, scope in merges:
        parents.add_copy(target, status=Status.ARCHIVED, embedding_model="")
        values = _fact_values(actor=actor, item=item, scope=scope, now=now)
        parents.add({**values, "status": Status.ARCHIVED})
        target.content = item.content
        target.tags = merged_tags(target.tags, item.tags)
        target.importance = max(target.importance, item.importance)
        target.confidence = max(target.confidence, item.confidence)
        target.origin = Origin.MERGED
        target.updated_at = now
        target.embedding_model = ""
    saved = parents.insert()
    pairs = list(zip(saved[::2], saved[1::2], strict=True))  # (previous, incoming)
    targets = list({id(target): target for target, _, _ in merges}.values())
    update_rows(
        Fact, MERGED_FIELDS, [(*(getattr(t, f) for f in MERGED_FIELDS), t.pk) for t in targets]
    )
    insert_rows(
        Fact.derived_from.through,
        ("from_fact_id", "to_fact_id"),
        [
            (target.pk, parent.pk)
            for (target, _, _), pair in zip(merges, pairs, strict=True)
            for parent in pair
        ],
    )
    facts_index([t.pk for t in targets])
    fact_keys_refresh(t.pk for t in targets)
    audit_log_many(
        actor=actor,
        events=[
            {
                "action": "fact.merge",
                "target_type": "fact",
                "target_id": target.pk,
                "details": {"parents": [previous.pk, incoming.pk]},
            }
            for (target, _, _), (previous, incoming) in zip(merges, pairs, strict=True)
        ],
    )
    return [t.pk for t in targets]


def fact_create(*, actor: Actor, data: dict[str, Any]) -> WriteResult:
    """Store one fact for the acting user (or merge it into a near-duplicate)."""
    config = memory_config_get()
    item = fact_input_clean(data=data, config=config)
    with transaction.atomic():
        scope = scope_for_new_row(
            user=actor.user, team=item.team, visibility=item.visibility, project=item.project
        )
        old = _resolve_supersedes(actor=actor, fact_id=item.supersedes) if item.supersedes else None
        sig = _signature_of(item, scope)
        _keys_ensure_current()
        if old is None:
            existing_id = DuplicateFinder(config.dedupe_similarity).find(sig)
            if existing_id is not None:
                existing = Fact.objects.get(pk=existing_id)
                _queue_embedding(
                    _merges_apply(actor=actor, merges=[(existing, item, scope)]), config
                )
                return WriteResult(fact=existing, created=False)
        fact = _fact_from_input(actor=actor, item=item, scope=scope)
        fact.save()
        facts_index([], new=[fact.pk])
        fact_keys_add([(fact.pk, sig)])
        if old is not None:
            old.valid_until = fact.created_at
            old.superseded_by = fact
            old.save(update_fields=["valid_until", "superseded_by"])
            fact.derived_from.add(old)
            fact_keys_refresh([old.pk])
        audit_log(
            actor=actor,
            action="fact.create",
            target_type="fact",
            target_id=fact.pk,
            details={
                "category": fact.category,
                "visibility": fact.visibility,
                "project": fact.project,
                **({"supersedes": old.pk} if old is not None else {}),
            },
        )
        archived = enforce_active_cap(
            actor=actor, owner_id=fact.owner_id, project=fact.project, config=config, keep=fact.pk
        )
        _queue_embedding([fact.pk], config)
    return WriteResult(fact=fact, created=True, archived=archived)


def fact_bulk_create(*, actor: Actor, items: list[dict[str, Any]]) -> list[WriteResult]:
    """Store many facts in one transaction. Every item is validated first: one bad item
    rejects the batch (its index named) and nothing is written.

    Items are taken in order, as if posted one by one: an item repeating a stored fact
    or an earlier item of the batch merges into it. The inserts, their index rows and
    the merges each go in a few statements."""
    config = memory_config_get()
    cleaned: list[FactInput] = []
    for index, data in enumerate(items):
        try:
            cleaned.append(fact_input_clean(data=data, config=config))
        except InvalidInput as exc:
            raise InvalidInput(f"Item {index}: {exc.message}") from None
        if cleaned[-1].supersedes:
            raise InvalidInput(f"Item {index}: supersedes is only accepted one fact at a time.")
    with transaction.atomic():
        scopes: dict[tuple, dict[str, Any]] = {}
        signatures: list[Signature] = []
        for index, item in enumerate(cleaned):
            key = (item.team, item.visibility, item.project)
            if key not in scopes:
                try:
                    scopes[key] = scope_for_new_row(
                        user=actor.user,
                        team=item.team,
                        visibility=item.visibility,
                        project=item.project,
                    )
                except InvalidInput as exc:
                    raise InvalidInput(f"Item {index}: {exc.message}") from None
            signatures.append(_signature_of(item, scopes[key]))
        # Keys rebuilt just now are not committed: the look-ahead could not see them.
        rebuilt = _keys_ensure_current()
        finder = DuplicateFinder(config.dedupe_similarity)
        if len(cleaned) > 1 and not rebuilt:
            finder.look_ahead(signatures)
        rows = _FactRows()
        facts: list[Fact] = []
        inserted: list[Signature] = []
        now = timezone.now()
        merges: list[tuple[object, FactInput, dict[str, Any]]] = []
        # Per item: ("new", index in facts) or ("merge", index in merges).
        plan: list[tuple[str, int]] = []

        def write_new() -> None:
            # New facts are written a piece at a time, while the look-ahead reads the
            # candidates of the pieces after them.
            written = rows.insert()
            facts_index([], new=[f.pk for f in written])
            fact_keys_add(
                (fact.pk, sig) for fact, sig in zip(written, inserted[len(facts) :], strict=True)
            )
            facts.extend(written)

        for index, (item, sig) in enumerate(zip(cleaned, signatures, strict=True)):
            scope = scopes[(item.team, item.visibility, item.project)]
            ref = finder.find(sig)
            if ref is None:
                finder.added(("new", len(inserted)), sig)
                plan.append(("new", len(inserted)))
                rows.add(_fact_values(actor=actor, item=item, scope=scope, now=now))
                inserted.append(sig)
            else:
                finder.merged(ref, sig)
                plan.append(("merge", len(merges)))
                merges.append((ref, item, scope))
            if (index + 1) % WRITE_PIECE == 0:
                write_new()
        write_new()

        stored = Fact.objects.in_bulk([ref for ref, _, _ in merges if isinstance(ref, int)])
        targets = [stored[ref] if isinstance(ref, int) else facts[ref[1]] for ref, _, _ in merges]
        merged = _merges_apply(
            actor=actor,
            merges=[
                (target, item, scope)
                for target, (_, item, scope) in zip(targets, merges, strict=True)
            ],
        )
        if facts:
            audit_log(
                actor=actor,
                action="fact.bulk_create",
                target_type="fact",
                target_id=facts[0].pk,
                details={"count": len(facts), "ids": [f.pk for f in facts][:100]},
            )
        for owner_id, project in {(f.owner_id, f.project) for f in facts}:
            enforce_active_cap(actor=actor, owner_id=owner_id, project=project, config=config)
        # One task embeds the batch: its new facts and the facts it merged into.
        _queue_embedding(list(dict.fromkeys([*(f.pk for f in facts), *merged])), config)
    return [
        WriteResult(fact=facts[ref], created=True)
        if kind == "new"
        else WriteResult(fact=targets[ref], created=False)
        for kind, ref in plan
    ]


# --- Import -----------------------------------------------------------------------------------

# Facts of an import inserted (and reported as progress) this many at a time.
IMPORT_PIECE = 500


@dataclass
class FactImport:
    """One fact of an imported document: what to write (the fields of ``FactInput``, the
    team given by name), what it keeps of its past, and its links to the document's
    other facts, named by their ids in the document."""

    ref: int | None
    data: dict[str, Any]
    status: str = Status.ACTIVE
    distilled: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    access_count: int = 0
    last_accessed_at: datetime | None = None
    derived_from: list[int] = field(default_factory=list)
    superseded_by: int | None = None

    @property
    def label(self) -> str:
        return f"fact {self.ref}" if self.ref is not None else "a fact"

    def is_recallable(self, now: datetime) -> bool:
        return (
            self.status == Status.ACTIVE
            and self.superseded_by is None
            and (self.valid_until is None or self.valid_until > now)
        )


def _import_scope(
    *, actor: Actor, item: FactInput, cache: dict[tuple, tuple[dict[str, Any], bool]]
) -> tuple[dict[str, Any], bool]:
    """The scope an imported fact is written in, and whether it was narrowed to private:
    its visibility, team and project as exported, but a team fact goes into the
    importer's team of that name only, and becomes private when they have none."""
    key = (item.visibility, item.team, item.project)
    if key not in cache:
        team = None
        if item.team not in (None, ""):
            try:
                team = resolve_team(user=actor.user, team=str(item.team))
            except InvalidInput:
                team = None
        visibility = item.visibility
        narrowed = visibility == Visibility.TEAM and team is None
        if narrowed:
            visibility = Visibility.PRIVATE
        scope = scope_for_new_row(
            user=actor.user,
            team=team.pk if team is not None else None,
            visibility=visibility,
            project=item.project,
        )
        cache[key] = (scope, narrowed)
    return cache[key]


def _facts_known_by_key(
    *, owner_id: int, items: list[FactImport], keys: list[str]
) -> dict[str, int]:
    """The owner's facts an import already wrote, or that are the very facts of the
    document (their creation time and content give the same key), by key."""
    owned = Fact.objects.filter(owner_id=owner_id)
    known: dict[str, int] = {}
    wanted = list(dict.fromkeys(keys))
    for start in range(0, len(wanted), 500):
        rows = owned.filter(import_key__in=wanted[start : start + 500]).order_by(
            # An active fact first: the archived copies of a merge carry the key too.
            Case(When(status=Status.ACTIVE, then=Value(0)), default=Value(1)),
            "pk",
        )
        for pk, key in rows.values_list("pk", "import_key"):
            known.setdefault(key, pk)
    times = list(dict.fromkeys(item.created_at for item in items if item.created_at))
    for start in range(0, len(times), 500):
        rows = owned.filter(import_key="", created_at__in=times[start : start + 500])
        for pk, created_at, content in rows.values_list("pk", "created_at", "content"):
            known.setdefault(fact_key(created_at=created_at, content=content), pk)
    return known


def facts_import_clean(
    *, items: Sequence[FactImport], config: MemoryConfig | None = None
) -> list[FactInput]:
    """Check every fact of an import as a write would; the first bad one, named by
    its place in the document, refuses them all."""
    config = config or memory_config_get()
    cleaned: list[FactInput] = []
    for index, item in enumerate(items):
        try:
            cleaned.append(fact_input_clean(data=item.data, config=config))
            _clean_choice(item.status, Status, "status")
            if not cleaned[-1].import_key:
                raise InvalidInput("An imported fact needs an import key.")
        except InvalidInput as exc:
            raise InvalidInput(f"Item {index} ({item.label}): {exc.message}") from None
    return cleaned


def facts_import(
    *,
    actor: Actor,
    items: list[FactImport],
    source: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Write the facts of an imported document into the actor's memory, in one
    transaction, after checking every one of them (one bad fact, named, refuses the
    whole import and nothing is written).

    Importing is idempotent: a fact whose import key the actor's memory already holds
    (imported before, or the very fact the export was made from) is skipped. The others
    go through the usual write path (full-text rows, near-duplicate keys, embeddings
    queued, the active cap): an active fact repeating one already stored merges into
    it, as a write would; the document's own facts are kept as they were, side by side.
    Each keeps its layer, status, validity, provenance and times; its ``derived_from``
    and ``superseded_by`` links are made again between the new ids. A team fact goes
    into the actor's team of the same name, or becomes private when they are not in
    one; visibility is never widened."""
    config = memory_config_get()
    cleaned = facts_import_clean(items=items, config=config)
    now = timezone.now()
    with transaction.atomic():
        scopes: list[dict[str, Any]] = []
        cache: dict[tuple, tuple[dict[str, Any], bool]] = {}
        narrowed = 0
        for index, item in enumerate(cleaned):
            try:
                scope, was_narrowed = _import_scope(actor=actor, item=item, cache=cache)
            except InvalidInput as exc:
                raise InvalidInput(f"Item {index} ({items[index].label}): {exc.message}") from None
            scopes.append(scope)
            narrowed += was_narrowed
        known = _facts_known_by_key(
            owner_id=actor.user.pk, items=items, keys=[item.import_key for item in cleaned]
        )
        # Facts of the document by their id there -> the stored fact standing for them.
        ids: dict[int, int] = {}
        skipped = 0
        fresh: list[int] = []  # indexes of the items to write
        seen_keys: dict[str, int | None] = {}
        for index, (item, inputs) in enumerate(zip(items, cleaned, strict=True)):
            key = inputs.import_key
            if key in known or key in seen_keys:
                skipped += 1
                if item.ref is not None and known.get(key) is not None:
                    ids[item.ref] = known[key]
                continue
            seen_keys[key] = item.ref
            fresh.append(index)
        # Repeats of stored facts merge; looked up before anything is written, so that
        # the document's own facts never merge with one another.
        rebuilt = _keys_ensure_current()
        finder = DuplicateFinder(config.dedupe_similarity)
        candidates = [i for i in fresh if cleaned[i].layer == 1 and items[i].is_recallable(now)]
        signatures = {i: _signature_of(cleaned[i], scopes[i]) for i in candidates}
        if len(candidates) > 1 and not rebuilt:
            finder.look_ahead([signatures[i] for i in candidates])
        merge_of: dict[int, int] = {}
        for i in candidates:
            target = finder.find(signatures[i])
            if target is not None:
                merge_of[i] = target
                finder.merged(target, signatures[i])
        new = [i for i in fresh if i not in merge_of]
        written: list[Fact] = []
        rows = _FactRows()
        for done, i in enumerate(new, 1):
            item = items[i]
            values = _fact_values(actor=actor, item=cleaned[i], scope=scopes[i], now=now)
            created = item.created_at or now
            values.update(
                status=item.status,
                distilled=item.distilled,
                created_at=created,
                updated_at=item.updated_at or created,
                valid_from=item.valid_from or created,
                valid_until=item.valid_until,
                access_count=item.access_count,
                last_accessed_at=item.last_accessed_at,
            )
            rows.add(values)
            if done % IMPORT_PIECE == 0 or done == len(new):
                piece = rows.insert()
                facts_index([], new=[f.pk for f in piece])
                written.extend(piece)
                if progress is not None:
                    progress(len(written), len(new) + len(merge_of))
        for i, fact in zip(new, written, strict=True):
            if items[i].ref is not None:
                ids[items[i].ref] = fact.pk
        stored = Fact.objects.in_bulk(list(set(merge_of.values())))
        merged = _merges_apply(
            actor=actor,
            merges=[(stored[target], cleaned[i], scopes[i]) for i, target in merge_of.items()],
        )
        for i, target in merge_of.items():
            if items[i].ref is not None:
                ids[items[i].ref] = target
        links = _import_links(items=[items[i] for i in new], facts=written, ids=ids)
        fact_keys_refresh(f.pk for f in written)
        audit_log(
            actor=actor,
            action="fact.import",
            target_type="user",
            target_id=actor.user.pk,
            details={
                "source": source,
                "created": len(written),
                "merged": len(merge_of),
                "skipped": skipped,
                "made_private": narrowed,
                "links": links,
            },
        )
        for owner_id, project in {(f.owner_id, f.project) for f in written}:
            enforce_active_cap(actor=actor, owner_id=owner_id, project=project, config=config)
        embed = list(dict.fromkeys([*(f.pk for f in written), *merged]))
        for start in range(0, len(embed), 1000):
            _queue_embedding(embed[start : start + 1000], config)
    if progress is not None:
        done = max(1, len(written) + len(merge_of))
        progress(done, done)
    return {
        "created": len(written),
        "skipped": skipped,
        "merged": len(merge_of),
        "made_private": narrowed,
        "links": links,
    }


def _import_links(*, items: list[FactImport], facts: list[Fact], ids: dict[int, int]) -> int:
    """Make the imported facts' ``derived_from`` and ``superseded_by`` links again,
    between the new ids; links to facts not in the document are left out. How many
    were made."""
    pairs = {
        (fact.pk, ids[parent])
        for item, fact in zip(items, facts, strict=True)
        for parent in item.derived_from
        if parent in ids and ids[parent] != fact.pk
    }
    insert_rows(Fact.derived_from.through, ("from_fact_id", "to_fact_id"), sorted(pairs))
    replaced = [
        (ids[item.superseded_by], fact.pk)
        for item, fact in zip(items, facts, strict=True)
        if item.superseded_by in ids and ids[item.superseded_by] != fact.pk
    ]
    update_rows(Fact, ("superseded_by",), replaced)
    return len(pairs) + len(replaced)


# --- Update and delete ------------------------------------------------------------------------


EDITABLE_FIELDS = (
    "content",
    "category",
    "importance",
    "confidence",
    "sentiment",
    "tags",
    "visibility",
    "team",
    "project",
    "status",
    "source",
)


def _require_editable(*, actor: Actor, fact: Fact) -> None:
    if not fact.is_visible_to(actor.user):
        raise NotFound(f"No fact {fact.pk}.")
    if not fact.is_editable_by(actor.user):
        raise Forbidden("Only the owner (or an admin of its team) can change this fact.")


# What a fact's near-duplicate keys are built from.
KEYED_FIELDS = frozenset({"content", "tags", "team", "visibility", "project", "status"})
# A change of these moves a fact out of its place among its session's neighbours.
SESSION_FIELDS = frozenset({"team", "visibility", "project", "status"})


@transaction.atomic
def fact_update(
    *, actor: Actor, fact: Fact, changes: dict[str, Any], expected_version: str | None = None
) -> Fact:
    """Change a fact; it is re-indexed, and re-embedded when its content changed. The
    fact is re-read under a lock first: a fact deleted meanwhile is not found (never
    written back), and with ``expected_version`` a fact changed meanwhile is refused."""
    _require_editable(actor=actor, fact=fact)
    fact = row_for_update(fact, missing=f"No fact {fact.pk}.", expected_version=expected_version)
    _require_editable(actor=actor, fact=fact)
    # What a learning says is never rewritten; who reads it and whether it is archived
    # stay curation.
    learning = fact.category == Category.LEARNING and fact.tier == Tier.SKILL
    if learning and set(changes) - {"status", "visibility", "team"}:
        raise Conflict("Learnings are append-only: write a new learning instead.")
    config = memory_config_get()
    unknown = sorted(set(changes) - set(EDITABLE_FIELDS))
    if unknown:
        raise InvalidInput(f"These fields cannot be changed: {', '.join(unknown)}.")
    changed: dict[str, Any] = {}
    values = dict(changes)
    if "content" in values:
        values["content"] = _clean_content(values["content"], config)
    if "category" in values:
        _clean_choice(values["category"], Category, "category")
    if "source" in values:
        _clean_choice(values["source"], Source, "source")
    if "status" in values:
        _clean_choice(values["status"], Status, "status")
    if "sentiment" in values:  # null clears it, as the empty string does
        values["sentiment"] = _clean_choice(values["sentiment"] or "", Sentiment, "sentiment")
    for name in ("importance", "confidence"):
        if name in values:
            values[name] = _clean_unit(values[name], name)
    if "tags" in values:
        values["tags"] = clean_tags(values["tags"])
    if {"visibility", "team", "project"} & set(values):
        scope = scope_for_new_row(
            user=fact.owner,
            team=values.get("team", fact.team_id),
            visibility=values.get("visibility", fact.visibility),
            project=values.get("project", fact.project),
        )
        values.update(team=scope["team"], visibility=scope["visibility"], project=scope["project"])
    for name, value in values.items():
        if getattr(fact, name) != value:
            changed[name] = value.name if name == "team" and value is not None else value
            setattr(fact, name, value)
    if not changed:
        return fact
    fact.updated_at = timezone.now()
    fields = [*changed, "updated_at"]
    # Moved to another visibility, team or project, or archived: it leaves its place
    # among its session's neighbours.
    left = neighbours_of([fact.pk]) if SESSION_FIELDS & changed.keys() else set()
    if "content" in changed:
        fact.embedding_model = ""
        fields.append("embedding_model")
        FACT_VECTORS.delete([fact.pk])
    fact.save(update_fields=fields)
    facts_index([fact.pk])
    facts_index_after_removal(left)
    if KEYED_FIELDS & changed.keys():
        fact_keys_refresh([fact.pk])
    audit_log(
        actor=actor,
        action="fact.update",
        target_type="fact",
        target_id=fact.pk,
        details={"fields": sorted(changed)},
    )
    if "content" in changed:
        _queue_embedding([fact.pk], config)
    return fact


@transaction.atomic
def fact_delete(*, actor: Actor, fact: Fact, expected_version: str | None = None) -> None:
    """Delete a fact with its index rows and vector (re-read under a lock first, so a
    fact already gone is not found and ``expected_version`` is checked)."""
    _require_editable(actor=actor, fact=fact)
    fact = row_for_update(fact, missing=f"No fact {fact.pk}.", expected_version=expected_version)
    _require_editable(actor=actor, fact=fact)
    fact_id = fact.pk
    around = neighbours_of([fact_id])
    FACT_FTS.delete([fact_id])
    FACT_VECTORS.delete([fact_id])
    audit_log(
        actor=actor,
        action="fact.delete",
        target_type="fact",
        target_id=fact_id,
        # What the fact was, never what it said: a deleted statement leaves no text
        # behind, and staff read every audit event.
        details={
            "category": fact.category,
            "visibility": fact.visibility,
            "project": fact.project,
            "characters": len(fact.content),
        },
    )
    fact.delete()  # with its concept-graph rows
    facts_index_after_removal(around)
    facts_derived_prune()


# --- Curating many facts ---------------------------------------------------------------------

BULK_MAX = 500
# How long a delete or archive of many facts can be undone.
UNDO_SECONDS = 10
BULK_ACTIONS = ("delete", "archive", "visibility", "category")
REFUSED_REASON = "not yours to change (only the owner, or an admin of its team, can)"
# Every stored column of a fact (the key aside), as the serializer names them.
_ROW_FIELDS = tuple(f.name for f in Fact._meta.concrete_fields if not f.primary_key)


@dataclass
class BulkOutcome:
    """What a change of many facts did: the ids changed, refused (not visible, or not
    the caller's to change) and already as asked; the first reason for a refusal; and
    the undo of a delete or archive."""

    action: str
    changed: list[int] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    undo: FactUndo | None = None


def _bulk_ids_clean(fact_ids: Any) -> list[int]:
    if not isinstance(fact_ids, list | tuple) or not fact_ids:
        raise InvalidInput("Select at least one fact.")
    if len(fact_ids) > BULK_MAX:
        raise InvalidInput(f"At most {BULK_MAX} facts at once, not {len(fact_ids)}.")
    ids = []
    for value in fact_ids:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
            raise InvalidInput(f"Not a fact id: {str(value)[:40]!r}.")
        ids.append(value)
    return list(dict.fromkeys(ids))


def facts_bulk_change(
    *, actor: Actor, fact_ids: Sequence[int], action: str, value: str = ""
) -> BulkOutcome:
    """Delete, archive, or set the visibility or category of many facts, each under the
    rules of a single edit: a fact the caller cannot see or may not change is refused
    (counted, never touched). A delete or archive can be undone by the caller for
    UNDO_SECONDS (see ``facts_bulk_undo``). Bad input changes nothing."""
    ids = _bulk_ids_clean(fact_ids)
    if action not in BULK_ACTIONS:
        raise InvalidInput(f"Unknown action '{str(action)[:40]}': use {', '.join(BULK_ACTIONS)}.")
    if action == "visibility":
        value = _clean_choice(value, Visibility, "visibility")
    elif action == "category":
        value = _clean_choice(value, Category, "category")
    fact_undo_purge()
    outcome = BulkOutcome(action=action)
    with transaction.atomic():
        found = Fact.objects.visible_to(actor.user).select_related("owner").in_bulk(ids)
        editable = fact_ids_editable(user=actor.user, facts=found.values())
        facts = [found[i] for i in ids if i in editable]
        outcome.refused = [i for i in ids if i not in editable]
        if outcome.refused:
            outcome.reasons.append(REFUSED_REASON)
        if action == "delete":
            outcome.changed, outcome.undo = _bulk_delete(actor=actor, facts=facts)
            return outcome
        changes = {"archive": {"status": Status.ARCHIVED}}.get(action) or {action: value}
        previous: dict[str, str] = {}
        for fact in facts:
            name, wanted = next(iter(changes.items()))
            if getattr(fact, name) == wanted:
                outcome.unchanged.append(fact.pk)
                continue
            try:
                with transaction.atomic():
                    fact_update(actor=actor, fact=fact, changes=changes)
            except ApplicationError as exc:  # e.g. team visibility for a fact with no team
                outcome.refused.append(fact.pk)
                if exc.message not in outcome.reasons:
                    outcome.reasons.append(exc.message)
                continue
            outcome.changed.append(fact.pk)
            previous[str(fact.pk)] = fact.status
        if action == "archive" and previous:
            outcome.undo = _undo_keep(
                actor=actor, kind=UndoKind.ARCHIVE, payload={"statuses": previous}
            )
    return outcome


def _bulk_delete(*, actor: Actor, facts: list[Fact]) -> tuple[list[int], FactUndo | None]:
    """Delete these facts as ``fact_delete`` does (rows, index entries, vectors, keys),
    keeping their rows and links in an undo record for UNDO_SECONDS."""
    if not facts:
        return [], None
    ids = [fact.pk for fact in facts]
    payload = {
        "rows": json.loads(serializers.serialize("json", facts, fields=_ROW_FIELDS)),
        "links": _links(children=set(ids)) + _links(parents=set(ids)),
        "superseded": list(
            Fact.objects.filter(superseded_by_id__in=ids).values_list("pk", "superseded_by_id")
        ),
    }
    around = neighbours_of(ids)
    FACT_FTS.delete(ids)
    FACT_VECTORS.delete(ids)
    audit_log_many(
        actor=actor,
        events=[
            {
                "action": "fact.delete",
                "target_type": "fact",
                "target_id": fact.pk,
                "details": {
                    "category": fact.category,
                    "visibility": fact.visibility,
                    "project": fact.project,
                    "characters": len(fact.content),
                    "bulk": True,
                },
            }
            for fact in facts
        ],
    )
    Fact.objects.filter(pk__in=ids).delete()  # with their keys and links
    facts_index_after_removal(around)
    return ids, _undo_keep(actor=actor, kind=UndoKind.DELETE, payload=payload)


def _undo_keep(*, actor: Actor, kind: str, payload: dict[str, Any]) -> FactUndo:
    count = len(payload.get("rows") or payload.get("statuses") or ())
    now = timezone.now()
    return FactUndo.objects.create(
        user=actor.user,
        kind=kind,
        payload=payload,
        count=count,
        created_at=now,
        expires_at=now + timedelta(seconds=UNDO_SECONDS),
    )


@dataclass
class UndoOutcome:
    kind: str
    restored: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # changed or no longer the caller's


def facts_bulk_undo(*, actor: Actor, undo_id: int) -> UndoOutcome:
    """Take back a delete or archive of many facts, by the person who did it, before it
    expires. Restored facts are what they were (same id, visibility and team), indexed
    again and queued for embedding; a fact archived and changed since, or that the
    caller may no longer change, is left as it is."""
    with transaction.atomic():
        undo = (
            FactUndo.objects.select_for_update().filter(pk=undo_id, user_id=actor.user.pk).first()
        )
        if undo is None:
            raise NotFound("Nothing to undo: it was undone already, or its time ran out.")
        if undo.is_expired():
            raise Conflict("Too late to undo: its time ran out.")
        if undo.kind == UndoKind.ARCHIVE:
            outcome = _archive_undo(actor=actor, statuses=undo.payload["statuses"])
        else:
            outcome = _delete_undo(actor=actor, payload=undo.payload)
        undo.delete()
    return outcome


def _archive_undo(*, actor: Actor, statuses: dict[str, str]) -> UndoOutcome:
    outcome = UndoOutcome(kind=UndoKind.ARCHIVE)
    found = Fact.objects.in_bulk([int(i) for i in statuses])
    for key, status in statuses.items():
        fact = found.get(int(key))
        if fact is None or fact.status != Status.ARCHIVED or not fact.is_editable_by(actor.user):
            outcome.skipped.append(int(key))
            continue
        fact_update(actor=actor, fact=fact, changes={"status": status})
        outcome.restored.append(fact.pk)
    return outcome


def _delete_undo(*, actor: Actor, payload: dict[str, Any]) -> UndoOutcome:
    """Put deleted rows back. A row whose owner is gone, or that the caller may no
    longer change (removed from its team meanwhile), stays deleted; links to facts
    deleted meanwhile are dropped."""
    outcome = UndoOutcome(kind=UndoKind.DELETE)
    user_model = Fact._meta.get_field("owner").related_model
    rows = list(serializers.deserialize("python", payload["rows"]))
    facts = [row.object for row in rows]
    referenced = {f.owner_id for f in facts} | {f.created_by_id for f in facts if f.created_by_id}
    users = set(user_model.objects.filter(pk__in=referenced).values_list("pk", flat=True))
    teams = set(
        Group.objects.filter(pk__in={f.team_id for f in facts if f.team_id}).values_list(
            "pk", flat=True
        )
    )
    tokens = set(
        AgentToken.objects.filter(
            pk__in={f.created_by_token_id for f in facts if f.created_by_token_id}
        ).values_list("pk", flat=True)
    )
    others = {f.superseded_by_id for f in facts if f.superseded_by_id}
    others |= {i for pair in payload["links"] for i in pair}
    others |= {i for pair in payload["superseded"] for i in pair}
    existing = set(Fact.objects.filter(pk__in=others).values_list("pk", flat=True))
    present = set(Fact.objects.filter(pk__in=[f.pk for f in facts]).values_list("pk", flat=True))
    restored: list[Fact] = []
    for fact in facts:
        if fact.owner_id not in users or fact.pk in present:
            outcome.skipped.append(fact.pk)
            continue
        if fact.team_id is not None and fact.team_id not in teams:
            fact.team_id = None
        if not fact.is_editable_by(actor.user):
            outcome.skipped.append(fact.pk)
            continue
        if fact.created_by_id not in users:
            fact.created_by_id = None
        if fact.created_by_token_id not in tokens:
            fact.created_by_token_id = None
        if fact.superseded_by_id not in existing:
            fact.superseded_by_id = None
        fact.embedding_model = ""  # its vector went with it: embedded again
        restored.append(fact)
    for fact in restored:
        fact.save(force_insert=True)
    back = {fact.pk for fact in restored}
    alive = existing | back
    through = Fact.derived_from.through
    through.objects.bulk_create(
        [
            through(from_fact_id=child, to_fact_id=parent)
            for child, parent in payload["links"]
            if (child in back or parent in back) and child in alive and parent in alive
        ],
        ignore_conflicts=True,
    )
    for older, newer in payload["superseded"]:
        if newer in back:
            Fact.objects.filter(pk=older, superseded_by__isnull=True).update(superseded_by=newer)
    facts_index([], new=sorted(back))
    fact_keys_refresh(back)
    audit_log_many(
        actor=actor,
        events=[
            {"action": "fact.restore", "target_type": "fact", "target_id": pk}
            for pk in sorted(back)
        ],
    )
    _queue_embedding(sorted(back), memory_config_get())
    outcome.restored = sorted(back)
    return outcome


def fact_undo_purge(*, now: datetime | None = None) -> int:
    """Drop the undo records whose time ran out, and with them the last copy of the
    facts they deleted; how many were dropped. Run every few seconds by the worker's
    schedule and before every change of many facts."""
    deleted, _ = FactUndo.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


# --- Forgetting ----------------------------------------------------------------------------


@dataclass
class ForgetOutcome:
    """What forgetting some facts removed and rebuilt."""

    asked: list[int]  # the facts named
    copies: list[int]  # earlier wordings of them kept by merges (archived parents)
    derived: list[int]  # summaries and profiles with no source left
    regenerated: list[int]  # summaries and profiles rebuilt from their other sources
    removed: list[int] = field(default_factory=list)  # every fact deleted
    layers: dict[int, int] = field(default_factory=dict)  # removed facts per layer
    vectors: int = 0  # vectors removed with them
    contents: list[str] = field(default_factory=list)  # what they said (for other apps)


def _links(*, children: set[int] | None = None, parents: set[int] | None = None) -> list:
    """(child, parent) ``derived_from`` links of these children or of these parents."""
    through = Fact.derived_from.through.objects
    if children is not None:
        through = through.filter(from_fact_id__in=children)
    if parents is not None:
        through = through.filter(to_fact_id__in=parents)
    return list(through.values_list("from_fact_id", "to_fact_id"))


@transaction.atomic
def facts_forget(*, actor: Actor, fact_ids: Sequence[int]) -> ForgetOutcome:
    """Delete these facts with everything derived from them: the archived copies of
    their earlier wordings (merge parents), their vectors, full-text rows and keys; a
    summary or profile that drew on them is rebuilt from its remaining sources, or
    deleted when none remain. The caller purges the indexes' pages afterwards."""
    asked = list(dict.fromkeys(fact_ids))
    allowed = set(
        Fact.objects.filter(owner_id=actor.user.pk, pk__in=asked).values_list("pk", flat=True)
    )
    refused = [i for i in asked if i not in allowed]
    if refused:
        raise Forbidden(
            f"You cannot forget {', '.join(map(str, refused[:20]))}: not found, or not yours."
        )
    removed: set[int] = set(asked)
    # A merge keeps the earlier wordings of a fact as archived parents of its own layer.
    # Other parents are other statements: the one a supersession replaced, and the
    # sources of a summary, which stay.
    frontier = set(asked)
    copies: list[int] = []
    while frontier:
        links = _links(children=frontier)
        layer_of = dict(Fact.objects.filter(pk__in=frontier).values_list("pk", "layer"))
        parents = {
            pk: (layer, status, replaced_by)
            for pk, layer, status, replaced_by in Fact.objects.filter(
                pk__in={p for _, p in links}
            ).values_list("pk", "layer", "status", "superseded_by_id")
        }
        found = {
            p
            for c, p in links
            if p not in removed
            and parents[p][0] == layer_of[c]
            and parents[p][1] == Status.ARCHIVED
            and parents[p][2] != c
        }
        copies += sorted(found)
        removed |= found
        frontier = found
    # Summaries (layer 2) and then profiles (layer 3) drawing on what goes.
    derived: list[int] = []
    regenerated: list[int] = []
    touched = {c for c, _ in _links(parents=removed)} - removed
    for layer in (2, 3):
        for summary in Fact.objects.filter(pk__in=touched, layer=layer).order_by("pk"):
            sources = [p for _, p in _links(children={summary.pk}) if p not in removed]
            if sources:
                _summary_rebuild(actor=actor, summary=summary, source_ids=sources)
                regenerated.append(summary.pk)
            else:
                removed.add(summary.pk)
                derived.append(summary.pk)
        touched = {c for c, _ in _links(parents=removed | set(regenerated))} - removed
    rows = list(
        Fact.objects.filter(pk__in=removed).values_list("pk", "layer", "content", "embedding_model")
    )
    ids = [pk for pk, _, _, _ in rows]
    # Their neighbours' entries hold their words: written again without them.
    around = neighbours_of(ids)
    FACT_FTS.delete(ids)
    FACT_VECTORS.delete(ids)
    Fact.objects.filter(pk__in=ids).delete()  # with their keys and links
    facts_index_after_removal(around)
    # The copies a recent delete keeps for its undo go too: a forget leaves nothing to
    # bring back.
    FactUndo.objects.filter(user_id=actor.user.pk, kind=UndoKind.DELETE).delete()
    return ForgetOutcome(
        asked=asked,
        copies=copies,
        derived=derived,
        regenerated=regenerated,
        removed=sorted(ids),
        layers=dict(Counter(layer for _, layer, _, _ in rows)),
        vectors=sum(1 for *_, model in rows if model),
        contents=[content for _, _, content, _ in rows],
    )


def _summary_rebuild(*, actor: Actor, summary: Fact, source_ids: list[int]) -> None:
    """A summary or profile said anew from ``source_ids`` alone: their first
    sentences, in order, within the content limit."""
    config = memory_config_get()
    sources = Fact.objects.filter(pk__in=source_ids).order_by("created_at", "pk")
    sentences = [first_sentence(f.content) for f in sources]
    content = " ".join(sentences)[: config.max_content_length].strip()
    now = timezone.now()
    Fact.objects.filter(pk=summary.pk).update(
        content=content, updated_at=now, embedding_model="", origin=Origin.INFERRED
    )
    summary.derived_from.set(source_ids)
    FACT_VECTORS.delete([summary.pk])
    facts_index([summary.pk])
    fact_keys_refresh([summary.pk])
    _queue_embedding([summary.pk], config)


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one)."""
    for end in (". ", "! ", "? ", "\n"):
        cut = text.find(end)
        if cut > 0:
            text = text[: cut + 1]
    return text.strip()


# --- Extraction and review ----------------------------------------------------------------

# Longer conversations are extracted by a job, not in the request.
EXTRACT_INLINE_CHARS = 8_000
EXTRACT_MAX_CHARS = 500_000
EXTRACT_MAX_MESSAGES = 2_000
# A proposal sharing this much of an active fact's words (but not enough to repeat it)
# and naming the same things, with other values, is about the same subject.
SAME_SUBJECT_MIN = 0.34


@dataclass
class Conversation:
    """What to extract from: messages ({role, content}) or a text taken as the user's."""

    messages: list[dict[str, str]] | None
    text: str | None

    @property
    def length(self) -> int:
        if self.text is not None:
            return len(self.text)
        return sum(len(m["content"]) for m in self.messages or ())


def conversation_clean(*, messages: Any = None, text: Any = None) -> Conversation:
    """Validate what an extraction was given: one of messages or text, within bounds."""
    if (messages is None) == (text is None):
        raise InvalidInput("Send either messages or text to extract from.")
    if text is not None:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("The text to extract from is empty.")
        if len(text) > EXTRACT_MAX_CHARS:
            raise InvalidInput(f"At most {EXTRACT_MAX_CHARS} characters at a time.")
        return Conversation(messages=None, text=text)
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content}.")
    if len(messages) > EXTRACT_MAX_MESSAGES:
        raise InvalidInput(f"At most {EXTRACT_MAX_MESSAGES} messages at a time.")
    cleaned = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise InvalidInput(f"Message {index} needs a content string.")
        role = message.get("role", "user")
        if role not in ("user", "assistant", "system"):
            raise InvalidInput(f"Message {index}: role is user, assistant or system.")
        cleaned.append({"role": role, "content": message["content"]})
    conversation = Conversation(messages=cleaned, text=None)
    if conversation.length > EXTRACT_MAX_CHARS:
        raise InvalidInput(f"At most {EXTRACT_MAX_CHARS} characters at a time.")
    return conversation


def memory_extract(
    *,
    actor: Actor,
    conversation: Conversation,
    session_id: str = "",
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
) -> dict[str, Any]:
    """Propose the durable facts of a conversation: written through the normal rules
    (merge, supersede, cap), or, with review required, queued for their owner. A
    proposal saying another value of an active fact's subject supersedes it. Call
    outside a transaction: the model may take long."""
    from memoryhub.llm import ChatMessage
    from memoryhub.llm.configured import llm_provider_get

    scope = scope_for_new_row(user=actor.user, team=team, visibility=visibility, project=project)
    if len(session_id) > 200:
        raise InvalidInput("session_id is at most 200 characters.")
    provider = llm_provider_get()
    if conversation.text is not None:
        answer = provider.extract_facts(conversation.text)
    else:
        answer = provider.extract_facts([ChatMessage(**m) for m in conversation.messages])
    config = memory_config_get()
    items = [
        {
            "content": p.content,
            "category": p.category,
            "importance": p.importance,
            "confidence": p.confidence,
            "sentiment": p.sentiment,
            "tags": p.tags,
            "source": p.source,
            "origin": p.origin,
            "source_excerpt": (p.excerpt or p.content)[:EXCERPT_LENGTH],
            "extraction_confidence": p.confidence,
            "session_id": session_id,
            "supersedes": _contradicted(scope=scope, content=p.content, config=config),
        }
        for p in answer.facts
    ]
    if config.extraction_review_required:
        with transaction.atomic():
            reviews = [
                _review_create(actor=actor, scope=scope, item=item, provider=answer.provider)
                for item in items
            ]
            audit_log(
                actor=actor,
                action="memory.extract",
                target_type="review",
                target_id=reviews[0].pk if reviews else "",
                details={"proposals": len(reviews), "provider": answer.provider},
            )
        return {"mode": "review", "provider": answer.provider, "reviews": [r.pk for r in reviews]}
    written = [_extracted_write(actor=actor, scope=scope, item=item) for item in items]
    return {
        "mode": "written",
        "provider": answer.provider,
        "facts": [
            {"id": r.fact.pk, "outcome": "created" if r.created else "merged"} for r in written
        ],
    }


def memory_extract_request(
    *,
    actor: Actor,
    conversation: Conversation,
    session_id: str = "",
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
) -> Any:
    """A job extracting a long conversation, queued once this commits; the scope is
    checked now, so a job never fails on it later."""
    from facts.tasks import memory_extract as memory_extract_task
    from memoryhub.jobs import job_create

    scope_for_new_row(user=actor.user, team=team, visibility=visibility, project=project)
    arguments = {
        "messages": conversation.messages,
        "text": conversation.text,
        "session_id": session_id,
        "project": project,
        "visibility": visibility,
        "team": team,
        "token": actor.token.pk if actor.token else None,
    }
    job = job_create(owner=actor.user, kind="extract", arguments=arguments)
    enqueue_on_commit(memory_extract_task, job.pk)
    return job


def _scope_data(scope: dict[str, Any]) -> dict[str, Any]:
    team = scope["team"]
    return {
        "visibility": scope["visibility"],
        "team": team.pk if team is not None else None,
        "project": scope["project"],
    }


def _extracted_write(*, actor: Actor, scope: dict[str, Any], item: dict[str, Any]) -> WriteResult:
    data = {**item, **_scope_data(scope)}
    if data["supersedes"] is None:
        data.pop("supersedes")
    return fact_create(actor=actor, data=data)


def _review_create(
    *, actor: Actor, scope: dict[str, Any], item: dict[str, Any], provider: str
) -> MemoryReview:
    values = {k: v for k, v in item.items() if k not in ("extraction_confidence", "supersedes")}
    return MemoryReview.objects.create(
        owner=actor.user,
        team=scope["team"],
        visibility=scope["visibility"],
        project=scope["project"],
        provider=provider,
        supersedes_id=item["supersedes"],
        **values,
    )


def _contradicted(*, scope: dict[str, Any], content: str, config: MemoryConfig) -> int | None:
    """The active fact of the scope that ``content`` gives another value of (the same
    subject: many shared words, the same names; each side with words of its own), if
    any. A near-duplicate is not a contradiction: the write rules merge it."""
    from facts.dedupe import content_words, names

    team = scope["team"]
    candidates = Fact.objects.filter(
        owner_id=scope["owner"].pk,
        team_id=team.pk if team is not None else None,
        visibility=scope["visibility"],
        project=scope["project"],
        layer=1,
    ).recallable()
    hits = FACT_FTS.search_words(content, limit=5, within=candidates)
    new_words, new_names = content_words(content), names(content)
    for hit in hits:
        old = Fact.objects.filter(pk=hit.id).values_list("content", flat=True).first()
        if old is None:
            continue
        old_words = content_words(old)
        shared = len(new_words & old_words)
        similarity = shared / max(1, len(new_words | old_words))
        if not SAME_SUBJECT_MIN <= similarity < config.dedupe_similarity:
            continue
        if new_names and not new_names & names(old):
            continue
        if new_words - old_words and old_words - new_words:
            return hit.id
    return None


def memory_reviews_pending(*, user: Any) -> Any:
    """The proposals waiting for ``user``: theirs alone, newest first."""
    return MemoryReview.objects.filter(owner_id=user.pk, state=ReviewState.PENDING)


def _review_for_decision(*, actor: Actor, review_id: int) -> MemoryReview:
    review = MemoryReview.objects.select_for_update().filter(pk=review_id).first()
    if review is None or review.owner_id != actor.user.pk:
        raise NotFound(f"No proposal {review_id}.")
    if review.state != ReviewState.PENDING:
        raise Conflict(f"Proposal {review_id} was {review.state} already.")
    return review


REVIEW_EDITABLE = ("content", "category", "importance", "confidence", "sentiment", "tags",
                   "visibility", "team", "project")  # fmt: skip


@transaction.atomic
def memory_review_approve(
    *, actor: Actor, review_id: int, edits: dict[str, Any] | None = None
) -> WriteResult:
    """Write a proposal as a fact (with the owner's edits), through the normal write
    rules: it may merge into a repeat, and supersede the fact it contradicts."""
    review = _review_for_decision(actor=actor, review_id=review_id)
    unknown = sorted(set(edits or {}) - set(REVIEW_EDITABLE))
    if unknown:
        raise InvalidInput(f"These fields cannot be edited: {', '.join(unknown)}.")
    data = {
        "content": review.content,
        "category": review.category,
        "importance": review.importance,
        "confidence": review.confidence,
        "sentiment": review.sentiment,
        "tags": review.tags,
        "source": review.source,
        "origin": review.origin,
        "source_excerpt": review.source_excerpt,
        "extraction_confidence": review.confidence,
        "session_id": review.session_id,
        "visibility": review.visibility,
        "team": review.team_id,
        "project": review.project,
        **(edits or {}),
    }
    if (
        review.supersedes_id
        and Fact.objects.filter(pk=review.supersedes_id, superseded_by__isnull=True).exists()
    ):
        data["supersedes"] = review.supersedes_id
    result = fact_create(actor=actor, data=data)
    MemoryReview.objects.filter(pk=review.pk).update(
        state=ReviewState.APPROVED, decided_at=timezone.now(), fact=result.fact
    )
    audit_log(
        actor=actor,
        action="review.approve",
        target_type="review",
        target_id=review.pk,
        details={"fact": result.fact.pk, "edited": sorted(edits or {})},
    )
    return result


@transaction.atomic
def memory_review_reject(*, actor: Actor, review_id: int) -> None:
    review = _review_for_decision(actor=actor, review_id=review_id)
    MemoryReview.objects.filter(pk=review.pk).update(
        state=ReviewState.REJECTED, decided_at=timezone.now()
    )
    audit_log(actor=actor, action="review.reject", target_type="review", target_id=review.pk)


def memory_reviews_decide(*, actor: Actor, review_ids: list[int], approve: bool) -> dict:
    """Approve or reject many proposals: each on its own (one refused leaves the
    others decided); says which were done and which refused, and why."""
    done, refused = [], {}
    for review_id in dict.fromkeys(review_ids):
        try:
            if approve:
                memory_review_approve(actor=actor, review_id=review_id)
            else:
                memory_review_reject(actor=actor, review_id=review_id)
        except ApplicationError as exc:
            refused[review_id] = exc.message
        else:
            done.append(review_id)
    return {"done": done, "refused": refused}


# --- Distillation -----------------------------------------------------------------------------

# Sources summarised at once per scope, and summaries asked for.
DISTILL_MAX_SOURCES = 200
DISTILL_MAX_SUMMARIES = 5


@dataclass(frozen=True)
class DistillScope:
    """Facts that may be rolled together: one owner, team, visibility and project."""

    owner_id: int
    team_id: int | None
    visibility: str
    project: str

    def facts(self) -> Any:
        return Fact.objects.filter(
            owner_id=self.owner_id,
            team_id=self.team_id,
            visibility=self.visibility,
            project=self.project,
            status=Status.ACTIVE,
        )


@dataclass
class DistillPlan:
    """What the model said for one scope, before anything is written: the summaries
    (text, source ids) and the profile (text) drawn from the scope's summaries with
    these new ones."""

    scope: DistillScope
    summaries: list[tuple[str, list[int]]]
    profile: str
    provider: str


def distill_scopes(
    *, owner_id: int | None = None, project: str | None = None
) -> list[DistillScope]:
    """The scopes holding at least ``distillation_min_facts`` facts not yet distilled
    (of one owner, or project, when given)."""
    config = memory_config_get()
    undistilled = Fact.objects.filter(layer=1, distilled=False, status=Status.ACTIVE)
    if owner_id is not None:
        undistilled = undistilled.filter(owner_id=owner_id)
    if project is not None:
        undistilled = undistilled.filter(project=project)
    rows = (
        undistilled.order_by()
        .values("owner_id", "team_id", "visibility", "project")
        .annotate(n=models.Count("id"))
        .filter(n__gte=config.distillation_min_facts)
    )
    return [DistillScope(r["owner_id"], r["team_id"], r["visibility"], r["project"]) for r in rows]


def facts_distill(
    *,
    owner_id: int | None = None,
    project: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Roll each due scope's new facts into one to five summaries (layer 2, linked to
    their sources, which are marked distilled) and its summaries into one profile
    (layer 3, one per scope, rewritten in place). The chat model (or the offline
    provider) is asked everything first, outside any transaction; then the whole run
    is written in one transaction. A model failure raises before anything is written,
    so every source stays as it was. Scopes never mix: a summary is read by exactly
    those who read its sources."""
    from memoryhub.llm import SourceText
    from memoryhub.llm.configured import llm_provider_get

    provider = llm_provider_get()
    scopes = distill_scopes(owner_id=owner_id, project=project)
    plans: list[DistillPlan] = []
    for done, scope in enumerate(scopes):
        sources = list(
            scope.facts()
            .filter(layer=1, distilled=False)
            .order_by("created_at", "pk")
            .values_list("pk", "content")[:DISTILL_MAX_SOURCES]
        )
        answer = provider.summarize(
            [SourceText(id=pk, text=content) for pk, content in sources],
            max_summaries=DISTILL_MAX_SUMMARIES,
        )
        summaries = [(item.text, list(item.source_ids)) for item in answer.summaries]
        # The profile reads the scope's summaries and the new ones (known here by
        # negative ids until they are written).
        earlier = list(scope.facts().filter(layer=2).order_by("pk").values_list("pk", "content"))
        inputs = [SourceText(id=pk, text=text) for pk, text in earlier]
        inputs += [SourceText(id=-n, text=text) for n, (text, _) in enumerate(summaries, 1)]
        profile = provider.summarize(inputs, max_summaries=1).summaries if inputs else []
        plans.append(
            DistillPlan(
                scope=scope,
                summaries=summaries,
                profile=profile[0].text if profile else "",
                provider=answer.provider,
            )
        )
        if progress:
            progress(done + 1, len(scopes))
    return _distill_write(plans)


@transaction.atomic
def _distill_write(plans: list[DistillPlan]) -> dict[str, Any]:
    """Write every plan: its summaries, its sources marked distilled, its profile."""
    config = memory_config_get()
    created: list[int] = []
    profiles: list[int] = []
    for plan in plans:
        open_ids = set(
            plan.scope.facts().filter(layer=1, distilled=False).values_list("pk", flat=True)
        )
        for text, source_ids in plan.summaries:
            # Sources deleted, moved out of the scope or distilled meanwhile are left out.
            sources = [i for i in dict.fromkeys(source_ids) if i in open_ids]
            if not sources:
                continue
            summary = _derived_fact(
                scope=plan.scope, layer=2, content=text, sources=sources, config=config
            )
            created.append(summary.pk)
            Fact.objects.filter(pk__in=sources).update(distilled=True)
        summary_ids = list(plan.scope.facts().filter(layer=2).values_list("pk", flat=True))
        if plan.profile and summary_ids:
            profile = _profile_write(scope=plan.scope, content=plan.profile, sources=summary_ids)
            profiles.append(profile.pk)
    return {
        "scopes": len(plans),
        "summaries": created,
        "profiles": profiles,
        "providers": sorted({plan.provider for plan in plans}),
    }


def _derived_fact(
    *, scope: DistillScope, layer: int, content: str, sources: list[int], config: MemoryConfig
) -> Fact:
    now = timezone.now()
    category = Category.SUMMARY if layer == 2 else Category.PROFILE
    fact = Fact.objects.create(
        owner_id=scope.owner_id,
        team_id=scope.team_id,
        visibility=scope.visibility,
        project=scope.project,
        content=content[: config.max_content_length],
        category=category,
        source=Source.EXTRACTED,
        layer=layer,
        origin=Origin.INFERRED,
        source_excerpt=content[:EXCERPT_LENGTH],
        created_at=now,
        updated_at=now,
        valid_from=now,
    )
    fact.derived_from.set(sources)
    facts_index([], new=[fact.pk])
    fact_keys_refresh([fact.pk])
    _queue_embedding([fact.pk], config)
    return fact


def _profile_write(*, scope: DistillScope, content: str, sources: list[int]) -> Fact:
    """The scope's one profile, rewritten in place (created the first time)."""
    config = memory_config_get()
    existing = scope.facts().filter(layer=3).order_by("pk").first()
    if existing is None:
        return _derived_fact(scope=scope, layer=3, content=content, sources=sources, config=config)
    text = content[: config.max_content_length]
    Fact.objects.filter(pk=existing.pk).update(
        content=text,
        source_excerpt=text[:EXCERPT_LENGTH],
        updated_at=timezone.now(),
        embedding_model="",
    )
    existing.derived_from.set(sources)
    FACT_VECTORS.delete([existing.pk])
    facts_index([existing.pk])
    fact_keys_refresh([existing.pk])
    _queue_embedding([existing.pk], config)
    return existing


def facts_distill_request(*, actor: Actor, project: str | None = None) -> Any:
    """Distill now: a job distilling the actor's due scopes (of ``project`` when
    given), queued once this commits."""
    from facts.tasks import facts_distill as facts_distill_task
    from memoryhub.jobs import job_create

    if project is not None and (not isinstance(project, str) or len(project) > 200):
        raise InvalidInput("A project key is at most 200 characters.")
    job = job_create(owner=actor.user, kind="distill", arguments={"project": project})
    audit_log(actor=actor, action="memory.distill", target_type="job", target_id=job.pk)
    enqueue_on_commit(facts_distill_task, job.pk)
    return job


def facts_distill_due() -> dict[str, Any] | None:
    """The scheduled distillation: runs when switched on and its interval has passed."""
    config = memory_config_get()
    if not config.distillation_enabled:
        return None
    now = timezone.now()
    interval = timedelta(hours=config.distillation_every_hours)
    if config.distilled_at is not None and now - config.distilled_at < interval:
        return None
    # Claimed first, so two beats (or workers) never run it twice.
    claimed = MemoryConfig.objects.filter(pk=config.pk, distilled_at=config.distilled_at).update(
        distilled_at=now
    )
    if not claimed:
        return None
    return facts_distill()


# --- The active cap ------------------------------------------------------------------------------


def retention_value(fact: Fact, *, now: Any, half_life_days: float) -> float:
    """How much a fact is worth keeping: importance, then recency, then use."""
    recency = fact.recency(now=now, half_life_days=half_life_days)
    return 0.6 * fact.importance + 0.3 * recency + 0.1 * fact.use(saturation=50)


def enforce_active_cap(
    *,
    actor: Actor | None,
    owner_id: int,
    project: str,
    config: MemoryConfig,
    keep: int | None = None,
) -> list[int]:
    """Archive the least valuable active facts of an owner's project past the cap."""
    cap = config.max_active_facts
    if not cap:
        return []
    active = Fact.objects.filter(owner_id=owner_id, project=project, status=Status.ACTIVE)
    excess = active.count() - cap
    if excess <= 0:
        return []
    now = timezone.now()
    candidates = list(
        active.exclude(pk=keep).only(
            "id", "importance", "created_at", "last_accessed_at", "access_count"
        )
    )
    candidates.sort(
        key=lambda f: (
            retention_value(f, now=now, half_life_days=config.recency_half_life_days),
            f.pk,
        )
    )
    victims = [f.pk for f in candidates[:excess]]
    Fact.objects.filter(pk__in=victims).update(status=Status.ARCHIVED, updated_at=now)
    fact_keys_refresh(victims)
    audit_log(
        actor=actor,
        action="fact.archive",
        target_type="fact",
        target_id=victims[0] if victims else "",
        details={
            "reason": f"over the cap of {cap} active facts",
            "ids": victims,
            "project": project,
        },
    )
    return victims


# --- Embedding ---------------------------------------------------------------------------------


def current_embedder(config: MemoryConfig | None = None):
    """The configured embedder (cached per configuration by the embeddings package)."""
    from memoryhub.embeddings import get_embedder

    config = config or memory_config_get()
    return get_embedder(
        provider=config.embeddings_provider,
        url=config.embeddings_url,
        model=config.embeddings_model,
        api_key=config.embeddings_api_key,
    )


def facts_embed(*, fact_ids: Sequence[int]) -> int:
    """Embed these facts with the configured model and store their vectors. Facts that
    changed or vanished meanwhile, and facts that already have a vector from this model
    (a task delivered again after its worker died), are skipped; returns how many were
    embedded. Embedder errors propagate (the task retries; the facts stay as they are)."""
    config = memory_config_get()
    if not config.embeddings_enabled:
        return 0
    embedder = current_embedder(config)
    ids = list(fact_ids)

    def chunks():
        for start in range(0, len(ids), EMBED_BATCH):
            rows = list(
                Fact.objects.filter(pk__in=ids[start : start + EMBED_BATCH])
                .exclude(embedding_model=embedder.model_id)
                .values_list("pk", "content", "speaker")
            )
            if rows:
                yield (
                    [(pk, content) for pk, content, _ in rows],
                    [embedded_text(content, speaker) for _, content, speaker in rows],
                )

    # Each chunk is embedded while the one before it is stored.
    return sum(
        _vectors_store(rows, vectors, embedder)
        for (rows, _), vectors in embed_chunks(embedder, chunks(), lambda chunk: chunk[1])
    )


def embedded_text(content: str, speaker: str) -> str:
    """What a fact's vector is made of: what it says, and who said it ("Caroline: I
    went to the support group"), since questions name the person."""
    return f"{speaker}: {content}" if speaker else content


def _vectors_store(rows: list[tuple[int, str]], vectors: Any, embedder: Any) -> int:
    """Store the vectors of the facts in ``rows`` (id, content embedded) whose content is
    still what was embedded; how many were stored."""
    FACT_VECTORS.ensure_dim(embedder.dim)
    with transaction.atomic():
        current = dict(
            Fact.objects.filter(pk__in=[pk for pk, _ in rows]).values_list("pk", "content")
        )
        fresh = [
            (pk, vec)
            for (pk, content), vec in zip(rows, vectors, strict=True)
            if current.get(pk) == content
        ]
        FACT_VECTORS.upsert(fresh, model=embedder.model_id)
        Fact.objects.filter(pk__in=[pk for pk, _ in fresh]).update(
            embedding_model=embedder.model_id
        )
    return len(fresh)


def facts_embed_waiting(*, limit: int = EMBED_SWEEP) -> int:
    """Embed up to ``limit`` active facts still waiting for a vector, oldest first; how many
    were embedded. Every write queues a small task of its own; whichever runs first
    takes the facts waiting behind it along in full batches, and the facts of writes
    whose task was never queued (the broker was down) with them. One sweep at a time:
    two would embed the same facts twice."""
    if not cache.add(EMBED_SWEEP_LOCK, True, timeout=EMBED_SWEEP_LOCK_SECONDS):
        return 0
    try:
        config = memory_config_get()
        if not config.embeddings_enabled:
            return 0
        # Active facts: what recall reads (archived ones wait for the backfill).
        waiting = list(
            facts_needing_embedding(config)
            .filter(status=Status.ACTIVE)
            .order_by("pk")
            .values_list("pk", flat=True)[:limit]
        )
        return facts_embed(fact_ids=waiting) if waiting else 0
    finally:
        cache.delete(EMBED_SWEEP_LOCK)


def facts_needing_embedding(config: MemoryConfig | None = None):
    """Facts without a vector from the configured model."""
    config = config or memory_config_get()
    return Fact.objects.exclude(embedding_model=embedder_model_id(config))


def embedder_model_id(config: MemoryConfig) -> str:
    """The model id the configured embedder stamps on vectors, without loading it."""
    provider = config.embeddings_provider or "local"
    if provider == "local":
        from memoryhub.embeddings.local import MODEL_ID

        return MODEL_ID
    return f"{provider}:{config.embeddings_model}"


def facts_backfill(*, batch_size: int = 256) -> int:
    """Embed every fact that has no vector or one from another model."""
    config = memory_config_get()
    if not config.embeddings_enabled:
        return 0
    total = 0
    last_id = 0
    while True:
        ids = list(
            facts_needing_embedding(config)
            .filter(pk__gt=last_id)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            return total
        total += facts_embed(fact_ids=ids)
        last_id = ids[-1]


def fact_touch(*, fact_ids: Sequence[int]) -> None:
    """Count one more access of a fact per time its id is listed."""
    by_count: dict[int, list[int]] = defaultdict(list)
    for fact_id, count in Counter(fact_ids).items():
        by_count[count].append(fact_id)
    now = timezone.now()
    for count, ids in by_count.items():
        Fact.objects.filter(pk__in=ids).update(
            access_count=F("access_count") + count, last_accessed_at=now
        )
