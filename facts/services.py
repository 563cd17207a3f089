"""Writes of the fact store: create (with near-duplicate merging and supersession),
bulk create, update, delete, embedding, backfill, the active-fact cap, and settings.

Every write keeps the FTS index in step inside its own transaction and queues
embedding after commit, so a fact is kept even when the embedder is down.
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from facts.models import (
    Category,
    Fact,
    MemoryConfig,
    Origin,
    Sentiment,
    Source,
    Status,
    Tier,
)
from facts.search import FACT_FTS, FACT_VECTORS, fts_values
from memoryhub.errors import Forbidden, InvalidInput, NotFound
from memoryhub.search import compile_within, match_any, words
from memoryhub.search.text import STOPWORDS
from memoryhub.tasks import enqueue_on_commit
from teams.services import Actor, audit_log, scope_for_new_row

MAX_TAGS = 20
MAX_TAG_LENGTH = 64
EXCERPT_LENGTH = 200
# Lexical similarity (of content words) at which two facts say the same thing.
NEAR_DUPLICATE_SIMILARITY = 0.85
# Similarity of content words at which two facts are about the same subject.
SAME_SUBJECT_SIMILARITY = 0.4
EMBED_BATCH = 64


# --- Settings -------------------------------------------------------------------------------


def memory_config_get() -> MemoryConfig:
    """The instance's memory settings, created from the environment defaults."""
    config = MemoryConfig.objects.filter(pk=1).first()
    if config is None:
        config, _ = MemoryConfig.objects.get_or_create(
            pk=1, defaults=django_settings.MEMORY_DEFAULTS
        )
    return config


SECRET_FIELDS = ("embeddings_api_key", "llm_api_key")


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
        if not hasattr(config, name) or name in ("id", "updated_at"):
            raise InvalidInput(f"Unknown memory setting '{name}'.")
        if getattr(config, name) != value:
            setattr(config, name, value)
            changed[name] = "(set)" if name in SECRET_FIELDS else value
    if not changed:
        return config
    config.updated_at = timezone.now()
    config.save()
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


def _clean_choice(value: str, choices: type, what: str) -> str:
    if value not in choices.values:
        raise InvalidInput(
            f"Unknown {what} '{value}': use one of {', '.join(map(str, choices.values))}."
        )
    return value


def _clean_unit(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput(f"{what.capitalize()} must be a number between 0 and 1.")
    if not 0 <= value <= 1:
        raise InvalidInput(f"{what.capitalize()} must be between 0 and 1, not {value}.")
    return float(value)


def _clean_tags(tags: Sequence[str] | None) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise InvalidInput("Tags must be a list of strings.")
    cleaned = list(dict.fromkeys(" ".join(t.split()).lower() for t in tags if t.strip()))
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"At most {MAX_TAGS} tags.")
    if any(len(t) > MAX_TAG_LENGTH for t in cleaned):
        raise InvalidInput(f"A tag is at most {MAX_TAG_LENGTH} characters.")
    return cleaned


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
    supersedes: int | None = None
    origin: str = Origin.USER_STATED
    source_excerpt: str = ""
    extraction_confidence: float | None = None
    tier: str = Tier.PROJECT
    fleet: str = ""
    skill: str = ""
    resolution_ref: str = ""
    layer: int = 1


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
    item.tags = _clean_tags(item.tags)
    item.source_excerpt = (item.source_excerpt or "")[:EXCERPT_LENGTH]
    if len(item.session_id) > 200 or len(item.fleet) > 100 or len(item.skill) > 200:
        raise InvalidInput("session_id, fleet or skill is too long.")
    if item.layer not in (1, 2, 3):
        raise InvalidInput("Layer must be 1, 2 or 3.")
    return item


# --- Near duplicates ------------------------------------------------------------------------


def _content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def _similarity(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    return len(a & b) / len(a | b)


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def same_scope_filter(*, scope: dict[str, Any], layer: int = 1) -> tuple[str, tuple]:
    """The compiled id filter of active facts in a write scope (owner, team, project),
    reusable across many near-duplicate checks."""
    same_scope = Fact.objects.filter(
        owner=scope["owner"],
        team=scope["team"],
        project=scope["project"],
        status=Status.ACTIVE,
        superseded_by__isnull=True,
        layer=layer,
    )
    return compile_within(same_scope)


def _longest_terms_match(item: FactInput, similarity: float) -> str:
    """An FTS query every fact sharing ``similarity`` of ``item``'s words matches.

    Such a fact misses at most (1 - s) of the new fact's n words, so it contains at
    least one of any floor((1 - s) * n) + 1 of them. The longest words stand in for the
    rarest, which keeps the query cheap on large stores instead of matching every fact
    that shares a common word.
    """
    terms = [w for w in dict.fromkeys(words(item.content)) if w not in STOPWORDS]
    if not terms:
        terms = list(dict.fromkeys(words(item.content)))
    needed = math.floor((1 - similarity) * len(terms)) + 1
    keep = sorted(terms, key=len, reverse=True)[:needed]
    return match_any(" ".join(keep), drop_stopwords=False)


NAME = re.compile(r"\b[A-Z][\w-]*")


CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march "
    "april may june july august september october november december".split()
)


