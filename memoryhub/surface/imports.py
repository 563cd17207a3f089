"""Importing memories: a MemoryHub export (the personal data export, of this format
version or an older one, or the bulk fact export of ``GET /api/memories/export``), a
Mem0 memory dump (what its ``get_all`` returns: a list of memories, or
``{"results": [...]}``) or Auxiora's ``memories.json`` (a list of memories with content,
category, provenance and partition, or ``{"memories": [...]}``), told apart by shape,
read, checked whole, and written into the importer's memory by
the fact store (``facts.services.importing.facts_import``: idempotent, one transaction).

Only facts are imported; the rest of a personal export (pages, tokens, the audit trail)
describes the instance it came from. Of a bulk export, only the facts of the person who
made it are theirs to import; the others' are counted as ``not_yours``.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from facts.models import Category, Origin, Source, fact_key
from facts.services.importing import FactImport, facts_import, facts_import_clean
from memoryhub.engine.cleaning import MAX_TAG_LENGTH, MAX_TAGS
from memoryhub.engine.errors import InvalidInput, TooLarge
from memoryhub.engine.jobs import job_create
from memoryhub.engine.models import Job
from memoryhub.engine.unicode import require_storable_text
from memoryhub.surface.export import FORMAT, FORMAT_VERSION, ExportFact
from teams.services import Actor

# The bulk fact export (``GET /api/memories/export``) and the versions of it read here.
BULK_FORMAT = "memoryhub.facts"
BULK_VERSION = 1
# Validation errors named in an answer, at most.
ERRORS_SHOWN = 10
# The largest access count kept (a positive integer column everywhere).
MAX_COUNT = 2**31 - 1


# --- Reading --------------------------------------------------------------------------------


def import_max_bytes() -> int:
    return settings.MEMORYHUB_IMPORT_MAX_BYTES


def document_too_large(size: int) -> TooLarge:
    """The refusal of a document of ``size`` bytes, past the import limit."""
    limit = import_max_bytes()
    return TooLarge(
        f"The file is {size:,} bytes; at most {limit:,} are imported at once "
        "(MEMORYHUB_IMPORT_MAX_BYTES). Split it, or raise the limit.",
        extra={"limit": limit},
    )


def document_parse(raw: bytes) -> Any:
    """The JSON value of an uploaded document, refused with a message that says what is
    wrong when it is too large, not UTF-8, not JSON or holds text that cannot be stored."""
    if len(raw) > import_max_bytes():
        raise document_too_large(len(raw))
    if not raw.strip():
        raise InvalidInput("The document is empty: send an export or a Mem0 dump as JSON.")
    try:
        document = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"The document is not UTF-8 text ({exc.reason}).") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"The document is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from None
    except RecursionError:
        raise InvalidInput("The document is nested too deeply to be an export.") from None
    try:
        require_storable_text(document)
    except RecursionError:
        raise InvalidInput("The document is nested too deeply to be an export.") from None
    return document


def document_read_file(path: Path) -> Any:
    """The JSON value of a document file (its size checked before it is read)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InvalidInput(f"Cannot read {path}: {exc.strerror}.") from None
    if size > import_max_bytes():
        raise document_too_large(size)
    return document_parse(path.read_bytes())


# --- What a document holds ------------------------------------------------------------------


class Mem0Memory(BaseModel):
    """One memory as Mem0's ``get_all`` returns it."""

    model_config = ConfigDict(extra="ignore")

    id: str | int
    memory: str
    hash: str | None = None
    metadata: dict[str, Any] | None = None
    categories: list[str] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None


class AuxioraProvenance(BaseModel):
    """Where an Auxiora memory came from (its ``MemoryProvenance``)."""

    model_config = ConfigDict(extra="ignore")

    origin: Literal["user_stated", "extracted", "inferred", "merged"] | None = None
    sessionId: str | None = None  # Auxiora's field names, as written
    createdBy: str | None = None
    sourceExcerpt: str | None = None
    extractionConfidence: float | None = Field(None, ge=0, le=1)
    derivedFrom: list[str | int] = []


class AuxioraMemory(BaseModel):
    """One memory of Auxiora's ``memories.json``."""

    model_config = ConfigDict(extra="ignore")

    id: str | int
    content: str
    category: Literal["preference", "fact", "context", "relationship", "pattern", "personality"]
    source: Literal["extracted", "explicit", "observed"] | None = None
    importance: float | None = Field(None, ge=0, le=1)
    confidence: float | None = Field(None, ge=0, le=1)
    sentiment: Literal["positive", "negative", "neutral"] | None = None
    tags: list[str] = []
    accessCount: int = Field(0, ge=0)
    createdAt: datetime | None = None
    updatedAt: datetime | None = None
    provenance: AuxioraProvenance | None = None
    partitionId: str = "global"


_FACTS = TypeAdapter(list[ExportFact])
_MEM0 = TypeAdapter(list[Mem0Memory])
_AUXIORA = TypeAdapter(list[AuxioraMemory])


