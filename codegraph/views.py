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
from memoryhub.errors import ApplicationError, NotFound
from teams.services import Actor

PAGE = "codegraph/index.html"


def _project_or_404(request: HttpRequest, project_id: int) -> CodeProject:
    try:
        return selectors.code_project_get_visible(user=request.user, project_id=project_id)
    except NotFound:
        raise Http404("No such code project.") from None


def _context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    return {
        "projects": selectors.code_project_list_visible(user=request.user),
        "form": extra.pop("form", None) or FolderForm(),
        "q": request.GET.get("q", ""),
        "mode": request.GET.get("mode", "fuzzy"),
        "project_filter": request.GET.get("project", ""),
        "symbol": request.GET.get("symbol", ""),
        "file": request.GET.get("file", ""),
        **extra,
    }


def _render(request: HttpRequest, partial: str, status: int = 200, **extra: Any) -> HttpResponse:
    template = f"{PAGE}#{partial}" if request.htmx else PAGE
    return render(request, template, _context(request, **extra), status=status)


@login_required
def index(request: HttpRequest) -> HttpResponse:
    return render(request, PAGE, _context(request))


@login_required
@require_POST
def add_folder(request: HttpRequest) -> HttpResponse:
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
        messages.success(request, f"Scanning {project.name}.")
        return redirect("codegraph")
    return render(request, PAGE, _context(request, form=form), status=400)


@login_required
def progress(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project_or_404(request, project_id)
    return render(request, f"{PAGE}#progress", {"p": project})


@login_required
@require_POST
def scan(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project_or_404(request, project_id)
    try:
        project = services.code_project_rescan(
            actor=Actor.from_request(request), code_project=project
        )
    except ApplicationError as exc:
        if request.htmx:
            return render(
                request,
                f"{PAGE}#progress",
                {"p": project, "p_error": exc.message},
                status=exc.status_code,
            )
        messages.error(request, exc.message)
        return redirect("codegraph")
    project.refresh_from_db()  # the scan may have run already (eager or a fast worker)
    if request.htmx:
        return render(request, f"{PAGE}#progress", {"p": project})
    return redirect("codegraph")


@login_required
@require_POST
def delete(request: HttpRequest, project_id: int) -> HttpResponse:
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
def search(request: HttpRequest) -> HttpResponse:
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
def callers(request: HttpRequest) -> HttpResponse:
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
def imports(request: HttpRequest) -> HttpResponse:
    return _guarded(
        request,
        "imports",
        lambda: selectors.file_imports(
            user=request.user,
            file=request.GET.get("file", ""),
            project=request.GET.get("project") or None,
        ),
    )
