"""Creating facts, one or a batch: a near-duplicate merges into the fact it repeats (the
wording it replaces kept as an archived parent), a fact may supersede another, and every
write keeps the full-text index and the near-duplicate keys in step inside its own
transaction."""

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction
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
from facts.models import Category, Fact, Origin, Source, Status
from facts.search import FACT_FTS, FACT_KEYS
from facts.services.cleaning import EXCERPT_LENGTH, FactInput, fact_input_clean
from facts.services.embedding import queue_embedding
from facts.services.retention import enforce_active_cap
from facts.sessions import facts_index, facts_index_written
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.db.bulk import (
    analyze_when_grown,
    insert_returning_ids,
    insert_rows,
    pipelined,
    reserve_ids,
    update_rows,
)
from memoryhub.engine.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryhub.engine.locking import writes_serialise
from memoryhub.engine.refs import shortened
from teams.services import Actor, audit_log, audit_log_many, scope_for_new_row

# New facts of a batch are inserted this many items at a time.
WRITE_PIECE = 100


@dataclass
class WriteResult:
    fact: Fact
    created: bool  # False: merged into an existing fact
    archived: list[int] = field(default_factory=list)


def fact_values(
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
        "said_in_sessions": [item.session_id] if item.session_id else [],
        "occurred_at": item.occurred_at or now,
        "speaker": item.speaker,
        "source_excerpt": item.source_excerpt or item.content[:EXCERPT_LENGTH],
        "extraction_confidence": item.extraction_confidence,
        "tier": item.tier,
        "fleet": fleet_of_write(actor=actor, fleet=item.fleet),
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


def fleet_of_write(*, actor: Actor, fleet: str) -> str:
    """The fleet a new row carries: an agent's token's when it has one (an agent writes
    for its own fleet only, or another fleet's agents could not read its rows, and it
    could plant rows in theirs), else the one named."""
    own = actor.token.fleet if actor.token is not None else ""
    if own and fleet and fleet != own:
        raise Forbidden(f"This token writes for fleet '{own}' only, not '{shortened(fleet, 40)}'.")
    return own or fleet


def fact_from_input(*, actor: Actor, item: FactInput, scope: dict[str, Any]) -> Fact:
    """A new fact from ``item``, not saved yet."""
    return Fact(**fact_values(actor=actor, item=item, scope=scope, now=timezone.now()))


class FactRows:
    """New facts written as plain rows (see ``memoryhub.engine.db.bulk``): every column's
    value in model order, defaults filled in, and the saved rows handed back as
    ``Fact`` instances without going through the model layer per value."""

    def __init__(self, ids: Iterator[int] | None = None) -> None:
        fields = Fact._meta.concrete_fields
        self.names = [f.attname for f in fields if not f.primary_key]
        self.defaults = {f.attname: f.get_default() for f in fields if not f.primary_key}
        self.pk_index = next(i for i, f in enumerate(fields) if f.primary_key)
        self.rows: list[tuple] = []
        # Primary keys reserved ahead (``reserve_ids``), given to the rows in order.
        self.ids = ids

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
        if self.ids is None:
            ids = insert_returning_ids(Fact, self.names, self.rows)
        else:
            ids = list(itertools.islice(self.ids, len(self.rows)))
            rows = [(i, *row) for i, row in zip(ids, self.rows, strict=True)]
            insert_rows(Fact, ["id", *self.names], rows)
        names = list(self.names)
        names.insert(self.pk_index, "id")
        facts = []
        for pk, row in zip(ids, self.rows, strict=True):
            values = list(row)
            values.insert(self.pk_index, pk)
            facts.append(Fact.from_db(connection.alias, names, values))
        self.rows = []
        return facts


def _resolve_supersedes(*, actor: Actor, fact_id: int, scope: dict[str, Any]) -> Fact:
    """The fact a new one of ``scope`` replaces, locked. A supersede never hides a fact
    from its own owner: what replaces it must be a statement they can read."""
    old = (
        Fact.objects.visible_to(actor.user)
        .select_for_update(of=("self",))
        .filter(pk=fact_id)
        .first()
    )
    if old is None:
        raise NotFound(f"No fact {fact_id} that you can see to supersede.")
    if not old.is_editable_by(actor.user):
        raise Forbidden(f"You cannot supersede fact {fact_id}: it is not yours.")
    if old.superseded_by_id is not None:
        raise InvalidInput(f"Fact {fact_id} is already superseded by {old.superseded_by_id}.")
    replacement = Fact(owner=scope["owner"], team=scope["team"], visibility=scope["visibility"])
    if not replacement.reaches(old.owner_id):
        owner = old.owner.get_username()
        raise Forbidden(
            f"Fact {fact_id} is {owner}'s, and {owner} could not read a {scope['visibility']} "
            f"fact of yours that replaces it: supersede it with one {owner} can read "
            "(of a team of theirs, or global)."
        )
    return old


def signature_of(item: FactInput, scope: dict[str, Any]) -> Signature:
    """What the near-duplicate keys of ``item``, written in ``scope``, are built from."""
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


def keys_ensure_current() -> bool:
    """Re-key the stored facts if their keys were built by other rules (once, after an
    upgrade); whether it did. Inside the writing transaction."""
    if not fact_keys_stale():
        return False
    fact_keys_rebuild()
    return True


# The merged fact's content changed: it waits for its new vector like an edited one.
# It takes the repeat's import key too, so importing the same document again finds it.
MERGED_FIELDS = (
    "content",
    "tags",
    "importance",
    "confidence",
    "origin",
    "import_key",
    "updated_at",
    "embedding_model",
    "said_in_sessions",
    "category",
    "source",
)
# A statement said again in this many sessions is a pattern of the user's: observed.
OBSERVED_SESSIONS = 3
OBSERVED_SESSIONS_KEPT = 20


class MergeTargetGone(Conflict):
    """A fact a write was to merge into was deleted or archived by another writer
    between finding it and writing: nothing was written, and the write may be sent again."""


def _targets_lock(targets: list[Fact]) -> None:
    """Lock the stored facts to be merged into and take their current values, or raise
    MergeTargetGone if one is no longer active. SQLite's write transactions already run
    one at a time; on PostgreSQL another writer may have changed or deleted a target
    since it was read."""
    stored = [t for t in targets if t.pk is not None]
    if not stored:
        return
    rows = (
        Fact.objects.select_for_update(of=("self",))
        .filter(pk__in={t.pk for t in stored}, status=Status.ACTIVE)
        .values("pk", *MERGED_FIELDS)
    )
    current = {row.pop("pk"): row for row in rows}
    gone = sorted({t.pk for t in stored} - set(current))
    if gone:
        raise MergeTargetGone(
            f"Fact {gone[0]}, which this write repeats, was deleted or archived while it "
            "was being written: nothing was written; send it again."
        )
    for target in stored:
        for name, value in current[target.pk].items():
            setattr(target, name, value)


def _observe(target: Fact, session_id: str) -> None:
    """Count the session a repeat was said in; a statement said in OBSERVED_SESSIONS
    sessions or more becomes a pattern, observed (inferred from repeated behaviour),
    more certain with each further session. Its history rows (the earlier wordings
    kept by each merge) are the occurrences it was inferred from."""
    # A fact stored before sessions were counted was said in its own session.
    sessions = list(target.said_in_sessions or ([target.session_id] if target.session_id else []))
    if session_id and session_id not in sessions:
        sessions = [*sessions, session_id][-OBSERVED_SESSIONS_KEPT:]
    target.said_in_sessions = sessions
    if len(sessions) >= OBSERVED_SESSIONS:
        target.category = Category.PATTERN
        target.source = Source.OBSERVED
        target.origin = Origin.INFERRED
        target.confidence = max(target.confidence, min(0.95, 0.5 + 0.1 * len(sessions)))


def merges_apply(
    *,
    actor: Actor,
    merges: list[tuple[Fact, FactInput, dict[str, Any]]],
) -> list[int]:
    """Fold near-duplicates into the facts they repeat, in order; the ids of the facts
    merged into, to be embedded again.

    Each merge keeps one history row: the target's previous statement, as an archived
    fact linked through ``derived_from`` (what forgetting the target takes with it). The
    incoming statement needs no row of its own: the target takes its content, the union
    of the tags, the higher importance and confidence, and its import key when it has
    one. The writes of a whole batch go in a few statements."""
    if not merges:
        return []
    _targets_lock([target for target, _, _ in merges])
    now = timezone.now()
    parents = FactRows()
    for target, item, _ in merges:
        parents.add_copy(target, status=Status.ARCHIVED, embedding_model="")
        target.content = item.content
        target.tags = merged_tags(target.tags, item.tags)
        target.importance = max(target.importance, item.importance)
        target.confidence = max(target.confidence, item.confidence)
        target.origin = Origin.MERGED
        target.import_key = item.import_key or target.import_key
        target.updated_at = now
        target.embedding_model = ""
        _observe(target, item.session_id)
    previous = parents.insert()
    targets = list({id(target): target for target, _, _ in merges}.values())
    update_rows(
        Fact, MERGED_FIELDS, [(*(getattr(t, f) for f in MERGED_FIELDS), t.pk) for t in targets]
    )
    insert_rows(
        Fact.derived_from.through,
        ("from_fact_id", "to_fact_id"),
        [(target.pk, parent.pk) for (target, _, _), parent in zip(merges, previous, strict=True)],
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
                "details": {"parents": [parent.pk]},
            }
            for (target, _, _), parent in zip(merges, previous, strict=True)
        ],
    )
    return [t.pk for t in targets]


