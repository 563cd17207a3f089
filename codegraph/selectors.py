"""Reads of CodeGraph: projects, symbol search, callers, imports and stats.

Every read starts from ``CodeProject.objects.visible_to(user)``: symbols, imports and
calls are only ever looked up within the ids of visible projects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, QuerySet

from codegraph.extractor import split_identifier
from codegraph.models import CallRef, CodeProject, ImportRef, SourceFile, Symbol
from codegraph.search import SYMBOL_FTS
from memoryhub.engine.errors import InvalidInput, NotFound
from memoryhub.engine.refs import id_of
from memoryhub.engine.search import match_all

MODES = ("exact", "prefix", "fuzzy")
MAX_LIMIT = 500


# --- Projects ---------------------------------------------------------------------------------


def code_project_list_visible(*, user) -> QuerySet[CodeProject]:
    """Projects ``user`` may see, by name."""
    return (
        CodeProject.objects.visible_to(user).select_related("owner", "team").order_by("name", "pk")
    )


def code_project_get_visible(*, user, project_id: int) -> CodeProject:
    """One visible project, or NotFound (the same for a missing and a hidden one)."""
    found = CodeProject.objects.visible_to(user).filter(pk=project_id).first()
    if found is None:
        raise NotFound(f"No code project {project_id}.")
    return found


def code_projects_selected(*, user, project: str | int | None = None) -> QuerySet[CodeProject]:
    """Visible projects to search: all of them, or the one named (id or name; the
    user's own project wins over a same-named shared one). NotFound when none matches."""
    visible = CodeProject.objects.visible_to(user)
    if project in (None, ""):
        return visible
    text = str(project).strip()
    ident = id_of(text)
    if ident is not None:
        chosen = visible.filter(pk=ident)
    else:
        chosen = visible.filter(name=text)
        own = chosen.filter(owner_id=user.pk)
        if own.exists():
            chosen = own
        else:
            first = chosen.order_by("pk").values_list("pk", flat=True).first()
            chosen = visible.filter(pk=first)
    if not chosen.exists():
        raise NotFound(f"No code project '{text}'.")
    return chosen


def _project_ids(user, project: str | int | None) -> list[int]:
    return list(code_projects_selected(user=user, project=project).values_list("pk", flat=True))


# --- Symbols ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SymbolHit:
    id: int
    kind: str
    name: str
    qualified_name: str
    path: str
    line: int
    end_line: int
    signature: str
    project: str
    project_id: int
    file_id: int
    module: str = ""

    @property
    def dotted_name(self) -> str:
        """The name callers are looked up by: ``pkg.mod.Class.method`` in Python."""
        return f"{self.module}.{self.qualified_name}" if self.module else self.qualified_name

    def as_line(self) -> str:
        return f"{self.kind} {self.qualified_name} — {self.path}:{self.line}"


def _symbol_hits(queryset: QuerySet[Symbol], order: list[int] | None = None) -> list[SymbolHit]:
    rows = queryset.values_list(
        "id",
        "kind",
        "name",
        "qualified_name",
        "file__path",
        "line",
        "end_line",
        "signature",
        "project__name",
        "project_id",
        "file_id",
        "file__module",
    )
    hits = [SymbolHit(*row) for row in rows]
    if order is not None:
        rank = {pk: i for i, pk in enumerate(order)}
        hits.sort(key=lambda hit: rank.get(hit.id, len(rank)))
    return hits


def symbol_find(
    *,
    user,
    query: str,
    project: str | int | None = None,
    kind: str | None = None,
    mode: str = "fuzzy",
    limit: int = 20,
) -> list[SymbolHit]:
    """Symbols by name in the visible projects.

    ``exact``: the name (or a dotted qualified name such as ``Client.login``);
    ``prefix``: names starting with the query; ``fuzzy``: ranked full-text search over
    the name's words (``get_queryset`` finds ``getQueryset``), then plain substring
    matches. Results as ``SymbolHit`` (``as_line()`` gives ``kind name — file:line``).
    """
    query = (query or "").strip()
    if not query:
        raise InvalidInput("Say what to look for: q must not be empty.")
    if mode not in MODES:
        raise InvalidInput(f"Unknown mode '{mode}': use one of {', '.join(MODES)}.")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}.")
    project_ids = _project_ids(user, project)
    if not project_ids:
        # Nothing visible (FtsIndex.search cannot take an empty `within` either).
        return []
    base = Symbol.objects.filter(project_id__in=project_ids)
    if kind:
        base = base.filter(kind=kind)
    ordering = ("name", "file__path", "line")
    if mode == "exact":
        name = query.rsplit(".", 1)[-1]
        found = base.filter(name=name)
        if "." in query:
            found = found.filter(qualified_name__endswith=query)
        hits = _symbol_hits(found.order_by(*ordering)[:limit])
        if not hits and "." not in query:
            hits = _symbol_hits(base.filter(name__iexact=query).order_by(*ordering)[:limit])
        return hits
    if mode == "prefix":
        return _symbol_hits(base.filter(name__istartswith=query).order_by(*ordering)[:limit])
    # fuzzy: ranked words first, then substrings the words missed.
    match = match_all(split_identifier(query))
    ranked = SYMBOL_FTS.search(match, limit=limit, within=base) if match else []
    order = [hit.id for hit in ranked]
    hits = _symbol_hits(base.filter(pk__in=order), order=order)
    if len(hits) < limit:
        more = (
            base.filter(name__icontains=query)
            .exclude(pk__in=order)
            .order_by(*ordering)[: limit - len(hits)]
        )
        hits.extend(_symbol_hits(more))
    return hits


