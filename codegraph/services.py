"""Writes of CodeGraph: registering a folder, scanning it (incrementally), deleting it."""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import posixpath
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import billiard
from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import Count
from django.utils import timezone

from codegraph.extractor import EXTRACTOR_VERSION, extract_rows, language_for, preload
from codegraph.models import CallRef, CodeProject, ImportRef, ScanState, SourceFile, Symbol
from codegraph.search import SYMBOL_FTS, fts_values
from memoryhub.cleaning import clean_name
from memoryhub.db.bulk import insert_rows, update_rows
from memoryhub.errors import ApplicationError, Conflict, Forbidden, InvalidInput
from teams.models import Membership, Visibility
from teams.services import Actor, audit_log, scope_for_new_row

logger = logging.getLogger(__name__)

# Directories never worth indexing: dependencies, build output, caches, VCS data.
SKIP_DIRS = frozenset(
    {
        "node_modules",
        "target",
        ".git",
        "dist",
        "build",
        "__pycache__",
        "vendor",
        "third_party",
    }
)
BATCH_SIZE = 200
BINARY_SNIFF_BYTES = 8192
# Files per piece of a scan: one job of a worker process, one write.
WORKER_CHUNK = 25
JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs")

ProgressCallback = Callable[[int, int], None]


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
    show them to people who can read that project, unless its owner may edit that
    project anyway (and so could change who reads it). Later projects never restrict
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
        if other.is_editable_by(owner):
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
        existing = CodeProject.objects.filter(owner=actor.user, name=name).first()
        if existing is None:
            scope = scope_for_new_row(
                user=actor.user, team=team, visibility=visibility, project=project
            )
            code_project = CodeProject(
                name=name,
                root_path=str(root),
                state=ScanState.QUEUED,
                heartbeat_at=timezone.now(),
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
    from memoryhub.tasks import enqueue_on_commit

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
    if not code_project.is_editable_by(actor.user):
        raise Forbidden("Only the project's owner or a team admin can scan it.")

    with transaction.atomic():
        locked = CodeProject.objects.select_for_update().get(pk=code_project.pk)
        if locked.is_scanning:
            return locked
        locked.state = ScanState.QUEUED
        locked.heartbeat_at = timezone.now()
        locked.error = ""
        locked.save(update_fields=["state", "heartbeat_at", "error"])
        _scan_queue(actor=actor, code_project=locked)
    return locked


def code_project_delete(*, actor: Actor, code_project: CodeProject) -> None:
    """Delete a project and its whole index (rows and FTS entries); audited."""
    if not code_project.is_editable_by(actor.user):
        raise Forbidden("Only the project's owner or a team admin can delete it.")
    with transaction.atomic():
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


# --- Module names and import resolution ------------------------------------------------------


def python_module_name(rel_path: str, *, prefix: str = "") -> str:
    """Dotted module of a Python file: ``pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py``
    -> ``pkg``. ``prefix`` is the root's own package name when the root is a package."""
    stem = rel_path[: -len(".py")] if rel_path.endswith(".py") else rel_path
    parts = [part for part in stem.split("/") if part]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if prefix:
        parts.insert(0, prefix)
    return ".".join(parts)


def absolute_python_module(module: str, *, importer_module: str, importer_is_package: bool) -> str:
    """``module`` as written in an import, with relative dots resolved against the
    importing module (``..x`` in ``a.b.c`` -> ``a.x``)."""
    if not module.startswith("."):
        return module
    dots = len(module) - len(module.lstrip("."))
    rest = module[dots:]
    package = importer_module.split(".") if importer_module else []
    if not importer_is_package and package:
        package.pop()
    # One dot is the package itself; each further dot goes up one level.
    up = dots - 1
    if up > len(package):
        return rest  # beyond the top: best effort, keep what was written
    base = package[: len(package) - up] if up else package
    return ".".join([*base, rest] if rest else base)


class ModuleMap:
    """Which project file a module name or import path refers to."""

    def __init__(self, files: Iterable[tuple[str, str, str]]) -> None:
        # files: (path, language, module)
        self.by_module: dict[str, str] = {}
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        self.paths: set[str] = set()
        for path, language, module in files:
            self.paths.add(path)
            if language == "python" and module:
                self.by_module.setdefault(module, path)
        for module in self.by_module:
            parts = module.split(".")
            for start in range(1, len(parts)):
                self.by_suffix[".".join(parts[start:])].append(module)

    def python(self, module: str) -> str | None:
        """The file of dotted ``module``: exact, else the one module ending with it
        (a root above the package, like ``src/``)."""
        if module in self.by_module:
            return self.by_module[module]
        candidates = self.by_suffix.get(module)
        if candidates:
            return self.by_module[min(candidates, key=len)]
        return None

    def resolve(self, *, language: str, importer: str, target_module: str, name: str) -> str | None:
        if language == "python":
            if name and name != "*":
                submodule = self.python(f"{target_module}.{name}" if target_module else name)
                if submodule is not None:
                    return submodule
            return self.python(target_module) if target_module else None
        if language in ("javascript", "typescript") and target_module.startswith("."):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), target_module))
            for candidate in (
                base,
                *(base + ext for ext in JS_EXTENSIONS),
                *(f"{base}/index{ext}" for ext in JS_EXTENSIONS),
            ):
                if candidate in self.paths:
                    return candidate
        return None