@dataclass
class ImportPlan:
    """What a document will write: its facts, read and checked, and what it is."""

    source: str
    items: list[FactImport]
    not_yours: int = 0
    author: str | None = None  # the person whose export it is, as the file names them


def _validated(adapter: TypeAdapter, rows: Any, what: str) -> list:
    try:
        return adapter.validate_python(rows)
    except ValidationError as exc:
        errors = [
            {
                "field": what
                + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]),
                "message": e["msg"],
            }
            for e in exc.errors(include_url=False, include_input=False)[:ERRORS_SHOWN]
        ]
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:3])
        count = exc.error_count()
        raise InvalidInput(
            f"The document is not a valid export ({count} error{'s' if count != 1 else ''}): "
            f"{summary}.",
            extra={"errors": errors},
        ) from None


def _version(document: dict[str, Any], field: str, newest: int) -> int:
    version = document.get(field)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidInput(f"{field} must be a whole number from 1, not {version!r}.")
    if version > newest:
        readable = f"versions 1 to {newest}" if newest > 1 else "version 1"
        raise InvalidInput(
            f"This export is format version {version}; this server reads {readable}. "
            "Upgrade MemoryHub to import it.",
            extra={"format_version": version, "newest": newest},
        )
    return version


def _aware(value: datetime | None) -> datetime | None:
    """A time of the document in UTC (one without a zone taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"The time {value.isoformat()} is out of range.") from None


def _from_export(fact: ExportFact) -> FactImport:
    provenance = fact.provenance
    return FactImport(
        ref=fact.id,
        data={
            "content": fact.content,
            "category": fact.category,
            "source": fact.source,
            "importance": fact.importance,
            "confidence": fact.confidence,
            "sentiment": fact.sentiment,
            "tags": fact.tags,
            "visibility": fact.visibility,
            "team": fact.team,
            "project": fact.project,
            "session_id": provenance.session_id,
            "occurred_at": fact.occurred_at,
            "speaker": fact.speaker,
            "origin": provenance.origin,
            "source_excerpt": provenance.source_excerpt,
            "extraction_confidence": provenance.extraction_confidence,
            "tier": fact.tier,
            "fleet": fact.fleet,
            "skill": fact.skill,
            "resolution_ref": fact.resolution_ref,
            "fingerprint": fact.fingerprint,
            "agent": fact.agent,
            "layer": fact.layer,
            "import_key": fact.import_key
            or fact_key(created_at=_aware(fact.created_at), content=fact.content),
        },
        status=fact.status,
        distilled=fact.distilled,
        created_at=_aware(fact.created_at),
        updated_at=_aware(fact.updated_at),
        valid_from=_aware(fact.valid_from),
        valid_until=_aware(fact.valid_until),
        access_count=min(max(0, fact.access_count), MAX_COUNT),
        last_accessed_at=_aware(fact.last_accessed_at),
        derived_from=list(provenance.derived_from),
        superseded_by=fact.superseded_by,
    )


# Mem0's default categories that name one of ours.
MEM0_CATEGORIES = {"user_preferences": Category.PREFERENCE, "preferences": Category.PREFERENCE}


def _from_mem0(memory: Mem0Memory) -> FactImport:
    tags = [c.strip()[:MAX_TAG_LENGTH] for c in memory.categories or [] if c.strip()][:MAX_TAGS]
    category = next(
        (MEM0_CATEGORIES[c] for c in memory.categories or [] if c in MEM0_CATEGORIES),
        Category.FACT,
    )
    created = _aware(memory.created_at)
    return FactImport(
        ref=None,
        data={
            "content": memory.memory,
            "category": category,
            "source": Source.EXTRACTED,
            "origin": Origin.EXTRACTED,
            "tags": tags,
            "session_id": (memory.run_id or "")[:200],
            "import_key": f"mem0:{memory.id}"[:100],
        },
        created_at=created,
        updated_at=_aware(memory.updated_at) or created,
    )


# Auxiora's partitions by the visibility they map to: "global" is Auxiora's default for
# every memory, so it is read as the importer's default visibility (a person's memories
# are not published by an import); a private partition stays private; a shared one is
# the importer's team of that name (private when they are in none).
AUXIORA_GLOBAL = "global"
AUXIORA_PRIVATE = ("private", "user:", "private:")


def _auxiora_scope(partition: str) -> dict[str, Any]:
    if partition == AUXIORA_GLOBAL:
        return {}
    if partition.startswith(AUXIORA_PRIVATE):
        return {"visibility": "private"}
    return {"visibility": "team", "team": partition.removeprefix("shared:")[:150]}


def _from_auxiora(memories: list[AuxioraMemory]) -> list[FactImport]:
    ref_of = {str(m.id): index for index, m in enumerate(memories)}
    items = []
    for index, memory in enumerate(memories):
        provenance = memory.provenance or AuxioraProvenance()
        created = _aware(memory.createdAt)
        data: dict[str, Any] = {
            "content": memory.content,
            "category": memory.category,
            "tags": [t.strip()[:MAX_TAG_LENGTH] for t in memory.tags if t.strip()][:MAX_TAGS],
            "session_id": (provenance.sessionId or "")[:200],
            "agent": (provenance.createdBy or "")[:100],
            "import_key": f"auxiora:{memory.id}"[:100],
            **_auxiora_scope(memory.partitionId),
        }
        optional = {
            "source": memory.source,
            "importance": memory.importance,
            "confidence": memory.confidence,
            "sentiment": memory.sentiment,
            "origin": provenance.origin,
            "source_excerpt": provenance.sourceExcerpt,
            "extraction_confidence": provenance.extractionConfidence,
        }
        data.update({k: v for k, v in optional.items() if v is not None})
        items.append(
            FactImport(
                ref=index,
                data=data,
                created_at=created,
                updated_at=_aware(memory.updatedAt) or created,
                access_count=min(memory.accessCount, MAX_COUNT),
                derived_from=[ref_of[str(p)] for p in provenance.derivedFrom if str(p) in ref_of],
            )
        )
    return items


def _is_auxiora(rows: Any) -> bool:
    """A list of Auxiora memories: entries with content and a category, and no Mem0
    ``memory`` text."""
    first = rows[0] if isinstance(rows, list) and rows else None
    return isinstance(first, dict) and "content" in first and "memory" not in first


def _owner_name(document: dict[str, Any]) -> str | None:
    user = document.get("user")
    if isinstance(user, dict):
        user = user.get("username")
    return user if isinstance(user, str) else None


def import_plan(document: Any) -> ImportPlan:
    """Read a document into the facts it will write; a document of a kind not known,
    of a newer format version, or with any invalid fact is refused whole."""
    if isinstance(document, list) and _is_auxiora(document):
        return ImportPlan(
            source="auxiora", items=_from_auxiora(_validated(_AUXIORA, document, "memories"))
        )
    if isinstance(document, list):
        return ImportPlan(
            source="mem0", items=[_from_mem0(m) for m in _validated(_MEM0, document, "")]
        )
    if not isinstance(document, dict):
        raise InvalidInput(
            "Send a MemoryHub export (a JSON object), a Mem0 dump or Auxiora's memories.json."
        )
    if document.get("format") is None and isinstance(document.get("memories"), list):
        memories = _validated(_AUXIORA, document["memories"], "memories")
        return ImportPlan(source="auxiora", items=_from_auxiora(memories))
    kind = document.get("format")
    if kind is None and "results" in document:
        memories = _validated(_MEM0, document["results"], "results")
        return ImportPlan(source="mem0", items=[_from_mem0(m) for m in memories])
    if kind == FORMAT:
        version = _version(document, "format_version", FORMAT_VERSION)
        source = f"{FORMAT} v{version}"
    elif kind == BULK_FORMAT:
        version = _version(document, "version", BULK_VERSION)
        source = f"{BULK_FORMAT} v{version}"
    else:
        raise InvalidInput(
            f"Not a MemoryHub export (format '{FORMAT}' or '{BULK_FORMAT}') nor a Mem0 dump "
            '(a list of memories, or {"results": [...]}).'
        )
    if not isinstance(document.get("facts"), list):
        raise InvalidInput("The export has no list of facts.")
    facts = _validated(_FACTS, document["facts"], "facts")
    owner = _owner_name(document)
    mine = [f for f in facts if owner is None or f.owner == owner]
    return ImportPlan(
        source=source,
        items=[_from_export(f) for f in mine],
        not_yours=len(facts) - len(mine),
        author=owner,
    )


# --- Importing ------------------------------------------------------------------------------


def memories_import(*, actor: Actor, document: Any, progress: Any = None) -> dict[str, Any]:
    """Import a document into the actor's memory, now: the counts of what it did."""
    plan = import_plan(document)
    result = facts_import(
        actor=actor, items=plan.items, source=plan.source, author=plan.author, progress=progress
    )
    return {**result, "not_yours": plan.not_yours, "format": plan.source}


def _facts_only(document: Any) -> Any:
    """What a job needs of a document: its facts and what says whose they are."""
    if isinstance(document, dict):
        kept = ("format", "format_version", "version", "user", "facts", "results", "memories")
        return {k: v for k, v in document.items() if k in kept}
    return document


def memories_import_request(*, actor: Actor, document: Any) -> dict[str, Any] | Job:
    """Import a document: checked whole now, written now when it is small, else by a
    job (queued once this commits) that writes it all or nothing."""
    plan = import_plan(document)
    facts_import_clean(items=plan.items)
    if len(plan.items) <= settings.MEMORYHUB_IMPORT_INLINE_FACTS:
        result = facts_import(actor=actor, items=plan.items, source=plan.source, author=plan.author)
        return {**result, "not_yours": plan.not_yours, "format": plan.source}
    from memoryhub.surface.tasks import memories_import as memories_import_task

    with transaction.atomic():
        job = job_create(
            owner=actor.user,
            kind="import",
            task=memories_import_task,
            arguments={
                "document": _facts_only(document),
                "facts": len(plan.items),
                "format": plan.source,
                "token": actor.token.pk if actor.token else None,
            },
        )
    return job