# --- Callers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallHit:
    path: str
    line: int
    caller: str
    receiver: str
    callee: str
    project: str

    def as_line(self) -> str:
        written = f"{self.receiver}.{self.callee}" if self.receiver else self.callee
        return f"call {written}() in {self.caller or '<module>'} — {self.path}:{self.line}"


@dataclass
class CallersResult:
    symbol: str
    targets: list[str] = field(default_factory=list)  # dotted names the calls resolve to
    calls: list[CallHit] = field(default_factory=list)


def _symbol_targets(project_ids: list[int], symbol: str) -> list[tuple[str, str]]:
    """(module, qualified name) pairs a symbol stands for. A dotted symbol is split at
    the longest prefix that is a module of the project; a bare name stands for each of
    its Python definitions."""
    files = SourceFile.objects.filter(project_id__in=project_ids)
    if "." in symbol:
        parts = symbol.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if files.filter(module=module).exists():
                return [(module, ".".join(parts[cut:]))]
        return [(".".join(parts[:-1]), parts[-1])]  # defined outside the project
    rows = (
        Symbol.objects.filter(project_id__in=project_ids, name=symbol, file__language="python")
        .values_list("file__module", "qualified_name")
        .distinct()
    )
    return sorted({(module, qualified) for module, qualified in rows if module}) or [("", symbol)]


def _bindings(
    project_ids: list[int], module: str, name: str
) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """Per importing file: the local names bound to ``module.name`` and the local
    names (receivers) bound to ``module`` itself."""
    direct: dict[int, set[str]] = defaultdict(set)
    module_names: dict[int, set[str]] = defaultdict(set)
    imports = ImportRef.objects.filter(project_id__in=project_ids)
    for file_id, alias in imports.filter(target_module=module, name__in=[name, "*"]).values_list(
        "file_id", "alias"
    ):
        direct[file_id].add(alias or name)
    for file_id, alias in imports.filter(target_module=module, name="").values_list(
        "file_id", "alias"
    ):
        module_names[file_id].add(alias or module)
    if "." in module:
        parent, last = module.rsplit(".", 1)
        for file_id, alias in imports.filter(target_module=parent, name=last).values_list(
            "file_id", "alias"
        ):
            module_names[file_id].add(alias or last)
        # `import a` then `a.b.c.f()`: the full dotted receiver names the module.
        top = module.split(".", 1)[0]
        for file_id in imports.filter(target_module=top, name="", alias="").values_list(
            "file_id", flat=True
        ):
            module_names[file_id].add(module)
    return direct, module_names