def _names(text: str) -> set[str]:
    """Capitalised words that name someone or something (people, products, places).
    A sentence's first word counts only as part of a multi-word name ("Rosa Quinn");
    days and months are values, not subjects."""
    tokens = text.split()
    found = set()
    for index, token in enumerate(tokens):
        word = token.strip(".,;:!?()[]\"'")
        if not NAME.fullmatch(word) or word.lower() in CALENDAR_WORDS:
            continue
        if index == 0 and not (len(tokens) > 1 and NAME.match(tokens[1])):
            continue
        found.add(word)
    return found


def _same_names(a: str, b: str) -> bool:
    """Whether two statements can be about the same subject: the names they mention
    overlap, or neither mentions one."""
    names_a, names_b = _names(a), _names(b)
    if not names_a or not names_b:
        return not names_a and not names_b
    return bool(names_a & names_b)


def _candidate_matches(item: FactInput) -> list[str]:
    """Selective FTS queries that together match every possible near-duplicate: the
    very-similar-text rule, and (with tags) facts sharing a tag and enough words."""
    matches = [_longest_terms_match(item, NEAR_DUPLICATE_SIMILARITY)]
    if item.tags and matches[0]:
        tag_phrases = [" ".join(words(tag)) for tag in item.tags]
        tags = " OR ".join('"' + phrase + '"' for phrase in tag_phrases if phrase)
        if tags:
            subject = _longest_terms_match(item, SAME_SUBJECT_SIMILARITY)
            matches.append(f"tags : ({tags}) AND ({subject})")
    return [m for m in matches if m]


def find_near_duplicate(
    *, scope: dict[str, Any], item: FactInput, within: tuple[str, tuple] | None = None
) -> int | None:
    """The id of an active fact in the same scope (owner, team, project) that says the
    same thing: the same or very similar words, or the same subject with more than half
    of the new fact's tags shared."""
    matches = _candidate_matches(item)
    if not matches:
        return None
    within = within or same_scope_filter(scope=scope, layer=item.layer)
    rows = [
        row for match in matches for row in FACT_FTS.search_rows(match, limit=10, within=within)
    ]
    new_words = _content_words(item.content)
    new_norm = _normalised(item.content)
    for fact_id, content, tags_text in rows:
        if _normalised(content) == new_norm:
            return fact_id
        similarity = _similarity(new_words, _content_words(content))
        if similarity >= NEAR_DUPLICATE_SIMILARITY:
            return fact_id
        if (
            item.tags
            and similarity >= SAME_SUBJECT_SIMILARITY
            and _same_names(item.content, content)
        ):
            # Tags are indexed space-joined; a tag with a space inside is one of them.
            stored = set(tags_text.split(" ")) | {tags_text}
            shared = sum(
                1
                for tag in item.tags
                if tag in stored or all(part in stored for part in tag.split(" "))
            )
            if shared * 2 > len(item.tags):
                return fact_id
    return None


# --- Create -----------------------------------------------------------------------------------


@dataclass
class WriteResult:
    fact: Fact
    created: bool  # False: merged into an existing fact
    archived: list[int] = field(default_factory=list)


def _fact_from_input(*, actor: Actor, item: FactInput, scope: dict[str, Any]) -> Fact:
    now = timezone.now()
    return Fact(
        **scope,
        content=item.content,
        category=item.category,
        source=item.source,
        layer=item.layer,
        importance=item.importance,
        confidence=item.confidence,
        sentiment=item.sentiment,
        tags=item.tags,
        origin=item.origin,
        session_id=item.session_id,
        source_excerpt=item.source_excerpt or item.content[:EXCERPT_LENGTH],
        extraction_confidence=item.extraction_confidence,
        tier=item.tier,
        fleet=item.fleet or (actor.token.fleet if actor.token else ""),
        skill=item.skill,
        resolution_ref=item.resolution_ref,
        created_by=actor.user,
        created_by_token=actor.token,
        created_at=now,
        updated_at=now,
        valid_from=now,
    )