def _import_target_module(*, language: str, module: str, file_module: str, is_package: bool) -> str:
    if language == "python":
        return absolute_python_module(
            module, importer_module=file_module, importer_is_package=is_package
        )
    return module


# --- Walking and examining files --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkedFile:
    path: str  # relative, "/"-separated
    language: str
    size: int
    mtime_ns: int


def source_tree_walk(
    root: Path, *, max_files: int, exclude: Iterable[str] = ()
) -> tuple[list[WalkedFile], bool]:
    """Source files under ``root`` in a stable order, with their stat; True as second
    value when ``max_files`` cut the walk short. Skips hidden, dependency, build and
    vendored folders and virtualenvs. Symlinks are not followed, so a walk never leaves
    the root nor loops. ``exclude`` names more folders to skip (by name)."""
    skipped_names = SKIP_DIRS | frozenset(exclude)
    found: list[WalkedFile] = []
    stack = [("", str(root))]
    while stack:
        rel_dir, abs_dir = stack.pop()
        try:
            with os.scandir(abs_dir) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        # A virtualenv, whatever it is called (found from the listing: no extra stat).
        if rel_dir and any(entry.name == "pyvenv.cfg" for entry in entries):
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not (name.startswith(".") or name in skipped_names):
                        subdirs.append((f"{rel_dir}{name}/", entry.path))
                    continue
                language = language_for(name)
                if language is None or not entry.is_file(follow_symlinks=False):
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if len(found) >= max_files:
                return found, True
            found.append(WalkedFile(f"{rel_dir}{name}", language, stat.st_size, stat.st_mtime_ns))
        stack.extend(reversed(subdirs))
    return found, False


@dataclass(frozen=True, slots=True)
class ScanContext:
    """What examining a file needs besides the file itself. Worker processes are forked
    with it, so it is never pickled: jobs name files by their position in ``todo``."""

    project_id: int
    root: str  # absolute, without a trailing separator
    max_bytes: int
    todo: list[WalkedFile]
    # path -> (id, size, mtime_ns, sha256, has_errors, skipped_reason) of stored files
    existing: dict[str, tuple]
    path_ids: dict[str, int]
    modules: dict[str, str]
    module_map: ModuleMap


