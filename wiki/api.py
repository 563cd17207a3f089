"""The wiki's JSON API: list, read, upsert, search, approve, delete and stats."""

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status

from memoryhub.engine.paging import next_page_url, page_window_check
from teams.auth import read_auth, write_auth
from teams.services import Actor
from wiki import selectors, services
from wiki.schemas import PageIn, PageListOut, PageOut, SearchOut, StatsOut

router = Router(tags=["wiki"])


class ListFilters(Schema):
    tag: str | None = None
    kind: str | None = None
    project: str | None = None
    visibility: str | None = None
    flagged: bool | None = None
    limit: int = 50
    offset: int = 0


@router.get("", response=PageListOut, auth=read_auth)
def list_pages(request: HttpRequest, filters: Query[ListFilters]) -> dict[str, Any]:
    """Visible pages, newest change first, filtered by tag, kind, project (content is
    left out: read a page for it)."""
    data = filters.dict()
    limit, offset = data.pop("limit"), data.pop("offset")
    page_window_check(limit=limit, offset=offset)
    if data.get("project") is None:
        data.pop("project", None)
    pages = selectors.wiki_page_list_visible(user=request.user, filters=data)
    if "project" in request.GET and request.GET["project"] == "":
        pages = pages.filter(project="")  # ?project= asks for the organisation pages
    count = pages.count()
    actor = Actor.from_request(request)
    items = [
        selectors.page_as_dict(p, actor=actor, content=False)
        for p in pages[offset : offset + limit]
    ]
    next_url = next_page_url(request, limit=limit, offset=offset, count=count)
    return {"items": items, "count": count, "next": next_url}


@router.put("", response={200: PageOut, 201: PageOut}, auth=write_auth)
def upsert_page(request: HttpRequest, payload: PageIn) -> Status:
    """Create a page (201) or update the page with the same title in the same project
    (200). A flagged page's content is not echoed back to an agent. 404 if the page was
    deleted while the edit was saved, 409 if it was made a page you may no longer edit
    (its owner made it private, say): nothing is saved."""
    actor = Actor.from_request(request)
    result = services.wiki_page_upsert(actor=actor, **payload.dict())
    # The page as this write left it: another request may change or delete it next.
    return Status(201 if result.created else 200, selectors.page_as_dict(result.page, actor=actor))


@router.get("/search", response=SearchOut, auth=read_auth)
def search_pages(
    request: HttpRequest,
    q: str,
    project: str | None = None,
    kind: str | None = None,
    tag: str | None = None,
    limit: int = 20,
    mode: str = "hybrid",
) -> dict[str, Any]:
    """Pages for a search in title, content or tags, best first (higher `score`), with
    snippets whose matches are marked ``[[``/``]]``. `mode=hybrid` (the default) reads a
    sentence: "who owns billing" finds what "owns billing" finds, and a page with a
    paragraph close in meaning (without a snippet); `mode=exact`: pages holding every
    word. Any text is a valid query."""
    actor = Actor.from_request(request)
    hits = selectors.wiki_page_search(
        user=request.user,
        query=q,
        limit=limit,
        filters={"project": project, "kind": kind, "tag": tag},
        mode=mode,
    )
    items = []
    for hit in hits:
        item = selectors.page_as_dict(hit.page, actor=actor, content=False)
        item["snippet"] = None if item["withheld"] else hit.snippet
        item["score"] = hit.score
        items.append(item)
    return {"items": items, "count": len(items)}


@router.get("/stats", response=StatsOut, auth=read_auth)
def page_stats(request: HttpRequest) -> dict[str, Any]:
    """Counts of visible pages by kind, visibility and project; flagged and awaiting review."""
    return selectors.wiki_page_stats(user=request.user)


@router.get("/{slug}", response=PageOut, auth=read_auth)
def get_page(request: HttpRequest, slug: str, project: str | None = None) -> dict[str, Any]:
    """One visible page by slug (or title); ``project`` picks the scope."""
    page = selectors.wiki_page_find(user=request.user, title_or_slug=slug, project=project)
    return selectors.page_as_dict(page, actor=Actor.from_request(request))


@router.post("/{slug}/approve", response=PageOut, auth=write_auth)
def approve_page(request: HttpRequest, slug: str, project: str | None = None) -> dict[str, Any]:
    """Release a flagged page to agents, overriding the scanner's findings. Only a
    person may (an agent token gets 403), one who reviews the page (its owner, an admin
    of its team, or staff) and did not save its text, in person or through an agent:
    403 says who else may. Audited with the findings it overrides; 400 if the page is
    not flagged."""
    page = selectors.wiki_page_find(user=request.user, title_or_slug=slug, project=project)
    actor = Actor.from_request(request)
    services.wiki_page_approve(actor=actor, page=page)
    page = selectors.wiki_page_get_visible(user=request.user, page_id=page.pk)
    return selectors.page_as_dict(page, actor=actor)


@router.delete("/{slug}", response={204: None}, auth=write_auth)
def delete_page(request: HttpRequest, slug: str, project: str | None = None) -> Status:
    """Delete a page you own (or, for team pages, administer), with its revisions."""
    page = selectors.wiki_page_find(user=request.user, title_or_slug=slug, project=project)
    services.wiki_page_delete(actor=Actor.from_request(request), page=page)
    return Status(204, None)