def _resolve_supersedes(*, actor: Actor, fact_id: int) -> Fact:
    old = Fact.objects.visible_to(actor.user).filter(pk=fact_id).first()
    if old is None:
        raise NotFound(f"No fact {fact_id} that you can see to supersede.")
    if not old.is_editable_by(actor.user):
        raise Forbidden(f"You cannot supersede fact {fact_id}: it is not yours.")
    if old.superseded_by_id is not None:
        raise InvalidInput(f"Fact {fact_id} is already superseded by {old.superseded_by_id}.")
    return old


def _queue_embedding(fact_ids: list[int]) -> None:
    from facts.tasks import facts_embed

    if fact_ids:
        enqueue_on_commit(facts_embed, fact_ids)


def _merge_into(*, actor: Actor, existing: Fact, item: FactInput, scope: dict[str, Any]) -> Fact:
    """Fold a near-duplicate into ``existing``. Both parents (the previous statement and
    the incoming one) are kept as archived facts linked through ``derived_from``."""
    previous = Fact.objects.get(pk=existing.pk)
    previous.pk = None
    previous.id = None
    previous.status = Status.ARCHIVED
    previous.embedding_model = ""
    previous.save()
    incoming = _fact_from_input(actor=actor, item=item, scope=scope)
    incoming.status = Status.ARCHIVED
    incoming.save()
    existing.content = item.content
    existing.tags = list(dict.fromkeys([*existing.tags, *item.tags]))
    existing.importance = max(existing.importance, item.importance)
    existing.confidence = max(existing.confidence, item.confidence)
    existing.origin = Origin.MERGED
    existing.updated_at = timezone.now()
    existing.save()
    existing.derived_from.add(previous, incoming)
    FACT_FTS.upsert([(existing.pk, fts_values(existing.content, existing.tags))])
    _queue_embedding([existing.pk])
    audit_log(
        actor=actor,
        action="fact.merge",
        target_type="fact",
        target_id=existing.pk,
        details={"parents": [previous.pk, incoming.pk]},
    )
    return existing


def fact_create(*, actor: Actor, data: dict[str, Any]) -> WriteResult:
    """Store one fact for the acting user (or merge it into a near-duplicate)."""
    config = memory_config_get()
    item = fact_input_clean(data=data, config=config)
    with transaction.atomic():
        scope = scope_for_new_row(
            user=actor.user, team=item.team, visibility=item.visibility, project=item.project
        )
        old = _resolve_supersedes(actor=actor, fact_id=item.supersedes) if item.supersedes else None
        if old is None:
            existing_id = find_near_duplicate(scope=scope, item=item)
            if existing_id is not None:
                existing = Fact.objects.get(pk=existing_id)
                return WriteResult(
                    fact=_merge_into(actor=actor, existing=existing, item=item, scope=scope),
                    created=False,
                )
        fact = _fact_from_input(actor=actor, item=item, scope=scope)
        fact.save()
        FACT_FTS.upsert([(fact.pk, fts_values(fact.content, fact.tags))])
        if old is not None:
            old.valid_until = fact.created_at
            old.superseded_by = fact
            old.save(update_fields=["valid_until", "superseded_by"])
            fact.derived_from.add(old)
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
        _queue_embedding([fact.pk])
    return WriteResult(fact=fact, created=True, archived=archived)