def _reexports(project_ids: list[int], module: str, name: str) -> list[tuple[str, str]]:
    """Modules that import ``module.name`` under its own name and so re-export it."""
    rows = (
        ImportRef.objects.filter(
            project_id__in=project_ids, target_module=module, name=name, alias__in=["", name]
        )
        .exclude(file__module="")
        .values_list("file__module", flat=True)
        .distinct()
    )
    return [(reexporter, name) for reexporter in rows if reexporter != module]


def symbol_callers(
    *, user, symbol: str, project: str | int | None = None, limit: int = 200
) -> CallersResult:
    """Call sites of ``symbol`` (``django.contrib.auth.login`` or a bare ``login``),
    resolved through imports: a call through an alias (``from m import f as g; g()``),
    through a module (``from pkg import m; m.f()``), a bare call inside the defining
    module, and re-exports; a same-named method of another object (``self.client.f()``)
    does not count. ``Class.method`` counts ``Class.method()`` and ``self.method()``
    inside the class."""
    symbol = (symbol or "").strip().strip(".")
    if not symbol:
        raise InvalidInput("Say which symbol: symbol must not be empty.")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}.")
    project_ids = _project_ids(user, project)
    result = CallersResult(symbol=symbol)
    seen_calls: set[int] = set()
    hits: list[tuple[int, CallHit]] = []
    pending = _symbol_targets(project_ids, symbol)
    done: set[tuple[str, str]] = set()
    while pending and len(done) < 20:
        module, qualified = pending.pop(0)
        if (module, qualified) in done:
            continue
        done.add((module, qualified))
        found = [
            (pk, hit)
            for pk, hit in _calls_of(project_ids, module, qualified)
            if pk not in seen_calls
        ]
        # A re-export is worth naming only when calls go through it.
        if len(done) == 1 or found or module == "":
            result.targets.append(f"{module}.{qualified}" if module else qualified)
        for pk, hit in found:
            seen_calls.add(pk)
            hits.append((pk, hit))
        if module and "." not in qualified:
            pending.extend(_reexports(project_ids, module, qualified))
    hits.sort(key=lambda item: (item[1].project, item[1].path, item[1].line))
    result.calls = [hit for _, hit in hits[:limit]]
    return result


def _calls_of(project_ids: list[int], module: str, qualified: str) -> list[tuple[int, CallHit]]:
    defining = (
        set(
            SourceFile.objects.filter(project_id__in=project_ids, module=module).values_list(
                "id", flat=True
            )
        )
        if module
        else set()
    )
    owner, _, method = qualified.rpartition(".")
    if owner:
        # A method: `Owner.method()` through the owner's bindings, `self.method()` inside it.
        direct, _ = _bindings(project_ids, module, owner.split(".")[0]) if module else ({}, {})
        wanted = {method}
    else:
        direct, module_names = _bindings(project_ids, module, qualified) if module else ({}, {})
        wanted = {qualified} | {local for names in direct.values() for local in names}
    calls = CallRef.objects.filter(project_id__in=project_ids, callee__in=wanted).values_list(
        "id", "file_id", "file__path", "line", "caller", "receiver", "callee", "project__name"
    )
    found = []
    for pk, file_id, path, line, caller, receiver, callee, project_name in calls:
        if owner:
            ok = (
                receiver in direct.get(file_id, ()) or (file_id in defining and receiver == owner)
            ) or (
                file_id in defining
                and receiver in ("self", "cls")
                and caller.startswith(owner + ".")
            )
        elif receiver:
            ok = callee == qualified and receiver in module_names.get(file_id, ())
        else:
            ok = (
                callee in direct.get(file_id, ())
                or (not module and callee == qualified)
                or (file_id in defining and callee == qualified)
            )
        if ok:
            found.append((pk, CallHit(path, line, caller, receiver, callee, project_name)))
    return found


# --- Imports ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportHit:
    path: str  # the importing file
    line: int
    module: str
    name: str
    alias: str
    target_path: str  # the project file it resolves to, "" when outside the project

    def as_line(self) -> str:
        written = f"from {self.module} import {self.name}" if self.name else f"import {self.module}"
        if self.alias:
            written += f" as {self.alias}"
        where = f" -> {self.target_path}" if self.target_path else ""
        return f"{written}{where} — {self.path}:{self.line}"


