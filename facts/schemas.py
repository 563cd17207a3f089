from datetime import datetime
from typing import Any, Literal

from django.db.models import TextChoices
from ninja import Field, Schema

from facts.models import Category, Sentiment, Source, Status, Tier
from teams.models import Visibility


def one_of(choices: type[TextChoices], description: str = "") -> Any:
    """An optional field whose schema lists the values it takes. The services check
    them (a wrong one is a 400 that names the right ones); this documents them."""
    return Field(None, description=description, json_schema_extra={"enum": [*choices.values, None]})


def unit(description: str) -> Any:
    """An optional number from 0 to 1 (checked by the services, documented here)."""
    return Field(None, description=description, json_schema_extra={"minimum": 0, "maximum": 1})


class FactIn(Schema):
    content: str
    category: str | None = one_of(Category)
    source: str | None = one_of(Source)
    importance: float | None = unit("How much the fact matters; default 0.5")
    confidence: float | None = unit("How sure the writer is; default 1")
    sentiment: str | None = one_of(Sentiment)
    tags: list[str] | None = None
    visibility: str | None = one_of(Visibility, "Default: your default visibility")
    team: str | int | None = Field(None, description="Team name or id; default: your active team")
    project: str | None = Field(None, description="Project scope key; '' = personal")
    session_id: str | None = Field(
        None, description="The conversation or task the statement belongs to"
    )
    occurred_at: datetime | None = Field(
        None,
        description="When the statement was made or the event happened (ISO 8601; "
        "default: now). A session's facts are in this order.",
    )
    speaker: str | None = Field(None, description="Who said or wrote it", max_length=200)
    supersedes: int | None = Field(None, description="Id of a fact this one replaces")
    source_excerpt: str | None = None
    tier: str | None = one_of(Tier)
    fleet: str | None = None
    skill: str | None = None
    resolution_ref: str | None = None


class FactBatchIn(Schema):
    items: list[FactIn] = Field(..., max_length=1000)


class FactPatch(Schema):
    content: str | None = None
    category: str | None = one_of(Category)
    importance: float | None = unit("How much the fact matters")
    confidence: float | None = unit("How sure the writer is")
    sentiment: str | None = one_of(Sentiment, "null or '' clears it")
    tags: list[str] | None = None
    visibility: str | None = one_of(Visibility)
    team: str | int | None = None
    project: str | None = None
    status: str | None = one_of(Status)


class ProvenanceOut(Schema):
    origin: str
    session_id: str
    created_by: str | None
    agent: str | None
    source_excerpt: str
    extraction_confidence: float | None
    derived_from: list[int]
    provider: str = Field(
        "",
        description='What wrote a summary or profile: "offline" (built-in rules, no chat '
        "model) or the chat model's id; empty for other facts",
    )


class FactOut(Schema):
    id: int
    content: str
    category: str
    source: str
    layer: int
    distilled: bool
    importance: float
    confidence: float
    sentiment: str
    tags: list[str]
    status: str
    visibility: str
    team: str | None
    project: str
    owner: str
    access_count: int
    last_accessed_at: datetime | None
    valid_from: datetime
    valid_until: datetime | None
    superseded_by: int | None
    tier: str
    fleet: str
    skill: str
    resolution_ref: str
    fingerprint: str = Field("", description="A learning's fingerprint cluster")
    agent: str = Field("", description="The agent that wrote a learning")
    occurred_at: datetime = Field(description="When it was said or happened")
    speaker: str = Field("", description="Who said or wrote it")
    created_at: datetime
    updated_at: datetime
    provenance: ProvenanceOut
    embedded_with: str | None


class FactWriteOut(FactOut):
    outcome: Literal["created", "merged"] = Field(
        description="created: a new fact; merged: folded into this existing fact of the "
        "same visibility and team, which now says what was posted"
    )


class FactListOut(Schema):
    items: list[FactOut]
    count: int
    next: str | None = None


class FactSearchOut(FactListOut):
    mode: Literal["hybrid", "keyword", "exact"] = Field(
        description="hybrid: words and meaning; keyword: words alone (embeddings are "
        "off); exact: every word"
    )


class BatchResultOut(Schema):
    id: int
    created: bool


class BatchOut(Schema):
    items: list[BatchResultOut]
    created: int
    merged: int


class RecallIn(Schema):
    query: str
    project: str | None = None
    max_items: int | None = None
    char_budget: int | None = None


class RecallItemOut(Schema):
    id: int
    content: str
    category: str
    score: float
    bm25_rank: int | None
    vector_rank: int | None
    bm25: float | None = Field(
        description="Keyword score: 1 / the rank among your keyword matches (1: the best)"
    )
    similarity: float | None
    fused: float
    boosts: dict[str, float]
    signals: dict[str, float] = Field(
        default_factory=dict,
        description="Each ranking stage's share of the fused score (bm25, vector, "
        "window, coverage, speaker, time, date, session, informative, question, neighbour, "
        "answer; rrf under "
        "RRF fusion)",
    )
    importance: float
    visibility: str
    project: str
    tags: list[str]


class RoleHitOut(Schema):
    path: str
    snippet: str
    score: float
    ts: str


class RecallOut(Schema):
    block: str
    items: list[RecallItemOut]
    mode: str
    notes: list[str]
    role: str = Field("", description="The token's role, whose preset added role_items")
    role_items: list[RoleHitOut] = Field(default_factory=list)


class LearningIn(Schema):
    skill: str = Field(description="The skill the learning is about")
    content: str
    fleet: str | None = Field(None, description="Default: your token's fleet")
    agent: str | None = Field(None, description="Default: your token's name")
    fingerprint: str | None = Field(None, description="The failure's fingerprint cluster")
    resolution: str | None = Field(None, description="A reference to the fix")
    visibility: str | None = None
    team: str | None = None


class LearningOut(Schema):
    id: int
    skill: str
    content: str
    fleet: str
    agent: str
    fingerprint: str
    resolution: str
    created_at: str


class FingerprintOut(Schema):
    cluster: str
    resolved: bool
    resolutions: list[str]
    learnings: list[LearningOut]


class StatsOut(Schema):
    total: int
    by_category: dict[str, int]
    by_status: dict[str, int]
    by_visibility: dict[str, int]
    by_layer: dict[str, int]


class LayerStatOut(Schema):
    layer: int
    name: str
    total: int
    active: int
    distilled: int