def fact_create(*, actor: Actor, data: dict[str, Any]) -> WriteResult:
    """Store one fact for the acting user (or merge it into a near-duplicate)."""
    config = memory_config_get()
    item = fact_input_clean(data=data, config=config)
    with transaction.atomic():
        # Near-duplicates are looked for among this owner's facts: one writer at a time.
        writes_serialise("facts", actor.user.pk)
        scope = scope_for_new_row(
            user=actor.user, team=item.team, visibility=item.visibility, project=item.project
        )
        old = (
            _resolve_supersedes(actor=actor, fact_id=item.supersedes, scope=scope)
            if item.supersedes
            else None
        )
        sig = signature_of(item, scope)
        keys_ensure_current()
        if old is None:
            existing_id = DuplicateFinder(config.dedupe_similarity).find(sig)
            if existing_id is not None:
                existing = Fact(pk=existing_id)
                try:
                    with transaction.atomic():
                        existing.refresh_from_db()
                        merged = merges_apply(actor=actor, merges=[(existing, item, scope)])
                except (MergeTargetGone, Fact.DoesNotExist):
                    pass  # deleted meanwhile: the statement is new after all
                else:
                    queue_embedding(merged, config)
                    return WriteResult(fact=existing, created=False)
        fact = fact_from_input(actor=actor, item=item, scope=scope)
        fact.save()
        facts_index_written([fact])
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
        queue_embedding([fact.pk], config)
    return WriteResult(fact=fact, created=True, archived=archived)