@dataclass
class FileImports:
    file: SourceFile
    project: str
    imports: list[ImportHit]
    importers: list[ImportHit]


def source_file_find(*, user, file: str, project: str | int | None = None) -> SourceFile:
    """A visible file by relative path, by path suffix (``auth/views.py``) or by Python
    module name (``django.contrib.auth.views``); NotFound when nothing matches."""
    file = (file or "").strip().lstrip("./")
    if not file:
        raise InvalidInput("Say which file: file must not be empty.")
    files = SourceFile.objects.filter(project_id__in=_project_ids(user, project)).select_related(
        "project"
    )
    for lookup in ({"path": file}, {"module": file}, {"path__endswith": "/" + file}):
        found = files.filter(**lookup).order_by("path", "project_id").first()
        if found is not None:
            return found
    raise NotFound(f"No file '{file}' in the visible code projects.")


def _import_hits(queryset: QuerySet[ImportRef]) -> list[ImportHit]:
    rows = queryset.values_list(
        "file__path", "line", "module", "name", "alias", "target_file__path"
    )
    return [
        ImportHit(path, line, module, name, alias, target or "")
        for path, line, module, name, alias, target in rows
    ]


def file_imports(*, user, file: str, project: str | int | None = None) -> FileImports:
    """What a file imports (resolved to project files where possible) and which files
    of its project import it."""
    found = source_file_find(user=user, file=file, project=project)
    imports = _import_hits(ImportRef.objects.filter(file=found).order_by("line", "pk"))
    importers = _import_hits(
        ImportRef.objects.filter(target_file=found).order_by("file__path", "line", "pk")
    )
    return FileImports(file=found, project=found.project.name, imports=imports, importers=importers)


# --- Stats ------------------------------------------------------------------------------------


def code_project_counts(code_project: CodeProject) -> dict[str, Any]:
    """A project's scan state and its file, symbol, import and call counts, in total and
    per language."""
    p = code_project
    return {
        "state": p.state,
        "files": p.file_count,
        "skipped": p.skipped_count,
        "symbols": p.symbol_count,
        "imports": p.import_count,
        "calls": p.call_count,
        "languages": [
            {"language": language, **counts}
            for language, counts in sorted(p.language_counts.items())
        ],
    }


def code_project_as_dict(code_project: CodeProject) -> dict[str, Any]:
    """A project as the API shows it: where it is, who reads it, its scan and counts."""
    p = code_project
    return {
        "id": p.pk,
        "name": p.name,
        "root_path": p.root_path,
        "owner": p.owner.get_username(),
        "visibility": p.visibility,
        "team": p.team.name if p.team_id else None,
        "project": p.project,
        "files_total": p.files_total,
        "files_done": p.files_done,
        "progress": p.progress_percent,
        "started_at": p.started_at,
        "finished_at": p.finished_at,
        "error": p.error,
        "warning": p.warning,
        **code_project_counts(p),
    }


def code_project_stats(*, user, project: str | int | None = None) -> list[dict]:
    """Per visible project: per-language file and symbol counts and totals."""
    projects = code_projects_selected(user=user, project=project).order_by("name", "pk")
    return [{"project_id": p.pk, "project": p.name, **code_project_counts(p)} for p in projects]


def code_project_index_counts(*, project_id: int) -> dict[str, object]:
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


def code_project_export_owned(*, user) -> list[dict[str, Any]]:
    """The projects ``user`` owns, as metadata: where, who reads them, the last scan
    and its counts (not the indexed code)."""
    projects = CodeProject.objects.owned_by(user).select_related("team").order_by("pk")
    return [
        {
            "id": p.pk,
            "name": p.name,
            "root_path": p.root_path,
            "visibility": p.visibility,
            "team": p.team.name if p.team_id else None,
            "project": p.project,
            "settings": p.settings,
            "created_at": p.created_at.isoformat(),
            "finished_at": p.finished_at.isoformat() if p.finished_at else None,
            **code_project_counts(p),
        }
        for p in projects
    ]
