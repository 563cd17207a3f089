"""Dashboard pages of the wiki: the list with search and filters, a page with its
findings, the editor with live preview, history and diff, and the review queue."""

import contextlib
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from memoryhub.engine.errors import ApplicationError, NotFound
from memoryhub.engine.htmx import htmx_render
from memoryhub.engine.rendering import snippet_html
from teams.services import Actor
from wiki import selectors, services
from wiki.forms import PageFilterForm, PageForm
from wiki.models import MAX_CONTENT_CHARS, Kind, Page, PageRevision
from wiki.rendering import dangerous_urls, highlight_findings, render_markdown

PAGE_SIZE = 50
SEARCH_LIMIT = 200


def _page_or_404(request: HttpRequest, page_id: int) -> Page:
    try:
        return selectors.wiki_page_get_visible(user=request.user, page_id=page_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


@login_required
def page_list_view(request: HttpRequest) -> HttpResponse:
    """Visible pages: searched (best first) or listed (latest change first), filtered by
    tag, kind and project."""
    form = PageFilterForm(request.GET)
    found: Any = []
    error, status, searching = "", 200, False
    if form.is_valid():
        query = form.cleaned_data["q"].strip()
        searching = bool(query)
        try:
            if searching:
                found = selectors.wiki_page_search(
                    user=request.user,
                    query=query,
                    limit=SEARCH_LIMIT,
                    filters=form.filters(),
                    mode=form.cleaned_data["mode"],
                )
            else:
                found = selectors.wiki_page_list_visible(user=request.user, filters=form.filters())
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
    else:
        error = " ".join(f"{name}: {' '.join(errs)}" for name, errs in form.errors.items())
        status = 400
    page_obj = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [
        {"page": item.page, "snippet": snippet_html(item.snippet)}
        if searching
        else {"page": item, "snippet": ""}
        for item in page_obj
    ]
    context = {
        "form": form,
        "page_obj": page_obj,
        "rows": rows,
        "error": error,
        "searching": searching,
        "review_count": selectors.wiki_review_queue(user=request.user).count(),
    }
    return htmx_render(request, "wiki/index.html", context, partial="page-results", status=status)


def _page_context(request: HttpRequest, page: Page) -> dict[str, Any]:
    # A flagged page's links and images that its findings name are not followed by
    # people either: they render as marked text.
    inert = dangerous_urls(page.content, page.findings) if page.flagged else {}
    can_review = page.withheld_from_agents and page.can_be_reviewed_by(request.user)
    refusal = page.own_text_refusal(request.user) if can_review else ""
    return {
        "page": page,
        "html": render_markdown(page.content, inert=inert),
        "inert_count": len(inert),
        "source": highlight_findings(page.content, page.findings) if page.findings else "",
        "editable": page.can_be_edited_by(request.user),
        "manageable": page.is_editable_by(request.user),
        "editors": page.editors_description(),
        "can_review": can_review,
        "can_approve": can_review and not refusal,
        "approval_refusal": refusal,
        "revision_count": page.revisions.count(),
    }


@login_required
def page_view(request: HttpRequest, page_id: int) -> HttpResponse:
    """One page rendered, with its scanner findings highlighted in the source."""
    page = _page_or_404(request, page_id)
    return render(request, "wiki/page.html", _page_context(request, page))


def _editor(request: HttpRequest, page: Page | None) -> HttpResponse:
    if page is not None and not page.can_be_edited_by(request.user):
        raise Http404(page.editors_description())
    initial: dict[str, Any] = {}
    if page is not None:
        initial = {
            "title": page.title,
            "content": page.content,
            "tags": ", ".join(page.tags),
            "kind": page.kind,
            "project": page.project,
            "visibility": page.visibility,
        }
    form = PageForm(request.POST or None, initial=initial)
    # Who may read the page is for those who manage it; team members edit the text.
    scope_locked = page is not None and not page.is_editable_by(request.user)
    if scope_locked:
        form.fields["visibility"].disabled = True
    if page is not None and page.kind not in Kind.values:
        # Imported pages may carry a kind of their own; keep it selectable.
        form.fields["kind"].widget.choices = [*Kind.choices, (page.kind, page.kind)]
    status = 200
    existing = None
    if request.method == "POST":
        status = 400
        if form.is_valid():
            arguments = form.upsert_arguments()
            write = services.wiki_page_create
            if page is not None:
                # The title and project name the page: an edit keeps them (a changed
                # title would be a new page under upsert-by-title).
                arguments |= {"title": page.title, "project": page.project}
                write = services.wiki_page_upsert
            try:
                result = write(actor=Actor.from_request(request), **arguments)
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
                # A title that names a page already: the error links to it.
                if page is None and "page_id" in exc.extra:
                    with contextlib.suppress(NotFound):  # deleted meanwhile
                        existing = selectors.wiki_page_get_visible(
                            user=request.user, page_id=exc.extra["page_id"]
                        )
            else:
                if not result.changed:
                    messages.info(request, "Nothing changed.")
                elif result.page.flagged and not result.page.is_approved:
                    messages.warning(
                        request,
                        "Saved. The scanner flagged this page: agents "
                        "will not see it until someone approves it.",
                    )
                else:
                    messages.success(request, "Saved.")
                return redirect("wiki-page", page_id=result.page.pk)
    preview = render_markdown(form["content"].value() or "")
    return render(
        request,
        "wiki/edit.html",
        {
            "form": form,
            "page": page,
            "preview": preview,
            "max_chars": MAX_CONTENT_CHARS,
            "scope_locked": scope_locked,
            "existing": existing,
        },
        status=status,
    )


@login_required
def page_new_view(request: HttpRequest) -> HttpResponse:
    """The editor for a new page; a title that already names a page in the project is
    refused with a link to that page."""
    return _editor(request, None)


@login_required
def page_edit_view(request: HttpRequest, page_id: int) -> HttpResponse:
    """The editor for an existing page."""
    return _editor(request, _page_or_404(request, page_id))


@login_required
@require_POST
def preview_view(request: HttpRequest) -> HttpResponse:
    """The live preview: Markdown rendered and sanitised exactly as the page will be."""
    content = request.POST.get("content", "")
    if len(content) > MAX_CONTENT_CHARS:
        return render(
            request,
            "wiki/edit.html#preview",
            {
                "preview": "",
                "preview_error": f"Content is {len(content)} characters; the maximum is "
                f"{MAX_CONTENT_CHARS}.",
            },
            status=400,
        )
    return render(request, "wiki/edit.html#preview", {"preview": render_markdown(content)})


@login_required
def page_history_view(request: HttpRequest, page_id: int) -> HttpResponse:
    """Every saved revision of a page, newest first, with a form to diff two."""
    page = _page_or_404(request, page_id)
    revisions = list(selectors.wiki_revision_list(page=page))
    return render(
        request,
        "wiki/history.html",
        {"page": page, "revisions": revisions, "editable": page.can_be_edited_by(request.user)},
    )


@login_required
@require_POST
def revision_restore_view(request: HttpRequest, page_id: int, number: int) -> HttpResponse:
    """Put an old revision's text back as a new revision."""
    page = _page_or_404(request, page_id)
    try:
        revision = services.wiki_page_revision_restore(
            actor=Actor.from_request(request), page=page, number=number
        )
    except NotFound as exc:
        raise Http404(exc.message) from None
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("wiki-history", page_id=page.pk)
    messages.success(request, f"Restored r{number} as r{revision.number}.")
    return redirect("wiki-page", page_id=page.pk)


@login_required
def revision_diff_view(request: HttpRequest, page_id: int) -> HttpResponse:
    """A line diff between two revisions (``?old=N&new=M``; default: the last two)."""
    page = _page_or_404(request, page_id)
    numbers = list(page.revisions.order_by("-number").values_list("number", flat=True)[:2])
    try:
        new = int(request.GET.get("new") or (numbers[0] if numbers else 0))
        old = int(request.GET.get("old") or (numbers[-1] if numbers else 0))
        lines = selectors.wiki_revision_diff(page=page, old=old, new=new)
    except ValueError:
        raise Http404("Revisions are numbers.") from None
    except NotFound as exc:
        raise Http404(exc.message) from None
    return render(request, "wiki/diff.html", {"page": page, "old": old, "new": new, "lines": lines})


@login_required
def review_queue_view(request: HttpRequest) -> HttpResponse:
    """The review queue: flagged pages agents cannot read until someone approves them."""
    pages = list(selectors.wiki_review_queue(user=request.user))
    # Every page here is one the user reviews; those whose text they saved need
    # someone else to approve them.
    editors = PageRevision.objects.text_editor_ids(p.pk for p in pages)
    rows = [
        {
            "page": p,
            "source": highlight_findings(p.content, p.findings),
            "refusal": p.own_text_refusal(request.user, editor_ids=editors.get(p.pk, set())),
        }
        for p in pages
    ]
    return render(request, "wiki/review.html", {"rows": rows})


def _approval_confirmation(
    request: HttpRequest, page: Page, *, error: str = "", status: int = 200
) -> HttpResponse:
    revision = selectors.wiki_revision_list(page=page).first()
    back_to = request.POST.get("next") or request.GET.get("next")
    return render(
        request,
        "wiki/approve.html",
        {
            "page": page,
            "revision": revision,
            "source": highlight_findings(page.content, page.findings),
            "can_approve": status != 403 and page.withheld_from_agents,
            "next": "review" if back_to == "review" else "",
            "error": error,
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def page_approve_view(request: HttpRequest, page_id: int) -> HttpResponse:
    """Approve a flagged page in two steps: a confirmation that lists the findings the
    approval overrides (GET), then the approval of the version read there (POST)."""
    page = _page_or_404(request, page_id)
    confirmed = request.method == "POST" and "version" in request.POST
    if not page.withheld_from_agents and not confirmed:
        messages.info(request, f"“{page.title}” is not waiting for approval.")
        return redirect("wiki-page", page_id=page.pk)
    refusal = page.approval_refusal(request.user)
    if refusal:
        return _approval_confirmation(request, page, error=refusal, status=403)
    if confirmed:
        try:
            services.wiki_page_approve(
                actor=Actor.from_request(request), page=page, version=request.POST["version"]
            )
        except NotFound as exc:
            raise Http404(exc.message) from None
        except ApplicationError as exc:
            # Shown again as it is now, to be read before approving.
            page = _page_or_404(request, page_id)
            return _approval_confirmation(request, page, error=exc.message, status=exc.status_code)
        messages.success(request, f"Approved “{page.title}”: agents can now read it.")
        if request.POST.get("next") == "review":
            return redirect("wiki-review")
        return redirect("wiki-page", page_id=page.pk)
    if request.method == "POST":
        # A post that did not come from the confirmation: ask for it.
        return _approval_confirmation(
            request, page, error="Confirm the approval below.", status=400
        )
    return _approval_confirmation(request, page)


@login_required
@require_POST
def page_reject_view(request: HttpRequest, page_id: int) -> HttpResponse:
    """Refuse a flagged page's text: its last clean revision comes back, or it goes."""
    page = _page_or_404(request, page_id)
    try:
        rejection = services.wiki_page_reject(actor=Actor.from_request(request), page=page)
    except NotFound as exc:
        raise Http404(exc.message) from None
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("wiki-page", page_id=page.pk)
    if rejection.deleted:
        messages.success(
            request,
            f"Rejected “{rejection.title}”: no revision of it passed the scanner, "
            "so it was deleted.",
        )
    else:
        messages.success(
            request,
            f"Rejected “{rejection.title}”: r{rejection.restored_from}, the last revision "
            f"the scanner passed, is back as r{rejection.revision}.",
        )
    if request.POST.get("next") == "review" or rejection.deleted:
        return redirect("wiki-review")
    return redirect("wiki-page", page_id=page.pk)


@login_required
@require_POST
def page_delete_view(request: HttpRequest, page_id: int) -> HttpResponse:
    page = _page_or_404(request, page_id)
    try:
        services.wiki_page_delete(actor=Actor.from_request(request), page=page)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("wiki-page", page_id=page.pk)
    messages.success(request, f"Deleted “{page.title}”.")
    return redirect("wiki")
