"""Importing an exported document into a person's memory: every fact checked first, then
written in one transaction; idempotent through each fact's import key."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Case, Value, When
from django.utils import timezone

from facts.dedupe import DuplicateFinder, fact_keys_refresh
from facts.models import Fact, Origin, Status, fact_key
from facts.services.cleaning import FactInput, clean_choice, fact_input_clean
from facts.services.create import (
    FactRows,
    fact_statistics_follow,
    fact_values,
    keys_ensure_current,
    merges_apply,
    signature_of,
)
from facts.services.embedding import queue_embedding
from facts.services.retention import enforce_active_cap
from facts.sessions import facts_index_written
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.db.bulk import insert_rows, update_rows
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.locking import writes_serialise
from memoryhub.engine.models import MemoryConfig
from teams.models import Visibility
from teams.services import Actor, audit_log, resolve_team, scope_for_new_row

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
            clean_choice(item.status, Status, "status")
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
    author: str | None = None,
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
    one; visibility is never widened.

    An import never gives a reader a second copy of a statement: a fact the actor can
    already read from someone else (the same content, active, global or of a team) is
    skipped and counted as ``already_readable``. A document of another ``author`` (the
    person the export names, when it is not the actor) writes its facts with origin
    ``imported`` and, when that person has an account here, ``created_by`` them."""
    config = memory_config_get()
    cleaned = facts_import_clean(items=items, config=config)
    now = timezone.now()
    fact_statistics_follow()
    with transaction.atomic():
        # Near-duplicates are looked for among this owner's facts: one writer at a time.
        writes_serialise("facts", actor.user.pk)
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
        readable = _readable_from_others(
            user=actor.user, contents={cleaned[i].content for i in fresh}
        )
        already_readable = sum(1 for i in fresh if cleaned[i].content in readable)
        fresh = [i for i in fresh if cleaned[i].content not in readable]
        written_by = _author_of(actor=actor, author=author)
        # Repeats of stored facts merge; looked up before anything is written, so that
        # the document's own facts never merge with one another.
        rebuilt = keys_ensure_current()
        finder = DuplicateFinder(config.dedupe_similarity)
        candidates = [i for i in fresh if cleaned[i].layer == 1 and items[i].is_recallable(now)]
        signatures = {i: signature_of(cleaned[i], scopes[i]) for i in candidates}
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
        rows = FactRows()
        for done, i in enumerate(new, 1):
            item = items[i]
            values = fact_values(actor=actor, item=cleaned[i], scope=scopes[i], now=now)
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
            if written_by is not None:
                values.update(
                    origin=Origin.IMPORTED, created_by_id=written_by, created_by_token_id=None
                )
            rows.add(values)
            if done % IMPORT_PIECE == 0 or done == len(new):
                piece = rows.insert()
                facts_index_written(piece)
                written.extend(piece)
                if progress is not None:
                    progress(len(written), len(new) + len(merge_of))
        for i, fact in zip(new, written, strict=True):
            if items[i].ref is not None:
                ids[items[i].ref] = fact.pk
        stored = Fact.objects.in_bulk(list(set(merge_of.values())))
        merged = merges_apply(
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
                "already_readable": already_readable,
                "made_private": narrowed,
                "links": links,
            },
        )
        for owner_id, project in {(f.owner_id, f.project) for f in written}:
            enforce_active_cap(actor=actor, owner_id=owner_id, project=project, config=config)
        embed = list(dict.fromkeys([*(f.pk for f in written), *merged]))
        for start in range(0, len(embed), 1000):
            queue_embedding(embed[start : start + 1000], config)
    if progress is not None:
        done = max(1, len(written) + len(merge_of))
        progress(done, done)
    return {
        "created": len(written),
        "skipped": skipped,
        "already_readable": already_readable,
        "merged": len(merge_of),
        "made_private": narrowed,
        "links": links,
    }


def _readable_from_others(*, user: Any, contents: set[str]) -> set[str]:
    """Which of ``contents`` ``user`` can already read in someone else's active fact."""
    found: set[str] = set()
    wanted = sorted(contents)
    others = Fact.objects.visible_to(user).exclude(owner_id=user.pk).filter(status=Status.ACTIVE)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        found.update(others.filter(content__in=chunk).values_list("content", flat=True))
    return found


def _author_of(*, actor: Actor, author: str | None) -> int | None:
    """The account of the person a document of someone else's names as its author (the
    importer's when they have none here); None for the actor's own document."""
    if not author or author == actor.user.get_username():
        return None
    User = get_user_model()
    named = User.objects.filter(**{User.USERNAME_FIELD: author}).values_list("pk", flat=True)
    return next(iter(named), actor.user.pk)


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
