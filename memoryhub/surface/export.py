"""The personal data export: everything MemoryHub holds about one person, as one JSON
document, written as it is read.

The apps' selectors give their rows (facts of every layer with provenance, lineage and
history; review proposals; wiki pages and the revisions the person saved; CodeGraph
projects; settings, memberships, agent tokens and the audit events about them); this
module puts them in one document and streams it, a chunk of rows at a time, so the
export of a large memory never sits in memory whole. Only rows the person owns or wrote
are in it: a teammate's team fact is the teammate's data, not theirs.

The document's shape is the pydantic model ``ExportDocument`` below, published as a JSON
Schema at ``GET /api/export/schema``. ``FORMAT_VERSION`` goes up whenever the shape
changes in a way an older reader would misread; the import reads this version and the
older ones.
"""

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any, Literal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field

from codegraph.selectors import code_project_export_owned
from facts.schemas import FactOut
from facts.selectors import fact_export_owned, memory_review_export_rows
from memoryhub.engine.errors import Forbidden, NotFound
from teams.selectors import (
    agent_token_list,
    audit_event_as_dict,
    audit_events_about,
    memberships_of,
)
from teams.services import Actor, audit_log, memory_settings_get
from wiki.selectors import wiki_page_export_owned, wiki_revision_export_written

FORMAT = "memoryhub.personalization"
FORMAT_VERSION = 1
# Rows serialised before a piece of the document is handed to the server.
STREAM_PIECE_BYTES = 64 * 1024


# --- The document ---------------------------------------------------------------------------


class ExportUser(BaseModel):
    username: str
    email: str
    first_name: str
    last_name: str
    is_staff: bool
    is_active: bool
    date_joined: datetime
    last_login: datetime | None


class ExportSettings(BaseModel):
    active_team: str | None = Field(description="Team new rows belong to by default")
    default_visibility: Literal["private", "team", "global"]


class ExportMembership(BaseModel):
    team: str
    role: str
    since: datetime


class ExportToken(BaseModel):
    """An agent token as its owner sees it on the Agents page: never its secret."""

    name: str
    prefix: str = Field(
        description="The first characters of the secret, shown to tell tokens apart"
    )
    fleet: str
    role: str
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class FactHistoryEvent(BaseModel):
    action: str = Field(description="fact.create, fact.update, fact.merge, ...")
    actor: str
    details: dict[str, Any]
    created_at: datetime


class ExportFact(FactOut):
    """A fact with its provenance and lineage (``provenance.derived_from``: the ids, in
    this document, of the facts it was drawn from), as the API shows it, plus the key an
    import recognises it by and its history."""

    model_config = ConfigDict(extra="ignore")

    occurred_at: datetime | None = Field(
        None, description="When it was said or happened (older exports lack it)"
    )

    import_key: str | None = Field(
        None, description="Stays with the fact through exports and imports (older exports lack it)"
    )
    history: list[FactHistoryEvent] = Field(default_factory=list)
    embedded_with: str | None = None


class ExportReview(BaseModel):
    id: int
    state: Literal["pending", "approved", "rejected"]
    content: str
    category: str
    importance: float
    confidence: float
    sentiment: str
    tags: list[str]
    source: str
    origin: str
    source_excerpt: str
    session_id: str
    visibility: str
    team: str | None
    project: str
    supersedes: int | None
    fact: int | None = Field(description="The fact it became, once approved")
    provider: str
    created_at: datetime
    decided_at: datetime | None


class ExportPage(BaseModel):
    id: int
    title: str
    slug: str
    project: str
    kind: str
    status: str = "active"
    abandoned_at: datetime | None = None
    tags: list[str]
    visibility: str
    team: str | None
    content: str
    flagged: bool
    findings: list[dict[str, Any]]
    approved_by: str | None
    approved_at: datetime | None
    created_at: datetime
    updated_at: datetime


class ExportRevision(BaseModel):
    page: int = Field(description="The page's id (of a page of someone else's when not listed)")
    page_title: str
    number: int
    title: str
    content: str
    tags: list[str]
    author: str
    created_at: datetime


class ExportCodeProject(BaseModel):
    id: int
    name: str
    root_path: str
    visibility: str
    team: str | None
    project: str
    settings: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None
    state: str
    files: int
    skipped: int
    symbols: int
    imports: int
    calls: int
    languages: list[dict[str, Any]]


class ExportAuditEvent(BaseModel):
    id: int
    action: str
    actor: str
    target_type: str
    target_id: str
    details: dict[str, Any]
    created_at: datetime


