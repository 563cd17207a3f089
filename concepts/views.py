"""The Knowledge graph page: the visible graph drawn force-directed, an entity's panel
(relations and source facts), a build with progress, and the alias table."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from concepts import selectors, services
from concepts.models import ENTITY_TYPES
from memoryhub.engine.errors import ApplicationError, NotFound
from memoryhub.engine.htmx import htmx_render
from teams.services import Actor

PAGE = "concepts/graph.html"
# Facts quoted under each relation of the entity panel; the rest are linked.
FACTS_PER_RELATION = 5


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return -1  # out of every range: the selector says which


def _context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    stats = selectors.concept_stats(user=request.user)
    return {
        "stats": stats,
        "types": ENTITY_TYPES,
        "relations": list(stats["by_relation"]),
        "aliases": selectors.concept_aliases_visible(user=request.user).select_related("team"),
        **extra,
    }


@login_required
@require_GET
def graph_view(request: HttpRequest) -> HttpResponse:
    """The page; its script fetches the graph from ``graph_data_view``."""
    return render(request, PAGE, _context(request))


@login_required
@require_GET
def graph_data_view(request: HttpRequest) -> JsonResponse:
    """The nodes (with positions) and edges the page draws, as JSON."""
    try:
        data = selectors.concept_graph_view(
            user=request.user,
            center=request.GET.get("center") or None,
            ref=request.GET.get("ref") or None,
            hops=_int(request.GET.get("hops"), 2),
            type=request.GET.get("type") or None,
            relation=request.GET.get("relation") or None,
            limit=_int(request.GET.get("limit"), 500),
        )
    except ApplicationError as exc:
        return JsonResponse({"detail": exc.message}, status=exc.status_code)
    return JsonResponse(data)


@login_required
@require_GET
def graph_stats_view(request: HttpRequest) -> HttpResponse:
    """The graph's card on the Memory manager: entities by type and relations the user
    sees (loaded after the page, so a large graph never holds the page up)."""
    stats = selectors.concept_stats(user=request.user)
    return render(request, "concepts/_stats.html", {"stats": stats, "loaded": True})


@login_required
@require_GET
def graph_entity_view(request: HttpRequest, ref: str) -> HttpResponse:
    """The side panel of one entity (by its ref): its relations, each with the facts that
    state it, and the facts that mention it."""
    try:
        entity = selectors.concept_entity_get_visible(user=request.user, ref=ref)
    except NotFound:
        raise Http404("No such entity.") from None
    relations = selectors.concept_relations(user=request.user, entity=entity, limit=100)
    texts = selectors.concept_relation_facts(user=request.user, relations=relations)
    for relation in relations:
        facts = [{"id": i, "content": texts[i]} for i in relation["source_fact_ids"] if i in texts]
        relation["facts"], relation["more"] = facts[:FACTS_PER_RELATION], facts[FACTS_PER_RELATION:]
    sources = selectors.concept_entity_sources(user=request.user, entity=entity, limit=50)
    context = {"entity": entity, "relations": relations, "sources": sources}
    return render(request, "concepts/_entity.html", context)


@login_required
@require_POST
def graph_build_view(request: HttpRequest) -> HttpResponse:
    """Start a build; the answer is its progress card."""
    try:
        job = services.concept_graph_build_request(actor=Actor.from_request(request))
    except ApplicationError as exc:
        return HttpResponse(format_html('<p class="error">{}</p>', exc.message), status=400)
    return render(request, "_job.html", {"job": job})


@login_required
@require_POST
def alias_create_view(request: HttpRequest) -> HttpResponse:
    error, status = "", 200
    try:
        services.concept_alias_create(
            actor=Actor.from_request(request),
            alias=request.POST.get("alias", ""),
            target=request.POST.get("target", ""),
            visibility=request.POST.get("visibility") or None,
        )
    except ApplicationError as exc:
        error, status = exc.message, exc.status_code
    return htmx_render(
        request,
        PAGE,
        _context(request, alias_error=error, alias_form=request.POST if error else {}),
        partial="aliases",
        status=status,
    )


@login_required
@require_POST
def alias_delete_view(request: HttpRequest, alias_id: int) -> HttpResponse:
    error = ""
    try:
        services.concept_alias_delete(actor=Actor.from_request(request), alias_id=alias_id)
    except NotFound:
        raise Http404("No such alias.") from None
    except ApplicationError as exc:
        error = exc.message
    return htmx_render(
        request,
        PAGE,
        _context(request, alias_error=error),
        partial="aliases",
        status=403 if error else 200,
    )
