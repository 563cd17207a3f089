"""Dashboard pages of the fact store: the Memory manager (browse, search, inline edit,
delete, charts, Test recall, embedding progress) and Settings -> Memory."""

from collections.abc import Iterable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from facts import selectors, services
from facts.forms import FactEditForm, FactFilterForm, MemoryConfigForm, RecallForm
from facts.models import Category, Fact
from facts.recall import fact_recall
from facts.tasks import facts_backfill_embeddings
from memoryhub.errors import ApplicationError, NotFound
from memoryhub.htmx import htmx_partial, htmx_render
from memoryhub.tasks import enqueue
from teams.services import Actor

PAGE_SIZE = 50
# Search results are ranked, not sorted: the best few hundred are all worth paging.
SEARCH_LIMIT = 500
# Sent after an edit or delete so the chart and the embedding card redraw themselves.
FACTS_CHANGED = "facts-changed"
# Sent after a delete so the list redraws itself: its count, its empty state, its pages.
FACTS_REMOVED = "facts-removed"
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


def _editable_ids(user: Any, facts: Iterable[Fact]) -> set[int]:
    """Ids of the facts ``user`` may edit, without a query per row: for someone else's
    row the answer of ``is_editable_by`` depends only on its visibility and team."""
    answers: dict[tuple[bool, str, int | None], bool] = {}
    editable = set()
    for fact in facts:
        key = (fact.owner_id == user.pk, fact.visibility, fact.team_id)
        if key not in answers:
            answers[key] = fact.is_editable_by(user)
        if answers[key]:
            editable.add(fact.pk)
    return editable


def _bars(rows: list[tuple[str, int]]) -> list[dict[str, Any]]:
    """Horizontal bar geometry for the inline SVG chart."""
    top = max((count for _, count in rows), default=0) or 1
    return [
        {
            "label": label,
            "count": count,
            "y": index * 24,
            "width": round(count / top * CHART_BAR_MAX, 1),
            "count_x": round(count / top * CHART_BAR_MAX + 134, 1),
        }
        for index, (label, count) in enumerate(rows)
    ]


def _chart_context(user: Any) -> dict[str, Any]:
    stats = selectors.fact_stats(user=user)
    layers = selectors.fact_layer_stats(user=user)
    by_category = _bars(
        [(label, stats["by_category"].get(value, 0)) for value, label in Category.choices]
    )
    by_layer = _bars([(row["name"], row["total"]) for row in layers])
    return {
        "stats": stats,
        "chart_by_category": by_category,
        "chart_by_layer": by_layer,
        "chart_category_height": len(by_category) * 24,
        "chart_layer_height": len(by_layer) * 24,
    }


def _embedding_progress(user: Any) -> dict[str, Any]:
    """Staff see the whole instance; everyone else their own facts."""
    config = services.memory_config_get()
    facts = Fact.objects.all()
    pending = services.facts_needing_embedding(config)
    if not user.is_staff:
        facts = facts.filter(owner=user)
        pending = pending.filter(owner=user)
    total = facts.count()
    waiting = pending.count()
    embedded = total - waiting
    enabled = config.embeddings_enabled
    return {
        "enabled": enabled,
        "model": services.embedder_model_id(config),
        "total": total,
        "embedded": embedded,
        "percent": round(embedded * 100 / total) if total else 100,
        "complete": not enabled or waiting == 0,
        "instance_wide": user.is_staff,
    }


@login_required
def fact_list_view(request: HttpRequest) -> HttpResponse:
    """The Memory manager: the visible facts, searched, filtered, sorted and paged."""
    form = FactFilterForm(request.GET)
    valid = form.is_valid()
    query = form.cleaned_data["q"].strip() if valid else ""
    sort = (form.cleaned_data["sort"] if valid else "") or "newest"
    facts: Any = []
    error = ""
    status = 200
    if not valid:
        error = " ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        status = 400
    else:
        try:
            if query:
                facts = selectors.fact_search(
                    user=request.user, query=query, limit=SEARCH_LIMIT, filters=form.filters()
                )
            else:
                facts = selectors.fact_list_visible(
                    user=request.user, filters=form.filters(), sort=sort
                )
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
    page = Paginator(facts, PAGE_SIZE).get_page(request.GET.get("page"))
    context: dict[str, Any] = {
        "form": form,
        "page": page,
        "error": error,
        "searching": bool(query),
        "search_limit": SEARCH_LIMIT,
        "sort": sort,
        "editable_ids": _editable_ids(request.user, page),
    }
    if htmx_partial(request):
        return htmx_render(
            request, "facts/index.html", context, partial="fact-results", status=status
        )
    context |= _chart_context(request.user)
    context["progress"] = _embedding_progress(request.user)
    context["recall_form"] = RecallForm(auto_id="recall-%s")
    return htmx_render(request, "facts/index.html", context, status=status)


@login_required
def chart_view(request: HttpRequest) -> HttpResponse:
    """The counts chart alone, redrawn after edits."""
    return render(request, "facts/index.html#memory-chart", _chart_context(request.user))


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
                fact = services.fact_update(
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
        services.fact_delete(actor=Actor.from_request(request), fact=fact)
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
    config = services.memory_config_get()
    chat_model = selectors.chat_model_status(config=config)
    form = MemoryConfigForm(request.POST or None, instance=config)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                services.memory_config_update(
                    actor=Actor.from_request(request), changes=form.cleaned_data
                )
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