class ExportDocument(BaseModel):
    """Everything MemoryHub holds about one person."""

    model_config = ConfigDict(title="MemoryHub personal data export")

    format: Literal["memoryhub.personalization"]
    format_version: int = Field(ge=1, description="Readers refuse a version newer than theirs")
    exported_at: datetime
    user: ExportUser
    settings: ExportSettings
    memberships: list[ExportMembership]
    agent_tokens: list[ExportToken]
    facts: list[ExportFact]
    reviews: list[ExportReview]
    wiki_pages: list[ExportPage]
    wiki_revisions: list[ExportRevision]
    code_projects: list[ExportCodeProject]
    audit_events: list[ExportAuditEvent]


def export_schema() -> dict[str, Any]:
    """The JSON Schema of the export document."""
    schema = ExportDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"memoryhub.personalization/v{FORMAT_VERSION}"
    return schema


# --- Who is exported ------------------------------------------------------------------------


def export_subject(*, actor: Actor, username: str | None) -> AbstractBaseUser:
    """Whose data an export holds: the actor's own, or, for staff answering a data
    subject's request, the person named."""
    if not username or username == actor.user.get_username():
        return actor.user
    if not actor.user.is_staff:
        raise Forbidden("Only staff can export another person's data.")
    subject = get_user_model().objects.filter(username=username[:150]).first()
    if subject is None:
        raise NotFound(f"No person named '{username[:150]}'.")
    return subject


# --- Writing it -----------------------------------------------------------------------------


def _dates(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _user(user: AbstractBaseUser) -> dict[str, Any]:
    return {
        "username": user.get_username(),
        "email": getattr(user, "email", ""),
        "first_name": getattr(user, "first_name", ""),
        "last_name": getattr(user, "last_name", ""),
        "is_staff": user.is_staff,
        "is_active": user.is_active,
        "date_joined": _dates(user.date_joined),
        "last_login": _dates(user.last_login),
    }


def _settings(user: AbstractBaseUser) -> dict[str, Any]:
    prefs = memory_settings_get(user=user)
    return {
        "active_team": prefs.active_team.name if prefs.active_team_id else None,
        "default_visibility": prefs.default_visibility,
    }


def _memberships(user: AbstractBaseUser) -> list[dict[str, Any]]:
    return [
        {"team": m.team.name, "role": m.role, "since": _dates(m.created_at)}
        for m in memberships_of(user=user)
    ]


def _tokens(user: AbstractBaseUser) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "prefix": t.prefix,
            "fleet": t.fleet,
            "role": t.role,
            "scopes": list(t.scopes),
            "created_at": _dates(t.created_at),
            "last_used_at": _dates(t.last_used_at),
            "revoked_at": _dates(t.revoked_at),
        }
        for t in agent_token_list(user=user)
    ]


def _audit_events(user: AbstractBaseUser) -> Iterator[dict[str, Any]]:
    for event in audit_events_about(user=user).iterator(chunk_size=1000):
        yield audit_event_as_dict(event)


def _sections(user: AbstractBaseUser) -> list[tuple[str, Callable[[], Iterable[dict[str, Any]]]]]:
    """The document's lists, in order, each read only when its turn comes."""
    return [
        ("memberships", lambda: _memberships(user)),
        ("agent_tokens", lambda: _tokens(user)),
        ("facts", lambda: fact_export_owned(user=user)),
        ("reviews", lambda: memory_review_export_rows(user=user)),
        ("wiki_pages", lambda: wiki_page_export_owned(user=user)),
        ("wiki_revisions", lambda: wiki_revision_export_written(user=user)),
        ("code_projects", lambda: code_project_export_owned(user=user)),
        ("audit_events", lambda: _audit_events(user)),
    ]


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def personal_export_stream(*, user: AbstractBaseUser) -> Iterator[str]:
    """The export document of ``user``, piece by piece (about 64 KB each)."""
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "exported_at": timezone.now().isoformat(),
        "user": _user(user),
        "settings": _settings(user),
    }
    buffer: list[str] = [_dump(header)[:-1]]
    size = 0
    for name, rows in _sections(user):
        buffer.append(f', "{name}": [')
        for index, row in enumerate(rows()):
            text = _dump(row)
            buffer.append(",\n" + text if index else "\n" + text)
            size += len(text)
            if size >= STREAM_PIECE_BYTES:
                yield "".join(buffer)
                buffer, size = [], 0
        buffer.append("\n]")
    buffer.append("}\n")
    yield "".join(buffer)


def personal_export(*, actor: Actor, username: str | None = None) -> tuple[Any, Iterator[str]]:
    """Start the export of the actor's data (staff: of the person named): audited now,
    then written as it is read. Returns the person and the document's pieces."""
    subject = export_subject(actor=actor, username=username)
    details = {"subject": subject.get_username()}
    if subject.pk != actor.user.pk:
        details["request"] = "data subject request by staff"
    audit_log(
        actor=actor,
        action="export.personalization",
        target_type="user",
        target_id=subject.pk,
        details=details,
    )
    return subject, personal_export_stream(user=subject)
