"""The CodeGraph dashboard: projects, add a folder, scan with live progress, symbol
search, callers, and a file's imports and importers."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from codegraph import selectors, services
from codegraph.forms import FolderForm
from codegraph.models import CodeProject
from memoryhub.engine.errors import ApplicationError, NotFound
from memoryhub.engine.htmx import htmx_partial, htmx_render
from teams.services import Actor

PAGE = "codegraph/index.html"


def _project_or_404(request: HttpRequest, project_id: int) -> CodeProject:
    try:
        return selectors.code_project_get_visible(user=request.user, project_id=project_id)
    except NotFound:
        raise Http404("No such code project.") from None


def _context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    projects = selectors.code_project_list_visible(user=request.user)
    return {
        "projects": projects,
        # Called by the template only where it draws the banner: a fragment such as the
        # symbol search answers without reading the projects.
        "scanning": lambda: [p for p in projects if p.is_active],
        "form": extra.pop("form", None) or FolderForm(),
        "q": request.GET.get("q", ""),
        "mode": request.GET.get("mode", "fuzzy"),
        "project_filter": request.GET.get("project", ""),
        "symbol": request.GET.get("symbol", ""),
        "file": request.GET.get("file", ""),
        **extra,
    }


def _render(request: HttpRequest, partial: str, status: int = 200, **extra: Any) -> HttpResponse:
    return htmx_render(request, PAGE, _context(request, **extra), partial=partial, status=status)


def _progress(
    request: HttpRequest, project: CodeProject, status: int = 200, **extra: Any
) -> HttpResponse:
    """A project's scan progress. Once its scan is over, the answer also brings the
    project's languages and the page's scan banner up to date (out of band): the poll
    stops with this swap, and nothing else would redraw them."""
    context: dict[str, Any] = {"p": project, **extra}
    if htmx_partial(request) and not project.is_active:
        projects = selectors.code_project_list_visible(user=request.user)
        context |= {"finished": project, "scanning": [p for p in projects if p.is_active]}
    return htmx_render(request, f"{PAGE}#progress", context, status=status)


@login_required
def project_list_view(request: HttpRequest) -> HttpResponse:
    """The projects with their languages and scans, and the symbol, callers and imports
    searches."""
    return htmx_render(request, PAGE, _context(request))


@login_required
@require_POST
def project_add_view(request: HttpRequest) -> HttpResponse:
    """Register a folder as a project and queue its first scan."""
    form = FolderForm(request.POST)
    if form.is_valid():
        try:
            project = services.code_project_scan_request(
                actor=Actor.from_request(request),
                name=form.cleaned_data["name"],
                path=form.cleaned_data["path"],
                visibility=form.cleaned_data["visibility"] or None,
            )
        except ApplicationError as exc:
            form.add_error(None, exc.message)
            return render(request, PAGE, _context(request, form=form), status=exc.status_code)
        # The page's scan banner follows the scan; this message stays true after it.
        messages.success(request, f"Added {project.name}.")
        return redirect("codegraph")
    return render(request, PAGE, _context(request, form=form), status=400)


@login_required
def project_progress_view(request: HttpRequest, project_id: int) -> HttpResponse:
    """The progress of a project's scan (polled while it is queued or running)."""
    return _progress(request, _project_or_404(request, project_id))


@login_required
@require_POST
def project_scan_view(request: HttpRequest, project_id: int) -> HttpResponse:
    """Scan a project again."""
    project = _project_or_404(request, project_id)
    try:
        project = services.code_project_rescan(
            actor=Actor.from_request(request), code_project=project
        )
    except ApplicationError as exc:
        if htmx_partial(request):
            return _progress(request, project, status=exc.status_code, p_error=exc.message)
        messages.error(request, exc.message)
        return redirect("codegraph")
    project.refresh_from_db()  # the scan may have run already (eager or a fast worker)
    if htmx_partial(request):
        return _progress(request, project)
    return redirect("codegraph")


@login_required
@require_POST
def project_delete_view(request: HttpRequest, project_id: int) -> HttpResponse:
    """Delete a project and its index."""
    project = _project_or_404(request, project_id)
    try:
        services.code_project_delete(actor=Actor.from_request(request), code_project=project)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Deleted {project.name} and its index.")
    return redirect("codegraph")


def _guarded(request: HttpRequest, partial: str, compute) -> HttpResponse:
    try:
        result = compute()
    except ApplicationError as exc:
        return _render(
            request, partial, status=exc.status_code, **{f"{partial}_error": exc.message}
        )
    return _render(request, partial, **{partial.replace("-", "_"): result})


@login_required
def symbol_search_view(request: HttpRequest) -> HttpResponse:
    """Symbols by name (fuzzy, exact or prefix)."""
    return _guarded(
        request,
        "symbols",
        lambda: selectors.symbol_find(
            user=request.user,
            query=request.GET.get("q", ""),
            project=request.GET.get("project") or None,
            mode=request.GET.get("mode", "fuzzy"),
            limit=50,
        ),
    )


@login_required
def symbol_callers_view(request: HttpRequest) -> HttpResponse:
    """The calls of a symbol."""
    return _guarded(
        request,
        "callers",
        lambda: selectors.symbol_callers(
            user=request.user,
            symbol=request.GET.get("symbol", ""),
            project=request.GET.get("project") or None,
        ),
    )


@login_required
def file_imports_view(request: HttpRequest) -> HttpResponse:
    """What a file imports and which files import it."""
    return _guarded(
        request,
        "imports",
        lambda: selectors.file_imports(
            user=request.user,
            file=request.GET.get("file", ""),
            project=request.GET.get("project") or None,
        ),
    )
