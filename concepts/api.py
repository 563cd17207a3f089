"""The concept graph's JSON API: build, query, paths, nodes, edges, stats, entities and
aliases. Everything it answers is computed from the facts the caller can see."""

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status

from concepts import selectors, services
from concepts.schemas import (
    AliasIn,
    AliasListOut,
    AliasOut,
    BuildIn,
    EdgeListOut,
    EntityDetailOut,
    JobRefOut,
    NodeListOut,
    PathOut,
    PathQuery,
    QueryOut,
    StatsOut,
)
from memoryhub.engine.paging import next_page_url, page_window_check
from teams.auth import read_auth, write_auth
from teams.services import Actor

router = Router(tags=["concept-graph"])


def _page(request: HttpRequest, items: list, count: int, *, limit: int, offset: int) -> dict:
    return {
        "items": items,
        "count": count,
        "next": next_page_url(request, limit=limit, offset=offset, count=count),
    }


@router.post("/build", response={202: JobRefOut}, auth=write_auth)
def build(request: HttpRequest, payload: BuildIn) -> Status:
    """Extract every fact you can see (of `project`) that the graph lacks or holds an
    older version of, as a job (`GET /api/jobs/{id}`). New and changed facts are also
    extracted as they are written."""
    job = services.concept_graph_build_request(
        actor=Actor.from_request(request), project=payload.project
    )
    return Status(202, {"job": job.pk})


@router.get("/query", response=QueryOut, auth=read_auth)
def query(
    request: HttpRequest,
    entity: str,
    relation: str | None = None,
    direction: str = "both",
    type: str | None = None,
    limit: int = 50,
    project: str | None = None,
) -> dict[str, Any]:
    """The relations an entity (by name or alias) takes part in: `direction` out (it is
    the subject), in (the object) or both; `relation` and `type` (of the other end)
    filter. Heaviest first: weight is the number of your visible facts stating it.
    404 for an entity no fact you can see mentions."""
    found = selectors.concept_entity_find_visible(user=request.user, name=entity, project=project)
    relations = selectors.concept_relations(
        user=request.user,
        entity=found,
        relation=relation,
        direction=direction,
        type=type,
        limit=limit,
        project=project,
    )
    return {"entity": found.as_dict(), "relations": relations}


@router.get("/path", response=PathOut, auth=read_auth)
def path(request: HttpRequest, params: Query[PathQuery]) -> dict[str, Any]:
    """The shortest paths between two entities of at most `max_hops` edges (1 to 6),
    following edges either way; `{"paths": []}` when none is that short."""
    start = selectors.concept_entity_find_visible(
        user=request.user, name=params.start, project=params.project
    )
    end = selectors.concept_entity_find_visible(
        user=request.user, name=params.to, project=params.project
    )
    paths = selectors.concept_paths(
        user=request.user,
        start=start,
        end=end,
        max_hops=params.max_hops,
        limit=params.limit,
        project=params.project,
    )
    return {"paths": paths}


@router.get("/nodes", response=NodeListOut, auth=read_auth)
def nodes(
    request: HttpRequest,
    type: str | None = None,
    q: str | None = None,
    project: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> dict[str, Any]:
    """Entities, most mentioned first; `q` matches names, `type` filters."""
    page_window_check(limit=limit, offset=offset)
    items, count = selectors.concept_nodes_visible(
        user=request.user, type=type, q=q, limit=limit, offset=offset, project=project
    )
    return _page(request, [i.as_dict() for i in items], count, limit=limit, offset=offset)


@router.get("/edges", response=EdgeListOut, auth=read_auth)
def edges(
    request: HttpRequest,
    relation: str | None = None,
    project: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> dict[str, Any]:
    """Edges (subject, relation, object), heaviest first, with their source facts."""
    page_window_check(limit=limit, offset=offset)
    items, count = selectors.concept_edges_visible(
        user=request.user, relation=relation, limit=limit, offset=offset, project=project
    )
    return _page(request, items, count, limit=limit, offset=offset)


@router.get("/stats", response=StatsOut, auth=read_auth)
def stats(request: HttpRequest, project: str | None = None) -> dict[str, Any]:
    """Nodes, edges, triples and facts of the graph you see; nodes by type, edges by
    relation."""
    return selectors.concept_stats(user=request.user, project=project)


@router.get("/entities/{entity_ref}", response=EntityDetailOut, auth=read_auth)
def entity(request: HttpRequest, entity_ref: str, limit: int = 50) -> dict[str, Any]:
    """One entity, by the `ref` the graph's answers give it: its relations and the facts
    that mention it (at most `limit` each). 404 for a ref no fact you can see
    mentions, and for anything else (an entity is never named by a number)."""
    page_window_check(limit=limit, offset=0)
    found = selectors.concept_entity_get_visible(user=request.user, ref=entity_ref)
    return {
        "entity": found.as_dict(),
        "relations": selectors.concept_relations(user=request.user, entity=found, limit=limit),
        "sources": selectors.concept_entity_sources(user=request.user, entity=found, limit=limit),
    }


def _alias_dict(alias: Any) -> dict[str, Any]:
    return {
        "id": alias.pk,
        "alias": alias.alias_name,
        "target": alias.target_name,
        "visibility": alias.visibility,
        "team": alias.team.name if alias.team_id else None,
    }


@router.get("/aliases", response=AliasListOut, auth=read_auth)
def aliases(request: HttpRequest, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """The aliases you can see."""
    page_window_check(limit=limit, offset=offset)
    rows = selectors.concept_aliases_visible(user=request.user).select_related("team")
    count = rows.count()
    items = [_alias_dict(a) for a in rows[offset : offset + limit]]
    return _page(request, items, count, limit=limit, offset=offset)


@router.post("/aliases", response={201: AliasOut}, auth=write_auth)
def alias_create(request: HttpRequest, payload: AliasIn) -> Status:
    """Merge the entity `alias` names into `target` for the facts of the alias's
    visibility (yours by default): a private alias for your private facts, a team
    alias for the team's facts, a global one for all. Your graph follows only the
    aliases you chose to trust, so a team alias takes an admin of the team and a
    global one staff: 403 for anyone else (add it as private)."""
    row = services.concept_alias_create(
        actor=Actor.from_request(request),
        alias=payload.alias,
        target=payload.target,
        visibility=payload.visibility,
        team=payload.team,
    )
    return Status(201, _alias_dict(row))


@router.delete("/aliases/{alias_id}", response={204: None}, auth=write_auth)
def alias_delete(request: HttpRequest, alias_id: int) -> Status:
    """Remove an alias you own (or a team alias, as an admin of its team)."""
    services.concept_alias_delete(actor=Actor.from_request(request), alias_id=alias_id)
    return Status(204, None)
