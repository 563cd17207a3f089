"""Changing and deleting one fact, under the access rule, re-read under a lock."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from facts.dedupe import fact_keys_refresh
from facts.models import Category, Fact, Sentiment, Source, Status, Tier
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.cleaning import clean_choice, clean_content, clean_unit
from facts.services.embedding import queue_embedding
from facts.services.summaries import SCOPE_FIELDS, summaries_follow_sources
from facts.sessions import facts_index, facts_index_after_removal, neighbours_of
from memoryhub.engine.cleaning import clean_tags
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.derived import facts_derived_prune
from memoryhub.engine.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryhub.engine.locking import row_for_update, writes_serialise
from teams.services import Actor, audit_log, scope_change_check, scope_for_new_row

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
    # Writers of this owner's facts that merge near-duplicates run one at a time.
    writes_serialise("facts", fact.owner_id)
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
        values["content"] = clean_content(values["content"], config)
    if "category" in values:
        clean_choice(values["category"], Category, "category")
    if "source" in values:
        clean_choice(values["source"], Source, "source")
    if "status" in values:
        clean_choice(values["status"], Status, "status")
    if "sentiment" in values:  # null clears it, as the empty string does
        values["sentiment"] = clean_choice(values["sentiment"] or "", Sentiment, "sentiment")
    for name in ("importance", "confidence"):
        if name in values:
            values[name] = clean_unit(values[name], name)
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
        scope_change_check(
            actor=actor,
            row=fact,
            visibility=scope["visibility"],
            team=scope["team"],
            target_type="fact",
            noun="fact",
        )
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
    if SCOPE_FIELDS & changed.keys():
        # Moved out of its scope: the summaries built from it no longer quote it.
        summaries_follow_sources(fact_ids=[fact.pk])
    audit_log(
        actor=actor,
        action="fact.update",
        target_type="fact",
        target_id=fact.pk,
        details={"fields": sorted(changed)},
    )
    if "content" in changed:
        queue_embedding([fact.pk], config)
    return fact


@transaction.atomic
def fact_delete(*, actor: Actor, fact: Fact, expected_version: str | None = None) -> None:
    """Delete a fact with its index rows and vector (re-read under a lock first, so a
    fact already gone is not found and ``expected_version`` is checked)."""
    _require_editable(actor=actor, fact=fact)
    # Writers of this owner's facts that merge near-duplicates run one at a time.
    writes_serialise("facts", fact.owner_id)
    fact = row_for_update(fact, missing=f"No fact {fact.pk}.", expected_version=expected_version)
    _require_editable(actor=actor, fact=fact)
    fact_id = fact.pk
    # The summaries built from it are said again without it (or go, with no source left).
    summaries_follow_sources(fact_ids=[fact_id], leaving=[fact_id])
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
