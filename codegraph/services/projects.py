"""Registering a folder as a code project, who may index what, queueing, rescanning and
deleting a project."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

from codegraph.models import CallRef, CodeProject, ImportRef, ScanState, SourceFile, Symbol
from codegraph.search import SYMBOL_FTS
from memoryhub.engine.cleaning import clean_name
from memoryhub.engine.errors import Conflict, Forbidden, InvalidInput
from memoryhub.engine.locking import row_for_update
from teams.models import Membership, Visibility
from teams.services import Actor, audit_log, scope_for_new_row

# --- Validation ------------------------------------------------------------------------------


def _allowed_roots() -> list[Path]:
    return [Path(root).expanduser().resolve() for root in settings.CODEGRAPH_ALLOWED_ROOTS]


def code_root_validate(*, path: str) -> Path:
    """The resolved folder ``path`` names, or InvalidInput saying why it cannot be scanned.

    The allowed roots are checked first, on the resolved path, and every path outside
    them gets the same answer, so the server's files cannot be probed through this
    check. Inside a root, a missing folder or a file is named as such."""
    raw = (path or "").strip()
    if not raw:
        raise InvalidInput("A folder path is required.")
    outside = InvalidInput(
        f"The path '{raw}' is outside the folders CodeGraph may read; an administrator "
        "sets them in CODEGRAPH_ALLOWED_ROOTS."
    )
    try:
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            raise InvalidInput(f"The path '{raw}' must be absolute.")
        # Resolve symlinks before the root check, so a link cannot point outside a root.
        resolved = candidate.resolve()
    except (OSError, RuntimeError, ValueError):  # unreadable, a loop, a NUL byte
        raise outside from None
    if not any(resolved == root or resolved.is_relative_to(root) for root in _allowed_roots()):
        raise outside
    if not resolved.exists():
        raise InvalidInput(f"The path '{raw}' does not exist.")
    if not resolved.is_dir():
        raise InvalidInput(f"The path '{raw}' is a file, not a folder.")
    return resolved


def _readers_may_read(*, readers_of: CodeProject, other: CodeProject) -> bool:
    """Everyone who can read ``readers_of`` can read ``other`` too."""
    if other.visibility == Visibility.GLOBAL:
        return True
    if other.visibility == Visibility.TEAM:
        if readers_of.visibility == Visibility.TEAM:
            return readers_of.team_id == other.team_id
        return (
            readers_of.visibility == Visibility.PRIVATE
            and other.team_id is not None
            and Membership.objects.filter(
                user_id=readers_of.owner_id, team_id=other.team_id
            ).exists()
        )
    return readers_of.visibility == Visibility.PRIVATE and readers_of.owner_id == other.owner_id


def code_root_access_check(*, code_project: CodeProject) -> None:
    """Refuse (Forbidden) to index a folder for more people than may read the code
    already indexed there. A project registered earlier whose folder is the same as this
    one's, inside it or above it, holds some of the same files; this project may only
    show them to people who can read that project, unless its owner may let more people
    read that project anyway (``is_widenable_by``: its owner, or staff who may edit it;
    a team admin may not). Later projects never restrict
    earlier ones: what an earlier project showed, it had shown before them."""
    root = Path(code_project.root_path)
    overlapping = CodeProject.objects.filter(
        models.Q(root_path__in=[str(root), *map(str, root.parents)])
        | models.Q(root_path__startswith=f"{str(root).rstrip('/')}/")
    )
    if code_project.pk is not None:
        overlapping = overlapping.filter(pk__lt=code_project.pk)
    owner = code_project.owner
    for other in overlapping:
        if _readers_may_read(readers_of=code_project, other=other):
            continue
        if other.is_widenable_by(owner):
            continue
        raise Forbidden(
            f"The folder '{code_project.root_path}' holds code that another project shares "
            "with fewer people than this one would; choose a narrower visibility, or ask "
            "the owner of that project to share it."
        )


def _clean_exclude(names: list[str]) -> list[str]:
    cleaned = sorted({name.strip() for name in names if name and name.strip()})
    for name in cleaned:
        if "/" in name or "\\" in name or name in (".", ".."):
            raise InvalidInput(f"Exclude folders by name, not by path: '{name}'.")
    return cleaned


def _clean_name(name: str) -> str:
    return clean_name(name, owner="A code project", max_length=200)


# --- Projects ---------------------------------------------------------------------------------


def code_project_register(
    *,
    actor: Actor,
    name: str,
    path: str,
    team: str | int | None = None,
    visibility: str | None = None,
    project: str = "",
    exclude: list[str] | None = None,
) -> CodeProject:
    """Create the actor's code project ``name`` for folder ``path``, or point the existing
    one at it; marks it queued. ``exclude`` (folder names to skip besides the built-in
    ones) replaces the project's list when given. Nothing is written when the input is
    invalid."""
    name = _clean_name(name)
    root = code_root_validate(path=path)
    project_settings = {} if exclude is None else {"exclude": _clean_exclude(exclude)}
    with transaction.atomic():
        # Locked: a project deleted meanwhile must not come back through this save().
        existing = (
            CodeProject.objects.select_for_update(of=("self",))
            .filter(owner=actor.user, name=name)
            .first()
        )
        if existing is None:
            scope = scope_for_new_row(
                user=actor.user, team=team, visibility=visibility, project=project
            )
            code_project = CodeProject(
                name=name,
                root_path=str(root),
                state=ScanState.QUEUED,
                heartbeat_at=timezone.now(),
                scan_attempts=0,
                settings=project_settings,
                **scope,
            )
            code_root_access_check(code_project=code_project)
            code_project.save(force_insert=True)
            audit_log(
                actor=actor,
                action="codegraph.project.create",
                target_type="codeproject",
                target_id=code_project.pk,
                details={"name": name, "path": str(root)},
            )
            return code_project
        if existing.is_scanning:
            raise Conflict(f"A scan of '{name}' is running; try again when it is done.")
        if str(root) != existing.root_path:
            audit_log(
                actor=actor,
                action="codegraph.project.move",
                target_type="codeproject",
                target_id=existing.pk,
                details={"from": existing.root_path, "to": str(root)},
            )
            existing.root_path = str(root)
        if visibility or team not in (None, "") or project:
            scope = scope_for_new_row(
                user=actor.user,
                team=team,
                visibility=visibility,
                project=project or existing.project,
            )
            existing.team, existing.visibility = scope["team"], scope["visibility"]
            existing.project = scope["project"]
        if exclude is not None:
            existing.settings = {**(existing.settings or {}), **project_settings}
        code_root_access_check(code_project=existing)
        existing.state = ScanState.QUEUED
        existing.heartbeat_at = timezone.now()
        existing.scan_attempts = 0
        existing.error = ""
        existing.save()
        return existing


def code_project_scan_request(
    *,
    actor: Actor,
    name: str,
    path: str,
    team: str | int | None = None,
    visibility: str | None = None,
    project: str = "",
    exclude: list[str] | None = None,
) -> CodeProject:
    """Register (or re-point) the project and queue its scan once this commits."""

    with transaction.atomic():
        code_project = code_project_register(
            actor=actor,
            name=name,
            path=path,
            team=team,
            visibility=visibility,
            project=project,
            exclude=exclude,
        )
        _scan_queue(actor=actor, code_project=code_project)
    return code_project


def _scan_queue(*, actor: Actor, code_project: CodeProject) -> None:
    """Audit a scan request and queue the scan once the transaction commits."""
    from codegraph.tasks import codegraph_scan
    from memoryhub.engine.tasks import enqueue_on_commit

    audit_log(
        actor=actor,
        action="codegraph.scan",
        target_type="codeproject",
        target_id=code_project.pk,
        details={"name": code_project.name},
    )
    enqueue_on_commit(codegraph_scan, code_project.pk)


def code_project_rescan(*, actor: Actor, code_project: CodeProject) -> CodeProject:
    """Queue a new scan of an existing project (its owner or a team admin only)."""
    with transaction.atomic():
        locked = row_for_update(code_project, missing="This project was deleted meanwhile.")
        if not locked.is_editable_by(actor.user):
            raise Forbidden("Only the project's owner or a team admin can scan it.")
        if locked.is_scanning:
            return locked
        locked.state = ScanState.QUEUED
        locked.heartbeat_at = timezone.now()
        locked.scan_attempts = 0
        locked.error = ""
        locked.save(update_fields=["state", "heartbeat_at", "scan_attempts", "error"])
        _scan_queue(actor=actor, code_project=locked)
    return locked


def code_project_delete(*, actor: Actor, code_project: CodeProject) -> None:
    """Delete a project and its whole index (rows and FTS entries); audited. The
    project is locked first: a running scan adds no file to it while it goes (the scan
    finds it gone and stops), and a project deleted meanwhile is not found."""
    with transaction.atomic():
        code_project = row_for_update(code_project, missing="This project was deleted meanwhile.")
        if not code_project.is_editable_by(actor.user):
            raise Forbidden("Only the project's owner or a team admin can delete it.")
        _index_clear(code_project.pk)
        audit_log(
            actor=actor,
            action="codegraph.project.delete",
            target_type="codeproject",
            target_id=code_project.pk,
            details={"name": code_project.name, "path": code_project.root_path},
        )
        code_project.delete()


def _index_clear(project_id: int) -> None:
    symbol_ids = list(Symbol.objects.filter(project_id=project_id).values_list("id", flat=True))
    SYMBOL_FTS.delete(symbol_ids)
    # One plain DELETE per table, children first. Django's cascade would load every
    # file to look for rows referring to it, and all of those are going too (imports
    # only ever point at files of their own project).
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in (Symbol, CallRef, ImportRef, SourceFile):
            meta = model._meta
            cursor.execute(
                f"DELETE FROM {quote(meta.db_table)} "
                f"WHERE {quote(meta.get_field('project').column)} = %s",
                [project_id],
            )