@dataclass(slots=True)
class ScanRows:
    """Database rows from examining a run of files, as tuples ready for executemany."""

    files: int = 0
    parsed: int = 0
    skipped: int = 0
    stale: list[int] = field(default_factory=list)  # files whose old index goes
    updates: list[tuple] = field(default_factory=list)  # FILE_UPDATE_FIELDS, then the file id
    symbols: list[tuple] = field(default_factory=list)  # SYMBOL_FIELDS
    words: list[tuple[str, str]] = field(default_factory=list)  # FTS values per symbol
    imports: list[tuple] = field(default_factory=list)  # IMPORT_FIELDS
    calls: list[tuple] = field(default_factory=list)  # CALL_FIELDS


def _read(abs_path: str, size: int, max_bytes: int) -> tuple[bytes | None, str]:
    """The file's content, or None and why it is skipped."""
    if size > max_bytes:
        return None, f"too large: {size} bytes (limit {max_bytes})"
    try:
        with open(abs_path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"[:200]
    if len(data) > max_bytes:
        return None, f"too large: over {max_bytes} bytes"
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None, "binary content"
    return data, ""


def _examine(context: ScanContext, walked: WalkedFile, rows: ScanRows) -> None:
    """Read, hash and (when its content changed) extract one file into ``rows``."""
    path = walked.path
    file_id = context.path_ids[path]
    old = context.existing.get(path)
    rows.files += 1
    abs_path = f"{context.root}/{path}"  # (pathlib's join costs more than the read)
    data, skipped = _read(abs_path, walked.size, context.max_bytes)
    sha = hashlib.sha256(data).hexdigest() if data is not None else ""
    if sha and old is not None and sha == old[3]:
        # Touched but identical: remember the new stat so it is not hashed again.
        rows.updates.append((walked.size, walked.mtime_ns, sha, old[4], "", file_id))
        return
    if old is not None:
        rows.stale.append(file_id)
    extracted = None
    if data is not None:
        try:
            extracted = extract_rows(abs_path, data)
        except Exception as exc:  # a parser bug must not stop the scan of the other files
            logger.exception("extractor failed on %s", abs_path)
            skipped = f"extractor failed: {exc}"[:200]
    if extracted is None:
        rows.skipped += 1
        rows.updates.append((walked.size, walked.mtime_ns, "", False, skipped, file_id))
        return
    rows.parsed += 1
    rows.updates.append((walked.size, walked.mtime_ns, sha, extracted.has_errors, "", file_id))
    project_id = context.project_id
    for definition in extracted.definitions:
        rows.symbols.append((project_id, file_id, *definition))
        rows.words.append(fts_values(definition[0], definition[1]))
    _imports_add(context, walked, file_id, extracted.imports, rows.imports)
    rows.calls += [(project_id, file_id, *call) for call in extracted.calls]


def _imports_add(
    context: ScanContext,
    walked: WalkedFile,
    file_id: int,
    found: list[tuple[str, str, str, int]],
    out: list[tuple],
) -> None:
    """Rows of a file's imports, each resolved to the project file it refers to."""
    project_id, path, language = context.project_id, walked.path, walked.language
    module_map, path_ids = context.module_map, context.path_ids
    module = context.modules[path]
    is_package = path.endswith("__init__.py")
    for written, name, alias, line in found:
        target_module = _import_target_module(
            language=language, module=written, file_module=module, is_package=is_package
        )
        target = module_map.resolve(
            language=language, importer=path, target_module=target_module, name=name
        )
        out.append(
            (
                project_id,
                file_id,
                written,
                name,
                alias,
                line,
                target_module,
                path_ids.get(target) if target else None,
            )
        )


def _examine_range(context: ScanContext, start: int, stop: int) -> ScanRows:
    rows = ScanRows()
    for walked in context.todo[start:stop]:
        _examine(context, walked, rows)
    return rows


_worker_context: ScanContext | None = None


def _worker_init(context: ScanContext) -> None:
    global _worker_context
    _worker_context = context
    # The inherited objects are never freed here: keep the collector from walking them.
    gc.freeze()


def _worker_examine(span: tuple[int, int]) -> ScanRows:
    assert _worker_context is not None
    return _examine_range(_worker_context, *span)


def _examine_all(context: ScanContext, result: ScanResult) -> Iterator[ScanRows]:
    """Rows of every WORKER_CHUNK files, in order. Big scans extract in worker
    processes, so that the database writes overlap with parsing."""
    total = len(context.todo)
    spans = [(start, start + WORKER_CHUNK) for start in range(0, total, WORKER_CHUNK)]
    workers = min(os.cpu_count() or 1, 8)
    if total < settings.CODEGRAPH_PARALLEL_MIN_FILES or workers < 2:
        for span in spans:
            yield _examine_range(context, *span)
        return
    preload(walked.path for walked in context.todo)
    # billiard (Celery's own multiprocessing) rather than the standard library's: a
    # Celery pool process is a daemon, and multiprocessing refuses to let daemons start
    # processes. Forked, so the context is shared without pickling; the workers only
    # parse, and never touch the database connection they inherit.
    pool = billiard.get_context("fork").Pool(workers, initializer=_worker_init, initargs=(context,))
    result.workers = workers
    finished = False
    try:
        # Small pieces keep every worker busy and come back early.
        yield from pool.imap(_worker_examine, spans)
        finished = True
    finally:
        if finished:
            pool.close()
        else:
            pool.terminate()
        pool.join()


# --- Scanning ---------------------------------------------------------------------------------


@dataclass
class ScanResult:
    """What one scan did."""

    project_id: int
    files: int = 0
    parsed: int = 0
    unchanged: int = 0
    added: int = 0
    deleted: int = 0
    skipped: int = 0
    full: bool = False
    workers: int = 0  # processes that parsed in parallel (0: this one alone)
    errors: list[str] = field(default_factory=list)


class ScanLost(Exception):
    """The scan no longer holds its project: it was taken for dead (no sign of life for
    ``CODEGRAPH_SCAN_STALE_SECONDS``) and queued again, or the project was deleted."""


@dataclass(frozen=True, slots=True)
class ScanClaim:
    """A scan's hold on its project: the project is running, with this start time."""

    project_id: int
    started_at: datetime

    def rows(self) -> models.QuerySet:
        return CodeProject.objects.filter(
            pk=self.project_id, state=ScanState.RUNNING, started_at=self.started_at
        )

    def beat(self, **fields: object) -> None:
        """Record progress and that the scan is alive; ScanLost when the hold is gone,
        which rolls back the transaction around the call."""
        if not self.rows().update(heartbeat_at=timezone.now(), **fields):
            raise ScanLost


def code_project_scan(
    *, project_id: int, progress: ProgressCallback | None = None, queued_only: bool = False
) -> ScanResult:
    """Scan the project's folder and bring its index up to date.

    Incremental: every file is stat'ed, hashed only when its size or mtime changed and
    re-parsed only when its hash changed; files gone from disk are dropped. A change of
    extractor version re-indexes everything. Each batch of files is one transaction, so
    readers never wait long, and the project row shows progress as batches commit.
    A folder that vanished or is no longer allowed fails the scan with a message.

    One scan at a time: a project whose scan shows signs of life is left alone. With
    ``queued_only`` (the task), only a queued project, or one whose scan died, is
    scanned, so a task delivered twice scans once.
    """
    code_project = CodeProject.objects.get(pk=project_id)
    now = timezone.now()
    dead = _no_sign_of_life(now)
    alive = models.Q(state=ScanState.RUNNING) & ~dead
    claimable = (
        models.Q(state=ScanState.QUEUED) | (models.Q(state=ScanState.RUNNING) & dead)
        if queued_only
        else ~alive
    )
    claimed = (
        CodeProject.objects.filter(pk=project_id)
        .filter(claimable)
        .update(
            state=ScanState.RUNNING,
            started_at=now,
            heartbeat_at=now,
            finished_at=None,
            error="",
            files_done=0,
            files_total=0,
        )
    )
    if not claimed:
        busy = CodeProject.objects.filter(pk=project_id).filter(alive).exists()
        message = "Another scan is running." if busy else "The project is not queued."
        return ScanResult(project_id=project_id, errors=[message])
    claim = ScanClaim(project_id=project_id, started_at=now)
    try:
        return _scan(code_project, claim, progress)
    except ScanLost:
        return ScanResult(project_id=project_id, errors=["The scan was taken over."])
    except ApplicationError as exc:
        claim.rows().update(state=ScanState.FAILED, error=exc.message, finished_at=timezone.now())
        return ScanResult(project_id=project_id, errors=[exc.message])
    except Exception as exc:
        failed = claim.rows().update(
            state=ScanState.FAILED,
            error=f"The scan failed: {exc}"[:2000],
            finished_at=timezone.now(),
        )
        if not failed:  # deleted or taken over meanwhile: nothing left to do
            return ScanResult(project_id=project_id, errors=["The scan was taken over."])
        raise


def scan_stale_after() -> timedelta:
    """How long a running scan may go without a sign of life before it counts as dead
    (its worker was killed), and a queued one before it is queued again."""
    return timedelta(seconds=settings.CODEGRAPH_SCAN_STALE_SECONDS)


def _no_sign_of_life(now: datetime) -> models.Q:
    return models.Q(heartbeat_at__isnull=True) | models.Q(heartbeat_at__lt=now - scan_stale_after())


def code_project_scans_catch_up() -> list[int]:
    """Queue again every scan that is queued or running but has shown no sign of life
    for ``CODEGRAPH_SCAN_STALE_SECONDS``: its task was lost (the broker was down) or its
    worker died. Idempotent: each such project is queued once per period, and a scan
    delivered twice runs once. Returns the ids queued."""
    from codegraph.tasks import codegraph_scan
    from memoryhub.tasks import enqueue_on_commit

    now = timezone.now()
    stale = _no_sign_of_life(now)
    queued = []
    with transaction.atomic():
        candidates = CodeProject.objects.filter(
            models.Q(state__in=(ScanState.QUEUED, ScanState.RUNNING)) & stale
        ).values_list("pk", "state")
        for pk, state in list(candidates):
            # The same test again, so that a scan that beat meanwhile keeps its hold.
            if (
                CodeProject.objects.filter(pk=pk, state=state)
                .filter(stale)
                .update(state=ScanState.QUEUED, heartbeat_at=now)
            ):
                logger.info(
                    "Scan of code project %s was %s with no sign of life; queued again.",
                    pk,
                    state,
                )
                enqueue_on_commit(codegraph_scan, pk)
                queued.append(pk)
    return queued


def _needs_examining(walked: WalkedFile, row: tuple, max_bytes: int) -> bool:
    _, size, mtime_ns, sha, _, skipped = row
    if walked.size != size or walked.mtime_ns != mtime_ns:
        return True
    if not sha and not skipped:
        return True  # created by a scan that stopped before parsing it
    return skipped.startswith("too large") and walked.size <= max_bytes


def _scan(
    code_project: CodeProject, claim: ScanClaim, progress: ProgressCallback | None
) -> ScanResult:
    project_id = code_project.pk
    root = code_root_validate(path=code_project.root_path)
    code_root_access_check(code_project=code_project)  # others may have indexed it since
    max_bytes = settings.CODEGRAPH_MAX_FILE_BYTES
    result = ScanResult(project_id=project_id)
    result.full = code_project.extractor_version != EXTRACTOR_VERSION
    if result.full:
        with transaction.atomic():
            claim.beat()
            _index_clear(project_id)

    walked, truncated = source_tree_walk(
        root,
        max_files=settings.CODEGRAPH_MAX_FILES,
        exclude=(code_project.settings or {}).get("exclude", ()),
    )
    existing = {
        row[0]: row[1:]
        for row in SourceFile.objects.filter(project_id=project_id).values_list(
            "path", "id", "size", "mtime_ns", "sha256", "has_errors", "skipped_reason"
        )
    }
    walked_paths = {w.path for w in walked}
    gone = [row[0] for path, row in existing.items() if path not in walked_paths]
    new = [w for w in walked if w.path not in existing]
    changed = [
        w for w in walked if w.path in existing and _needs_examining(w, existing[w.path], max_bytes)
    ]
    result.files, result.added, result.deleted = len(walked), len(new), len(gone)
    done = len(walked) - len(new) - len(changed)
    result.unchanged = done
    claim.beat(files_total=len(walked), files_done=done)
    if progress:
        progress(done, len(walked))

    todo = sorted([*new, *changed], key=lambda w: w.path)
    if not todo and not gone:
        # Nothing changed on disk: no module names, no writes beyond the state.
        _scan_finish(code_project, claim, result, truncated=truncated, recount=result.full)
        return result
    prefix = root.name if (root / "__init__.py").is_file() else ""
    modules = {
        w.path: python_module_name(w.path, prefix=prefix) if w.language == "python" else ""
        for w in walked
    }
    path_ids = {path: row[0] for path, row in existing.items() if path in walked_paths}
    with transaction.atomic():
        claim.beat()
        if gone:
            _files_delete(gone)
        if new:
            insert_rows(
                SourceFile,
                FILE_FIELDS,
                [
                    (
                        project_id,
                        w.path,
                        modules[w.path],
                        w.language,
                        w.size,
                        w.mtime_ns,
                        "",
                        False,
                        "",
                    )
                    for w in new
                ],
            )
            path_ids.update(
                SourceFile.objects.filter(project_id=project_id).values_list("path", "id")
            )

    context = ScanContext(
        project_id=project_id,
        root=str(root),
        max_bytes=max_bytes,
        todo=todo,
        existing=existing,
        path_ids=path_ids,
        modules=modules,
        module_map=ModuleMap((w.path, w.language, modules[w.path]) for w in walked),
    )
    examined = iter(_examine_all(context, result))
    for rows in examined:
        # Each piece is written as soon as it is back, so that little is left to write
        # when parsing ends, but committed only every BATCH_SIZE files: each commit
        # writes the pages it touched again, and FTS5 adds a segment per transaction.
        with transaction.atomic():
            claim.beat()
            batch = 0
            while rows is not None:
                _rows_store(rows)
                batch += rows.files
                result.parsed += rows.parsed
                result.skipped += rows.skipped
                rows = next(examined, None) if batch < BATCH_SIZE else None
            done += batch
            claim.beat(files_done=done)
        if progress:
            progress(done, len(walked))

    if (new or gone) and not result.full:
        # Imports in unchanged files may now resolve to a file that came or went.
        claim.beat()
        _imports_reresolve(project_id, context.module_map, path_ids)
    changed_anything = bool(result.full or new or gone or changed)
    _scan_finish(code_project, claim, result, truncated=truncated, recount=changed_anything)
    return result


def _children_delete(file_ids: list[int]) -> None:
    if not file_ids:
        return
    SYMBOL_FTS.delete(
        list(Symbol.objects.filter(file_id__in=file_ids).values_list("id", flat=True))
    )
    for model in (Symbol, CallRef, ImportRef):
        model.objects.filter(file_id__in=file_ids).delete()


def _files_delete(file_ids: list[int]) -> None:
    _children_delete(file_ids)
    ImportRef.objects.filter(target_file_id__in=file_ids).update(target_file=None)
    SourceFile.objects.filter(pk__in=file_ids).delete()


def _rows_store(rows: ScanRows) -> None:
    """Write one batch: drop the changed files' old index, then insert the new one."""
    _children_delete(rows.stale)
    update_rows(SourceFile, FILE_UPDATE_FIELDS, rows.updates)
    insert_rows(Symbol, SYMBOL_FIELDS, rows.symbols)
    insert_rows(ImportRef, IMPORT_FIELDS, rows.imports)
    insert_rows(CallRef, CALL_FIELDS, rows.calls)
    if rows.symbols:
        # The transaction holds SQLite's write lock, so the symbols just inserted got
        # consecutive ids ending with the largest: their FTS rows need no read-back.
        last = Symbol.objects.aggregate(last=models.Max("pk"))["last"]
        first = last - len(rows.symbols) + 1
        SYMBOL_FTS.upsert(zip(range(first, last + 1), rows.words, strict=True), new=True)


FILE_FIELDS = (
    "project",
    "path",
    "module",
    "language",
    "size",
    "mtime_ns",
    "sha256",
    "has_errors",
    "skipped_reason",
)
SYMBOL_FIELDS = (
    "project",
    "file",
    "name",
    "qualified_name",
    "kind",
    "line",
    "end_line",
    "signature",
)
IMPORT_FIELDS = (
    "project",
    "file",
    "module",
    "name",
    "alias",
    "line",
    "target_module",
    "target_file",
)
CALL_FIELDS = ("project", "file", "callee", "receiver", "caller", "line")


FILE_UPDATE_FIELDS = ("size", "mtime_ns", "sha256", "has_errors", "skipped_reason")


def _imports_reresolve(project_id: int, module_map: ModuleMap, path_ids: dict[str, int]) -> None:
    """Point every import of the project at the file it now refers to."""
    moves: dict[int | None, list[int]] = defaultdict(list)
    rows = ImportRef.objects.filter(project_id=project_id).values_list(
        "id", "file__path", "file__language", "target_module", "name", "target_file_id"
    )
    for pk, path, language, target_module, name, current in rows:
        target = module_map.resolve(
            language=language, importer=path, target_module=target_module, name=name
        )
        wanted = path_ids.get(target) if target else None
        if wanted != current:
            moves[wanted].append(pk)
    with transaction.atomic():
        for target_id, ids in moves.items():
            for start in range(0, len(ids), 500):
                ImportRef.objects.filter(pk__in=ids[start : start + 500]).update(
                    target_file_id=target_id
                )


def _scan_finish(
    code_project: CodeProject,
    claim: ScanClaim,
    result: ScanResult,
    *,
    truncated: bool,
    recount: bool,
) -> None:
    project_id = code_project.pk
    fields: dict[str, object] = {
        "state": ScanState.DONE,
        "finished_at": timezone.now(),
        "files_done": result.files,
        "files_total": result.files,
        "extractor_version": EXTRACTOR_VERSION,
        "parsed_count": result.parsed,
        "warning": (
            f"Stopped at {settings.CODEGRAPH_MAX_FILES} files (CODEGRAPH_MAX_FILES); "
            "the rest of the folder is not indexed."
            if truncated
            else ""
        ),
    }
    if recount or not code_project.language_counts:
        fields.update(code_project_counts(project_id=project_id))
    claim.beat(**fields)


def code_project_counts(*, project_id: int) -> dict[str, object]:
    """Stored counts of a project's index, overall and per language."""
    languages: dict[str, dict[str, int]] = {}
    file_rows = SourceFile.objects.filter(project_id=project_id).values_list(
        "language", "skipped_reason"
    )
    files = Counter()
    skipped = 0
    for language, reason in file_rows:
        files[language] += 1
        skipped += bool(reason)
    symbols = Counter(
        dict(
            Symbol.objects.filter(project_id=project_id)
            .values("file__language")
            .annotate(n=Count("id"))
            .values_list("file__language", "n")
        )
    )
    for language in sorted(files):
        languages[language] = {"files": files[language], "symbols": symbols.get(language, 0)}
    return {
        "file_count": sum(files.values()),
        "skipped_count": skipped,
        "symbol_count": sum(symbols.values()),
        "import_count": ImportRef.objects.filter(project_id=project_id).count(),
        "call_count": CallRef.objects.filter(project_id=project_id).count(),
        "language_counts": languages,
    }
