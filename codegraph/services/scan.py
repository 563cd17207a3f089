"""Scanning a code project: claiming it, bringing its index up to date incrementally,
and catching up scans whose task was lost or whose worker died."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from codegraph.extractor import EXTRACTOR_VERSION
from codegraph.extractor.modules import ModuleMap, python_module_name
from codegraph.models import CallRef, CodeProject, ImportRef, ScanState, SourceFile, Symbol
from codegraph.search import SYMBOL_FTS
from codegraph.selectors import code_project_index_counts
from codegraph.services.examine import (
    ScanContext,
    ScanRows,
    WalkedFile,
    examine_all,
    examine_workers,
    source_tree_walk,
)
from codegraph.services.projects import _index_clear, code_root_access_check, code_root_validate
from memoryhub.engine.db.bulk import insert_rows, update_rows
from memoryhub.engine.errors import ApplicationError

logger = logging.getLogger(__name__)

BATCH_SIZE = 200

ProgressCallback = Callable[[int, int], None]


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
    died_too_often = models.Q(state=ScanState.RUNNING) & dead & _tried_enough()
    if (
        CodeProject.objects.filter(pk=project_id)
        .filter(claimable & died_too_often)
        .update(**_given_up(now))
    ):
        return ScanResult(project_id=project_id, errors=[_stopped_reason()])
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
            scan_attempts=models.F("scan_attempts") + 1,
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


def _tried_enough() -> models.Q:
    return models.Q(scan_attempts__gte=settings.MEMORYHUB_JOB_ATTEMPTS)


def _stopped_reason() -> str:
    return (
        f"The worker stopped while scanning, {settings.MEMORYHUB_JOB_ATTEMPTS} times (no sign "
        f"of life for {settings.CODEGRAPH_SCAN_STALE_SECONDS:g} s each time: killed, or out "
        "of memory); the scan is not tried again until you scan again."
    )


def _given_up(now: datetime) -> dict[str, object]:
    return {"state": ScanState.FAILED, "error": _stopped_reason(), "finished_at": now}


def code_project_scans_catch_up() -> list[int]:
    """Queue again every scan that is queued or running but has shown no sign of life
    for ``CODEGRAPH_SCAN_STALE_SECONDS``: its task was lost (the broker was down) or its
    worker died. Idempotent: each such project is queued once per period, and a scan
    delivered twice runs once. Returns the ids queued."""
    from codegraph.tasks import codegraph_scan
    from memoryhub.engine.tasks import enqueue_on_commit

    now = timezone.now()
    stale = _no_sign_of_life(now)
    queued = []
    with transaction.atomic():
        candidates = CodeProject.objects.filter(
            models.Q(state__in=(ScanState.QUEUED, ScanState.RUNNING)) & stale
        ).values_list("pk", "state")
        for pk, state in list(candidates):
            # The same test again, so that a scan that beat meanwhile keeps its hold.
            row = CodeProject.objects.filter(pk=pk, state=state).filter(stale)
            if state == ScanState.RUNNING and row.filter(_tried_enough()).update(**_given_up(now)):
                logger.warning("Scan of code project %s: %s", pk, _stopped_reason())
                continue
            if row.update(state=ScanState.QUEUED, heartbeat_at=now):
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
        # The server's own data (its database, queue, uploads) is never indexed.
        never=(settings.DATA_DIR, settings.STATIC_ROOT),
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
    result.workers = examine_workers(context)
    examined = iter(examine_all(context, workers=result.workers))
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
        fields.update(code_project_index_counts(project_id=project_id))
    claim.beat(**fields)