def fact_statistics_follow() -> None:
    """Before a bulk write, refresh the planner's view of the fact tables if they outgrew
    it (PostgreSQL)."""
    analyze_when_grown(Fact._meta.db_table, FACT_KEYS.table, FACT_FTS.table)


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
    fact_statistics_follow()
    # On PostgreSQL the new rows' writes stream to the server while the next items are
    # checked: their ids are reserved up front, so no insert is waited for.
    with transaction.atomic(), pipelined():
        # Near-duplicates are looked for among this owner's facts: one writer at a time.
        writes_serialise("facts", actor.user.pk)
        ids = reserve_ids(Fact, len(cleaned))
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
            signatures.append(signature_of(item, scopes[key]))
        # Keys rebuilt just now are not committed: the look-ahead could not see them.
        rebuilt = keys_ensure_current()
        finder = DuplicateFinder(config.dedupe_similarity)
        if len(cleaned) > 1 and not rebuilt:
            finder.look_ahead(signatures)
        rows = FactRows(None if ids is None else iter(ids))
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
            facts_index_written(written)
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
                rows.add(fact_values(actor=actor, item=item, scope=scope, now=now))
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
        merged = merges_apply(
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
        queue_embedding(list(dict.fromkeys([*(f.pk for f in facts), *merged])), config)
    return [
        WriteResult(fact=facts[ref], created=True)
        if kind == "new"
        else WriteResult(fact=targets[ref], created=False)
        for kind, ref in plan
    ]
