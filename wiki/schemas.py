"""Ninja schemas of the wiki API. Content is optional on the way out: an agent gets
``null`` for a flagged page no person has approved."""

from ninja import Field, Schema


class PageIn(Schema):
    title: str = Field(
        ..., description="Upsert key: the same title in the same project updates that page"
    )
    content: str
    tags: list[str] | None = None
    kind: str | None = Field(None, description="note, runbook, adr, pdd, review, triage, ...")
    project: str | None = Field(None, description="Project scope key; '' = organisation page")
    visibility: str | None = Field(None, description="private, team or global; default: yours")
    team: str | int | None = Field(None, description="Team name or id; default: your active team")


class FindingOut(Schema):
    rule: str
    severity: str
    message: str
    start: int
    end: int
    field: str = "content"
    excerpt: str | None = Field(None, description="Omitted for agents")


class PageSummaryOut(Schema):
    id: int
    title: str
    slug: str
    project: str
    kind: str
    status: str = Field(
        "active", description="active, or abandoned: a decision whose topic was forgotten"
    )
    tags: list[str]
    visibility: str
    team: str | None
    fleet: str = Field(
        "", description="The writing agent's fleet; other fleets' agents do not read it"
    )
    owner: str
    flagged: bool
    approved: bool
    approved_by: str | None
    approved_at: str | None
    withheld: bool = Field(..., description="True when the content is withheld from an agent")
    findings: list[FindingOut]
    scanner_version: str
    created_at: str
    updated_at: str


class PageOut(PageSummaryOut):
    content: str | None


class PageListOut(Schema):
    items: list[PageSummaryOut]
    count: int
    next: str | None


class SearchHitOut(PageSummaryOut):
    snippet: str | None = Field(..., description="Matches marked [[ ]]; null when withheld")
    score: float


class SearchOut(Schema):
    items: list[SearchHitOut]
    count: int


class StatsOut(Schema):
    total: int
    by_kind: dict[str, int]
    by_visibility: dict[str, int]
    by_project: dict[str, int]
    flagged: int
    awaiting_review: int
    revisions: int
