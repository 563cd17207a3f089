"""The wiki's agent tools: plain-dict front doors over the selectors and services.

They apply the scanner's verdict: called with an agent token, a flagged page that no
person has approved comes back with ``"flagged": true``, its findings (without the
matched excerpts) and ``"content": None``; search gives it no snippet.
"""

from typing import Any

from memoryhub.errors import Forbidden, InvalidInput
from teams.services import Actor
from wiki import selectors, services
from wiki.models import Kind


def _require_scope(actor: Actor, scope: str) -> None:
    if actor.token is not None and not actor.token.has_scope(scope):
        raise Forbidden(f"This token lacks the '{scope}' scope.")


def wiki_search(
    *, actor: Actor, query: str, project: str | None = None, limit: int = 10
) -> dict[str, Any]:
    """Pages matching ``query`` (title, content, tags), best first, with snippets."""
    _require_scope(actor, "read")
    if not isinstance(limit, int) or not 1 <= limit <= 50:
        raise InvalidInput("limit must be between 1 and 50.")
    hits = selectors.wiki_page_search(
        user=actor.user, query=query, limit=limit, filters={"project": project}
    )
    items = []
    for hit in hits:
        item = selectors.page_as_dict(hit.page, actor=actor, content=False)
        item["snippet"] = None if item["withheld"] else hit.snippet
        item["score"] = hit.score
        items.append(item)
    return {"query": query, "items": items, "count": len(items)}


def wiki_read(*, actor: Actor, title_or_slug: str, project: str | None = None) -> dict[str, Any]:
    """One page by title or slug, with content unless the verdict withholds it."""
    _require_scope(actor, "read")
    page = selectors.wiki_page_find(user=actor.user, title_or_slug=title_or_slug, project=project)
    return selectors.page_as_dict(page, actor=actor)


def wiki_write(
    *,
    actor: Actor,
    title: str,
    content: str,
    tags: list[str] | None = None,
    kind: str = Kind.NOTE,
    project: str = "",
    visibility: str | None = None,
) -> dict[str, Any]:
    """Create or update (by title) a page; says whether it was created or changed."""
    _require_scope(actor, "write")
    result = services.wiki_page_upsert(
        actor=actor,
        title=title,
        content=content,
        tags=tags,
        kind=kind,
        project=project or "",
        visibility=visibility,
    )
    page = selectors.wiki_page_get_visible(user=actor.user, page_id=result.page.pk)
    return {
        **selectors.page_as_dict(page, actor=actor),
        "created": result.created,
        "changed": result.changed,
    }