def fact_bulk_create(*, actor: Actor, items: list[dict[str, Any]]) -> list[WriteResult]:
    """Store many facts in one transaction. Every item is validated first: one bad item
    rejects the batch (its index named) and nothing is written."""
    config = memory_config_get()
    cleaned: list[FactInput] = []
    for index, data in enumerate(items):
        try:
            cleaned.append(fact_input_clean(data=data, config=config))
        except InvalidInput as exc:
            raise InvalidInput(f"Item {index}: {exc.message}") from None
        if cleaned[-1].supersedes:
            raise InvalidInput(f"Item {index}: supersedes is only accepted one fact at a time.")
    results: list[WriteResult] = []
    with transaction.atomic():
        scopes = {}
        new_facts: list[Fact] = []
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
            new_facts.append(_fact_from_input(actor=actor, item=item, scope=scopes[key]))
        # Collapse exact repeats inside the batch, then merge near-duplicates of stored
        # facts one by one; the rest is inserted in bulk.
        seen: dict[tuple, int] = {}
        filters: dict[tuple, tuple[str, tuple]] = {}
        to_insert: list[Fact] = []
        slots: list[tuple[str, int]] = []
        for item, fact in zip(cleaned, new_facts, strict=True):
            key = (fact.owner_id, fact.team_id, fact.project, _normalised(fact.content))
            if key in seen:
                slots.append(("same", seen[key]))
                continue
            scope_key = (item.team, item.visibility, item.project)
            filter_key = (*scope_key, item.layer)
            if filter_key not in filters:
                filters[filter_key] = same_scope_filter(scope=scopes[scope_key], layer=item.layer)
            existing_id = find_near_duplicate(
                scope=scopes[scope_key], item=item, within=filters[filter_key]
            )
            if existing_id is not None:
                merged = _merge_into(
                    actor=actor,
                    existing=Fact.objects.get(pk=existing_id),
                    item=item,
                    scope=scopes[scope_key],
                )
                results.append(WriteResult(fact=merged, created=False))
                slots.append(("result", len(results) - 1))
                seen[key] = len(slots) - 1
                continue
            seen[key] = len(slots)
            slots.append(("insert", len(to_insert)))
            to_insert.append(fact)
        Fact.objects.bulk_create(to_insert, batch_size=500)
        FACT_FTS.upsert([(f.pk, fts_values(f.content, f.tags)) for f in to_insert], new=True)
        final: list[WriteResult] = []
        for kind, ref in slots:
            if kind == "insert":
                final.append(WriteResult(fact=to_insert[ref], created=True))
            elif kind == "result":
                final.append(results[ref])
            else:
                final.append(WriteResult(fact=final[ref].fact, created=False))
        if to_insert:
            audit_log(
                actor=actor,
                action="fact.bulk_create",
                target_type="fact",
                target_id=to_insert[0].pk,
                details={"count": len(to_insert), "ids": [f.pk for f in to_insert][:100]},
            )
        for owner_id, project in {(f.owner_id, f.project) for f in to_insert}:
            enforce_active_cap(actor=actor, owner_id=owner_id, project=project, config=config)
        _queue_embedding([f.pk for f in to_insert])
    return final


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


@transaction.atomic
def fact_update(*, actor: Actor, fact: Fact, changes: dict[str, Any]) -> Fact:
    """Change a fact; it is re-indexed, and re-embedded when its content changed."""
    _require_editable(actor=actor, fact=fact)
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
    if "sentiment" in values:
        _clean_choice(values["sentiment"] or "", Sentiment, "sentiment")
    for name in ("importance", "confidence"):
        if name in values:
            values[name] = _clean_unit(values[name], name)
    if "tags" in values:
        values["tags"] = _clean_tags(values["tags"])
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
    if "content" in changed:
        fact.embedding_model = ""
        FACT_VECTORS.delete([fact.pk])
    fact.save()
    FACT_FTS.upsert([(fact.pk, fts_values(fact.content, fact.tags))])
    audit_log(
        actor=actor,
        action="fact.update",
        target_type="fact",
        target_id=fact.pk,
        details={"fields": sorted(changed)},
    )
    if "content" in changed:
        _queue_embedding([fact.pk])
    return fact


@transaction.atomic
def fact_delete(*, actor: Actor, fact: Fact) -> None:
    """Delete a fact with its index rows and vector."""
    _require_editable(actor=actor, fact=fact)
    fact_id = fact.pk
    FACT_FTS.delete([fact_id])
    FACT_VECTORS.delete([fact_id])
    audit_log(
        actor=actor,
        action="fact.delete",
        target_type="fact",
        target_id=fact_id,
        details={"content": fact.content[:EXCERPT_LENGTH]},
    )
    fact.delete()


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
    changed or vanished meanwhile are skipped; returns how many were embedded. Embedder
    errors propagate (the task retries; the facts stay as they are)."""
    config = memory_config_get()
    if not config.embeddings_enabled:
        return 0
    embedder = current_embedder(config)
    done = 0
    ids = list(fact_ids)
    for start in range(0, len(ids), EMBED_BATCH):
        chunk = list(
            Fact.objects.filter(pk__in=ids[start : start + EMBED_BATCH]).values_list(
                "pk", "content"
            )
        )
        if not chunk:
            continue
        vectors = embedder.embed([content for _, content in chunk])
        FACT_VECTORS.ensure_dim(embedder.dim)
        with transaction.atomic():
            # Only facts whose content is still what was embedded get the vector.
            current = dict(
                Fact.objects.filter(pk__in=[pk for pk, _ in chunk]).values_list("pk", "content")
            )
            fresh = [
                (pk, vec)
                for (pk, content), vec in zip(chunk, vectors, strict=True)
                if current.get(pk) == content
            ]
            FACT_VECTORS.upsert(fresh, model=embedder.model_id)
            Fact.objects.filter(pk__in=[pk for pk, _ in fresh]).update(
                embedding_model=embedder.model_id
            )
        done += len(fresh)
    return done


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
    """Count one more access of these facts."""
    if fact_ids:
        Fact.objects.filter(pk__in=list(fact_ids)).update(
            access_count=F("access_count") + 1, last_accessed_at=timezone.now()
        )
