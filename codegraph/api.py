"""The CodeGraph JSON API: scan folders, list and delete projects, query symbols,
callers, imports and stats. Every read goes through the access rule."""

from typing import Any

from django.http import HttpRequest
from ninja import Router, Status

from codegraph import selectors, services
from codegraph.schemas import (
    CallersOut,
    ImportsOut,
    ProjectOut,
    QueryOut,
    ScanIn,
    ScanOut,
    StatsOut,
)
from teams.auth import read_auth, write_auth
from teams.services import Actor

router = Router(tags=["codegraph"])


@router.post("/scan", response={202: ScanOut}, auth=write_auth)
def scan(request: HttpRequest, payload: ScanIn) -> Status:
    """Create the project (or point your existing one of that name at the folder) and
    queue its scan. Poll ``GET /projects/{id}`` for progress."""
    project = services.code_project_scan_request(
        actor=Actor.from_request(request),
        name=payload.name,
        path=payload.path,
        team=payload.team,
        visibility=payload.visibility,
        project=payload.project or "",
        exclude=payload.exclude,
    )
    return Status(202, {"id": project.pk, "name": project.name, "state": project.state})


@router.get("/projects", response=list[ProjectOut], auth=read_auth)
def list_projects(request: HttpRequest) -> list[dict[str, Any]]:
    """Visible code projects with their scan state and counts."""
    return [
        selectors.code_project_as_dict(p)
        for p in selectors.code_project_list_visible(user=request.user)
    ]


@router.get("/projects/{project_id}", response=ProjectOut, auth=read_auth)
def get_project(request: HttpRequest, project_id: int) -> dict[str, Any]:
    """One project: scan state, progress and counts."""
    project = selectors.code_project_get_visible(user=request.user, project_id=project_id)
    return selectors.code_project_as_dict(project)


@router.post("/projects/{project_id}/scan", response={202: ScanOut}, auth=write_auth)
def rescan_project(request: HttpRequest, project_id: int) -> Status:
    """Queue a rescan (incremental: only changed files are parsed again)."""
    project = selectors.code_project_get_visible(user=request.user, project_id=project_id)
    project = services.code_project_rescan(actor=Actor.from_request(request), code_project=project)
    return Status(202, {"id": project.pk, "name": project.name, "state": project.state})


@router.delete("/projects/{project_id}", response={204: None}, auth=write_auth)
def delete_project(request: HttpRequest, project_id: int) -> Status:
    """Delete a project and its index (owner or team admin)."""
    project = selectors.code_project_get_visible(user=request.user, project_id=project_id)
    services.code_project_delete(actor=Actor.from_request(request), code_project=project)
    return Status(204, None)


@router.get("/query", response=QueryOut, auth=read_auth)
def query(
    request: HttpRequest,
    q: str,
    project: str | None = None,
    kind: str | None = None,
    mode: str = "fuzzy",
    limit: int = 20,
) -> dict[str, Any]:
    """Symbols by name: ``mode`` exact, prefix or fuzzy (ranked words, then substring)."""
    hits = selectors.symbol_find(
        user=request.user, query=q, project=project, kind=kind, mode=mode, limit=limit
    )
    items = [
        {
            "kind": h.kind,
            "name": h.name,
            "qualified_name": h.qualified_name,
            "file": h.path,
            "line": h.line,
            "end_line": h.end_line,
            "signature": h.signature,
            "project": h.project,
            "text": h.as_line(),
        }
        for h in hits
    ]
    return {"items": items, "count": len(items)}


@router.get("/callers", response=CallersOut, auth=read_auth)
def callers(
    request: HttpRequest, symbol: str, project: str | None = None, limit: int = 200
) -> dict[str, Any]:
    """Call sites of a symbol (dotted like ``django.contrib.auth.login`` or bare),
    resolved through imports and aliases."""
    result = selectors.symbol_callers(
        user=request.user, symbol=symbol, project=project, limit=limit
    )
    items = [
        {
            "file": c.path,
            "line": c.line,
            "caller": c.caller,
            "receiver": c.receiver,
            "callee": c.callee,
            "project": c.project,
            "text": c.as_line(),
        }
        for c in result.calls
    ]
    return {"symbol": result.symbol, "targets": result.targets, "items": items, "count": len(items)}


def _import_dict(hit: selectors.ImportHit) -> dict[str, Any]:
    return {
        "file": hit.path,
        "line": hit.line,
        "module": hit.module,
        "name": hit.name,
        "alias": hit.alias,
        "target": hit.target_path,
        "text": hit.as_line(),
    }


@router.get("/imports", response=ImportsOut, auth=read_auth)
def imports(request: HttpRequest, file: str, project: str | None = None) -> dict[str, Any]:
    """A file's imports (resolved to project files where possible) and its importers."""
    result = selectors.file_imports(user=request.user, file=file, project=project)
    return {
        "file": result.file.path,
        "project": result.project,
        "language": result.file.language,
        "imports": [_import_dict(h) for h in result.imports],
        "importers": [_import_dict(h) for h in result.importers],
    }


@router.get("/stats", response=list[StatsOut], auth=read_auth)
def stats(request: HttpRequest, project: str | None = None) -> list[dict[str, Any]]:
    """Per project: files, symbols, imports and calls, and per-language counts."""
    return selectors.code_project_stats(user=request.user, project=project)
