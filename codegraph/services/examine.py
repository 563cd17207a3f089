"""Walking a source tree and examining its files: reading, hashing and parsing each one
into rows to store, in worker processes when there are many."""

from __future__ import annotations

import gc
import hashlib
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import billiard
from django.conf import settings

from codegraph.extractor import extract_rows, language_for, preload
from codegraph.extractor.modules import ModuleMap, import_target_module
from codegraph.search import fts_values

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
BINARY_SNIFF_BYTES = 8192
# Files per piece of a scan: one job of a worker process, one write.
WORKER_CHUNK = 25


# --- Walking and examining files --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalkedFile:
    path: str  # relative, "/"-separated
    language: str
    size: int
    mtime_ns: int


def source_tree_walk(
    root: Path,
    *,
    max_files: int,
    exclude: Iterable[str] = (),
    never: Iterable[Path] = (),
) -> tuple[list[WalkedFile], bool]:
    """Source files under ``root`` in a stable order, with their stat; True as second
    value when ``max_files`` cut the walk short. Skips hidden, dependency, build and
    vendored folders and virtualenvs. Symlinks are not followed, so a walk never leaves
    the root nor loops. ``exclude`` names more folders to skip (by name), ``never``
    folders never to enter whatever they are called (the server's own data)."""
    skipped_names = SKIP_DIRS | frozenset(exclude)
    skipped_paths = {os.path.realpath(path) for path in never}
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
                    hidden = name.startswith(".") or name in skipped_names
                    if not hidden and os.path.realpath(entry.path) not in skipped_paths:
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
        target_module = import_target_module(
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


def examine_workers(context: ScanContext) -> int:
    """How many worker processes examine the files of ``context`` (0: this one alone):
    one per core, for scans with enough files to parse to repay starting them."""
    workers = min(os.cpu_count() or 1, 8)
    if len(context.todo) < settings.CODEGRAPH_PARALLEL_MIN_FILES or workers < 2:
        return 0
    return workers


def examine_all(context: ScanContext, *, workers: int) -> Iterator[ScanRows]:
    """Rows of every WORKER_CHUNK files, in order; with ``workers``, extracted in that
    many worker processes, so that the database writes overlap with parsing."""
    spans = [(start, start + WORKER_CHUNK) for start in range(0, len(context.todo), WORKER_CHUNK)]
    if not workers:
        for span in spans:
            yield _examine_range(context, *span)
        return
    preload(walked.path for walked in context.todo)
    # billiard (Celery's own multiprocessing) rather than the standard library's: a
    # Celery pool process is a daemon, and multiprocessing refuses to let daemons start
    # processes. Forked, so the context is shared without pickling; the workers only
    # parse, and never touch the database connection they inherit.
    pool = billiard.get_context("fork").Pool(workers, initializer=_worker_init, initargs=(context,))
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
