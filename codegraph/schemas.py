"""Ninja request and response shapes of the CodeGraph API."""

from datetime import datetime

from ninja import Field, Schema


class ScanIn(Schema):
    name: str = Field(..., description="Project name (unique among your projects)")
    path: str = Field(
        ...,
        description="Absolute folder path on the server, inside an "
        "allowed root (CODEGRAPH_ALLOWED_ROOTS)",
    )
    project: str | None = Field(None, description="Project scope key; '' = personal")
    visibility: str | None = Field(None, description="private, team or global; default: yours")
    team: str | int | None = Field(None, description="Team name or id; default: your active team")
    exclude: list[str] | None = Field(
        None,
        description="More folder names to skip (besides "
        "node_modules, build, dist, vendor, hidden ...)",
    )


class ScanOut(Schema):
    id: int
    name: str
    state: str


class LanguageCount(Schema):
    language: str
    files: int
    symbols: int


class ProjectOut(Schema):
    id: int
    name: str
    root_path: str
    owner: str
    visibility: str
    team: str | None
    project: str
    state: str
    files_total: int
    files_done: int
    progress: int
    started_at: datetime | None
    finished_at: datetime | None
    error: str
    warning: str
    files: int
    skipped: int
    symbols: int
    imports: int
    calls: int
    languages: list[LanguageCount]


class SymbolOut(Schema):
    kind: str
    name: str
    qualified_name: str
    file: str
    line: int
    end_line: int
    signature: str
    project: str
    text: str


class QueryOut(Schema):
    items: list[SymbolOut]
    count: int


class CallOut(Schema):
    file: str
    line: int
    caller: str
    receiver: str
    callee: str
    project: str
    text: str


class CallersOut(Schema):
    symbol: str
    targets: list[str]
    items: list[CallOut]
    count: int


class ImportOut(Schema):
    file: str
    line: int
    module: str
    name: str
    alias: str
    target: str
    text: str


class ImportsOut(Schema):
    file: str
    project: str
    language: str
    imports: list[ImportOut]
    importers: list[ImportOut]


class StatsOut(Schema):
    project_id: int
    project: str
    state: str
    files: int
    skipped: int
    symbols: int
    imports: int
    calls: int
    languages: list[LanguageCount]
