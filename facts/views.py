"""Dashboard pages of the fact store: the Memory manager (browse, search, inline edit,
delete, charts, Test recall, embedding progress) and Settings -> Memory."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from facts import selectors
from facts.forms import (
    BulkForm,
    FactCreateForm,
    FactEditForm,
    FactFilterForm,
    FactTagsForm,
    MemoryConfigForm,
    RecallForm,
)
from facts.models import Category, Fact
from facts.recall import fact_recall
from facts.services.config import memory_config_update
from facts.services.create import fact_create
from facts.services.curation import UNDO_SECONDS, BulkOutcome, facts_bulk_change, facts_bulk_undo
from facts.services.update import fact_delete, fact_update
from facts.tasks import facts_backfill_embeddings
from memoryhub.engine.config import chat_model_status, memory_config_get
from memoryhub.engine.errors import ApplicationError, NotFound
from memoryhub.engine.htmx import htmx_partial, htmx_render
from memoryhub.engine.rendering import snippet_html
from memoryhub.engine.tasks import enqueue
from teams.selectors import memberships_of
from teams.services import Actor

PAGE_SIZE = 50
# Search results are ranked, not sorted: the best few hundred are all worth paging.
SEARCH_LIMIT = 500
# Sent after an edit or delete so the chart and the embedding card redraw themselves.
FACTS_CHANGED = "facts-changed"
# Sent after a delete so the list redraws itself: its count, its empty state, its pages.
FACTS_REMOVED = "facts-removed"
# Sent after a fact is added or many are changed: the list reloads too.
FACTS_RELOAD = "facts-reload"
CHART_BAR_MAX = 240.0


def _fact_or_404(request: HttpRequest, fact_id: int) -> Fact:
    try:
        return selectors.fact_get_visible(user=request.user, fact_id=fact_id)
    except NotFound as exc:
        raise Http404(exc.message) from None


def _edit_form(fact: Fact, data: Any = None) -> FactEditForm:
    """The edit form of one fact; ids carry the fact id since several rows can be open."""
    initial = {
        "content": fact.content,
        "category": fact.category,
        "importance": fact.importance,
        "visibility": fact.visibility,
    }
    return FactEditForm(data, initial=initial, auto_id=f"fact-{fact.pk}-%s")


def _bars(rows: list[tuple[str, int, str]]) -> list[dict[str, Any]]:
    """Horizontal bar geometry for the inline SVG chart; each bar links to the list
    filtered by what it counts (``query``)."""
    top = max((count for _, count, _ in rows), default=0) or 1
    return [
        {
            "label": label,
            "count": count,
            "query": query,
            "y": index * 24,
            "width": round(count / top * CHART_BAR_MAX, 1),
            "count_x": round(count / top * CHART_BAR_MAX + 134, 1),
        }
        for index, (label, count, query) in enumerate(rows)
    ]


def _chart_context(user: Any) -> dict[str, Any]:
    stats = selectors.fact_stats(user=user)
    layers = selectors.fact_layer_stats(user=user)
    by_category = _bars(
        [
            (label, stats["by_category"].get(value, 0), urlencode({"category": value}))
            for value, label in Category.choices
        ]
    )
    by_layer = _bars(
        [(row["name"], row["total"], urlencode({"layer": row["layer"]})) for row in layers]
    )
    return {
        "stats": stats,
        "chart_by_category": by_category,
        "chart_by_layer": by_layer,
        "chart_category_height": len(by_category) * 24,
        "chart_layer_height": len(by_layer) * 24,
    }


def _embedding_progress(user: Any) -> dict[str, Any]:
    """How many active facts have their vector: staff see the whole instance, everyone
    else their own facts."""
    return selectors.fact_embedding_progress(user=user, instance=user.is_staff)


def _results_context(request: HttpRequest) -> tuple[dict[str, Any], int]:
    """The list part of the Memory manager for the filters in the query string."""
    teams = list(
        Group.objects.filter(memberships__user=request.user)
        .order_by("name")
        .values_list("pk", "name")
    )
    form = FactFilterForm(request.GET, teams=teams)
    valid = form.is_valid()
    query = form.cleaned_data["q"].strip() if valid else ""
    sort = (form.cleaned_data["sort"] if valid else "") or "newest"
    facts: Any = []
    error = ""
    status = 200
    mode = ""
    if not valid:
        error = " ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        status = 400
    else:
        try:
            if query:
                found = selectors.fact_search(
                    user=request.user,
                    query=query,
                    limit=SEARCH_LIMIT,
                    filters=form.filters(),
                    mode=form.cleaned_data["mode"],
                )
                mode = found.mode
                facts = found.hits
            else:
                facts = selectors.fact_list_visible(
                    user=request.user, filters=form.filters(), sort=sort
                )
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
    page = Paginator(facts, PAGE_SIZE).get_page(request.GET.get("page"))
    if query:
        rows = []
        for hit in page:
            hit.fact.snippet = snippet_html(hit.snippet) if hit.snippet else ""
            rows.append(hit.fact)
    else:
        rows = list(page)
    context: dict[str, Any] = {
        "form": form,
        "page": page,
        "rows": rows,
        "error": error,
        "searching": bool(query),
        "search_mode": mode,
        "search_limit": SEARCH_LIMIT,
        "sort": sort,
        "editable_ids": selectors.fact_ids_editable(user=request.user, facts=rows),
        "bulk_form": BulkForm(auto_id="bulk-%s"),
    }
    return context, status


def _create_form(request: HttpRequest, data: Any = None) -> FactCreateForm:
    teams = [(m.team_id, m.team.name) for m in memberships_of(user=request.user)]
    return FactCreateForm(data, teams=teams)


@login_required
def fact_list_view(request: HttpRequest) -> HttpResponse:
    """The Memory manager: the visible facts, searched, filtered, sorted and paged."""
    context, status = _results_context(request)
    if htmx_partial(request):
        return htmx_render(
            request, "facts/index.html", context, partial="fact-results", status=status
        )
    return htmx_render(request, "facts/index.html", _page_context(request, context), status=status)


def _page_context(request: HttpRequest, results: dict[str, Any]) -> dict[str, Any]:
    """The whole Memory manager around its list."""
    return {
        **results,
        **_chart_context(request.user),
        "progress": _embedding_progress(request.user),
        "recall_form": RecallForm(auto_id="recall-%s"),
        "create_form": _create_form(request),
    }


@login_required
@require_POST
def fact_create_view(request: HttpRequest) -> HttpResponse:
    """Add a fact through ``fact_create``, as POST /api/memories does: saved as a new
    fact, or merged into the near-duplicate it repeats (the message says which)."""
    form = _create_form(request, request.POST)
    status = 400
    saved = ""
    if form.is_valid():
        try:
            result = fact_create(actor=Actor.from_request(request), data=form.fact_data())
        except ApplicationError as exc:
            form.add_error(None, exc.message)
            status = exc.status_code
        else:
            saved = (
                f"Saved as #{result.fact.pk}."
                if result.created
                else f"Merged into #{result.fact.pk}, which now says what you wrote."
            )
            if not htmx_partial(request):
                messages.success(request, saved)
                return redirect("memory")
            response = render(
                request,
                "facts/index.html#add-fact",
                {"create_form": _create_form(request), "saved": saved, "saved_fact": result.fact},
            )
            return trigger_client_event(response, FACTS_RELOAD)
    if htmx_partial(request):
        return htmx_render(
            request, "facts/index.html#add-fact", {"create_form": form}, status=status
        )
    context = _page_context(request, _results_context(request)[0])
    context["create_form"] = form
    return render(request, "facts/index.html", context, status=status)


def _bulk_message(outcome: BulkOutcome) -> str:
    done = {
        "delete": "Deleted",
        "archive": "Archived",
        "visibility": "Changed the visibility of",
        "category": "Changed the category of",
    }[outcome.action]
    changed = len(outcome.changed)
    parts = [f"{done} {changed} fact{'' if changed == 1 else 's'}."]
    if outcome.unchanged:
        parts.append(f"{len(outcome.unchanged)} already so.")
    if outcome.refused:
        reason = "; ".join(outcome.reasons)
        parts.append(f"{len(outcome.refused)} refused: {reason}.")
    return " ".join(parts)


@login_required
@require_POST
def fact_bulk_view(request: HttpRequest) -> HttpResponse:
    """Delete, archive or re-label the ticked facts; the answer says how many changed
    and how many were refused, with an Undo for a delete or archive."""
    form = BulkForm(request.POST)
    context: dict[str, Any] = {}
    status = 200
    if not form.is_valid():
        context["notice_error"] = " ".join(" ".join(e) for e in form.errors.values())
        status = 400
    else:
        action, value = form.change()
        try:
            outcome = facts_bulk_change(
                actor=Actor.from_request(request),
                fact_ids=form.cleaned_data["ids"],
                action=action,
                value=value,
            )
        except ApplicationError as exc:
            context["notice_error"] = exc.message
            status = exc.status_code
        else:
            context["notice"] = _bulk_message(outcome)
            context["undo"] = outcome.undo
            if not outcome.changed and outcome.refused:
                status = 403
    if not htmx_partial(request):
        if "notice" in context:
            messages.success(request, context["notice"])
        else:
            messages.error(request, context["notice_error"])
        return redirect("memory")
    context["undo_seconds"] = UNDO_SECONDS
    response = htmx_render(request, "facts/index.html#memory-notice", context, status=status)
    return trigger_client_event(response, FACTS_RELOAD) if status == 200 else response


@login_required
@require_POST
def fact_undo_view(request: HttpRequest, undo_id: int) -> HttpResponse:
    """Take back a delete or archive of many facts, within its few seconds."""
    context: dict[str, Any] = {}
    status = 200
    try:
        outcome = facts_bulk_undo(actor=Actor.from_request(request), undo_id=undo_id)
    except ApplicationError as exc:
        context["notice_error"] = exc.message
        status = exc.status_code
    else:
        restored = len(outcome.restored)
        note = f"Restored {restored} fact{'' if restored == 1 else 's'}."
        if outcome.skipped:
            note += f" {len(outcome.skipped)} left as they are (changed or no longer yours)."
        context["notice"] = note
    if not htmx_partial(request):
        if "notice" in context:
            messages.success(request, context["notice"])
        else:
            messages.error(request, context["notice_error"])
        return redirect("memory")
    response = htmx_render(request, "facts/index.html#memory-notice", context, status=status)
    return trigger_client_event(response, FACTS_RELOAD) if status == 200 else response


@login_required
def fact_tags_view(request: HttpRequest, fact_id: int) -> HttpResponse:
    """A fact's tags in its row: GET ``?edit=1`` the inline editor, GET the badges
    (Cancel), POST save them through ``fact_update``."""
    fact = _fact_or_404(request, fact_id)
    editable = fact.is_editable_by(request.user)
    context: dict[str, Any] = {"fact": fact, "editable_ids": {fact.pk} if editable else set()}
    if request.method == "POST":
        if not editable:
            raise PermissionDenied("Only the owner (or an admin of its team) can edit this fact.")
        form = FactTagsForm(request.POST, auto_id=f"fact-{fact.pk}-%s")
        status = 400
        if form.is_valid():
            try:
                fact = fact_update(
                    actor=Actor.from_request(request),
                    fact=fact,
                    changes={"tags": form.cleaned_data["tags"].split(",")},
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                if not htmx_partial(request):
                    messages.success(request, "Tags saved.")
                    return redirect("memory")
                context["fact"] = fact
                response = htmx_render(request, "facts/index.html#fact-tags", context)
                return trigger_client_event(response, FACTS_CHANGED)
        if not htmx_partial(request):
            messages.error(request, " ".join(" ".join(e) for e in form.errors.values()))
            return redirect("memory")
        context["tags_form"] = form
        return htmx_render(request, "facts/index.html#fact-tags-edit", context, status=status)
    if not htmx_partial(request):
        return redirect("memory-fact", fact.pk)
    if request.GET.get("edit") and editable:
        initial = {"tags": ", ".join(fact.tags)}
        context["tags_form"] = FactTagsForm(initial=initial, auto_id=f"fact-{fact.pk}-%s")
        return htmx_render(request, "facts/index.html#fact-tags-edit", context)
    return htmx_render(request, "facts/index.html#fact-tags", context)


@login_required
def chart_view(request: HttpRequest) -> HttpResponse:
    """The counts chart alone, redrawn after edits."""
    return htmx_render(request, "facts/index.html#memory-chart", _chart_context(request.user))


@login_required
def fact_view(request: HttpRequest, fact_id: int) -> HttpResponse:
    """One fact: its table row for HTMX (Cancel of an inline edit), else its page."""
    fact = _fact_or_404(request, fact_id)
    editable = fact.is_editable_by(request.user)
    if htmx_partial(request):
        return htmx_render(
            request,
            "facts/index.html#fact-row",
            {"fact": fact, "editable_ids": {fact.pk} if editable else set()},
        )
    sources, derivatives = selectors.fact_lineage_visible(user=request.user, fact=fact)
    context = {"fact": fact, "editable": editable, "form": _edit_form(fact)}
    context.update(sources=sources, derivatives=derivatives)
    return htmx_render(request, "facts/fact.html", context)


@login_required
def fact_edit_view(request: HttpRequest, fact_id: int) -> HttpResponse:
    """GET: the edit form (a table row for HTMX). POST: save through ``fact_update``."""
    fact = _fact_or_404(request, fact_id)
    if request.method != "POST":
        if not fact.is_editable_by(request.user):
            message = "Only the owner (or an admin of its team) can edit this fact."
            if htmx_partial(request):
                return htmx_render(
                    request,
                    "facts/index.html#fact-row",
                    {"fact": fact, "editable_ids": set(), "row_error": message},
                    status=403,
                )
            raise PermissionDenied(message)
        form = _edit_form(fact)
        status = 200
    else:
        form = _edit_form(fact, request.POST)
        status = 400
        if form.is_valid():
            try:
                fact = fact_update(
                    actor=Actor.from_request(request), fact=fact, changes=form.changes(fact)
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                if not htmx_partial(request):
                    messages.success(request, "Fact saved.")
                    return redirect("memory")
                response = htmx_render(
                    request, "facts/index.html#fact-row", {"fact": fact, "editable_ids": {fact.pk}}
                )
                return trigger_client_event(response, FACTS_CHANGED)
    if htmx_partial(request):
        return htmx_render(
            request, "facts/index.html#fact-edit-row", {"fact": fact, "form": form}, status=status
        )
    return htmx_render(
        request, "facts/fact.html", {"fact": fact, "form": form, "editable": True}, status=status
    )


@login_required
@require_POST
def fact_delete_view(request: HttpRequest, fact_id: int) -> HttpResponse:
    """Delete a fact; for HTMX the empty answer removes its row."""
    fact = _fact_or_404(request, fact_id)
    try:
        fact_delete(actor=Actor.from_request(request), fact=fact)
    except ApplicationError as exc:
        if htmx_partial(request):
            return htmx_render(
                request,
                "facts/index.html#fact-row",
                {"fact": fact, "editable_ids": set(), "row_error": exc.message},
                status=exc.status_code,
            )
        return render(
            request,
            "facts/fact.html",
            {"fact": fact, "editable": False, "error": exc.message},
            status=exc.status_code,
        )
    if htmx_partial(request):
        response = trigger_client_event(HttpResponse(""), FACTS_CHANGED)
        return trigger_client_event(response, FACTS_REMOVED)
    messages.success(request, "Fact deleted.")
    return redirect("memory")


@login_required
def recall_view(request: HttpRequest) -> HttpResponse:
    """Test recall: exactly what would be injected for a message, with the scores.
    Nothing is counted as an access."""
    form = RecallForm(request.POST or None, auto_id="recall-%s")
    result = None
    error = ""
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                result = fact_recall(
                    actor=Actor.from_request(request),
                    query=form.cleaned_data["query"],
                    project=form.cleaned_data["project"].strip() or None,
                    touch=False,
                )
            except ApplicationError as exc:
                error, status = exc.message, exc.status_code
        else:
            error = " ".join(" ".join(errors) for errors in form.errors.values())
            status = 400
    context = {
        "recall_form": form,
        "result": result,
        "recall_error": error,
        "recall_posted": request.method == "POST",
    }
    return htmx_render(
        request, "facts/recall.html", context, partial="recall-result", status=status
    )


@login_required
def embeddings_view(request: HttpRequest) -> HttpResponse:
    """The embedding backfill progress panel (polled while incomplete)."""
    return render(
        request,
        "facts/index.html#embedding-progress",
        {"progress": _embedding_progress(request.user)},
    )


@login_required
@require_POST
def backfill_view(request: HttpRequest) -> HttpResponse:
    """Queue the embedding backfill now (staff)."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can start the backfill.")
    queued = enqueue(facts_backfill_embeddings)
    note = (
        "Backfill queued."
        if queued
        else "The queue is unreachable; the periodic backfill will run later."
    )
    if htmx_partial(request):
        return htmx_render(
            request,
            "facts/index.html#embedding-progress",
            {"progress": _embedding_progress(request.user), "backfill_note": note},
        )
    (messages.success if queued else messages.error)(request, note)
    return redirect("memory")


@login_required
def settings_view(request: HttpRequest) -> HttpResponse:
    """Settings -> Memory: the instance's memory settings (staff)."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can change the memory settings.")
    config = memory_config_get()
    chat_model = chat_model_status(config=config)
    form = MemoryConfigForm(request.POST or None, instance=config)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                memory_config_update(actor=Actor.from_request(request), changes=form.cleaned_data)
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, "Memory settings saved.")
                return redirect("memory-settings")
        else:
            status = 400
    return render(
        request,
        "facts/settings.html",
        {"form": form, "groups": form.groups(), "chat_model": chat_model},
        status=status,
    )
