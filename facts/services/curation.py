"""Curating many facts at once (delete, archive, visibility, category) under the rules of
a single edit, and taking a delete or archive back for a few seconds."""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import Group
from django.core import serializers
from django.db import transaction
from django.utils import timezone

from facts.dedupe import fact_keys_refresh
from facts.models import Category, Fact, FactUndo, Status, UndoKind
from facts.search import FACT_FTS, FACT_VECTORS
from facts.selectors import fact_ids_editable
from facts.services.cleaning import clean_choice
from facts.services.embedding import queue_embedding
from facts.services.summaries import (
    derived_links,
    sources_undistilled,
    summaries_follow_sources,
)
from facts.services.update import fact_update
from facts.sessions import facts_index, facts_index_after_removal, neighbours_of
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import ApplicationError, Conflict, InvalidInput, NotFound
from memoryhub.engine.locking import writes_serialise
from teams.models import AgentToken, Visibility
from teams.services import Actor, audit_log_many

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
        value = clean_choice(value, Visibility, "visibility")
    elif action == "category":
        value = clean_choice(value, Category, "category")
    fact_undo_purge()
    outcome = BulkOutcome(action=action)
    with transaction.atomic():
        # What is decided next (who may change which fact, what a delete keeps for its
        # undo) is read after every other writer of these facts is done.
        _facts_lock(ids)
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


def _facts_lock(ids: Sequence[int]) -> None:
    """Hold until the transaction ends the rows of these facts, after their owners'
    write locks (the order in which a single edit takes them, so neither waits on the
    other in a circle)."""
    owners = Fact.objects.filter(pk__in=ids).values_list("owner_id", flat=True).distinct()
    for owner_id in sorted(set(owners)):
        writes_serialise("facts", owner_id)
    rows = Fact.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk")
    list(rows.values_list("pk", flat=True))


def _bulk_delete(*, actor: Actor, facts: list[Fact]) -> tuple[list[int], FactUndo | None]:
    """Delete these facts as ``fact_delete`` does (rows, index entries, vectors, keys),
    keeping their rows and links in an undo record for UNDO_SECONDS."""
    if not facts:
        return [], None
    # Writers of these owners' facts (and distillations of them) run one at a time.
    for owner_id in sorted({fact.owner_id for fact in facts}):
        writes_serialise("facts", owner_id)
    ids = [fact.pk for fact in facts]
    # The summaries built from them are said again without them (or go, with no source
    # left); an undo brings the facts back, not what was said of them.
    summaries_follow_sources(fact_ids=ids, leaving=ids)
    payload = {
        "rows": json.loads(serializers.serialize("json", facts, fields=_ROW_FIELDS)),
        "links": derived_links(children=set(ids)) + derived_links(parents=set(ids)),
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
            FactUndo.objects.select_for_update(of=("self",))
            .filter(pk=undo_id, user_id=actor.user.pk)
            .first()
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
    ids = [int(i) for i in statuses]
    _facts_lock(ids)  # a fact deleted or changed meanwhile is left as it is
    found = Fact.objects.in_bulk(ids)
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
    # A fact whose summary went with the delete is distilled again.
    sources_undistilled(back)
    facts_index([], new=sorted(back))
    fact_keys_refresh(back)
    audit_log_many(
        actor=actor,
        events=[
            {"action": "fact.restore", "target_type": "fact", "target_id": pk}
            for pk in sorted(back)
        ],
    )
    queue_embedding(sorted(back), memory_config_get())
    outcome.restored = sorted(back)
    return outcome


def fact_undo_purge(*, now: datetime | None = None) -> int:
    """Drop the undo records whose time ran out, and with them the last copy of the
    facts they deleted; how many were dropped. Run every few seconds by the worker's
    schedule and before every change of many facts."""
    deleted, _ = FactUndo.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
