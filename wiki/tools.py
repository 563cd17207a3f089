"""What agents may call of the wiki: ``wiki_search``, ``wiki_read``, ``wiki_write``.

They apply the scanner's verdict: called with an agent token, a flagged page that no
person has approved comes back with ``"flagged": true``, its findings (without the
matched excerpts) and ``"content": None``; search gives it no snippet.
"""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memoryhub.engine.toolkit import ToolAnswer, tool
from teams.services import Actor
from wiki import selectors, services
from wiki.models import Kind


class WikiSearchArguments(BaseModel):
    query: str = Field(description="Words to find in titles, content and tags")
    project: str | None = Field(None, description="Only pages of this project")
    limit: int = Field(10, ge=1, le=50)


class WikiSearchAnswer(BaseModel):
    query: str
    items: list[dict[str, Any]] = Field(
        description="Pages (id, slug, title, project, kind, ...) with snippet and score"
    )
    count: int


@tool(arguments=WikiSearchArguments, answer=WikiSearchAnswer)
def wiki_search(actor: Actor, args: WikiSearchArguments) -> ToolAnswer:
    """Wiki pages matching the query (title, content, tags), best first, with snippets;
    read one whole with wiki_read."""
    hits = selectors.wiki_page_search(
        user=actor.user, query=args.query, limit=args.limit, filters={"project": args.project}
    )
    items = []
    for hit in hits:
        item = selectors.page_as_dict(hit.page, actor=actor, content=False)
        item["snippet"] = None if item["withheld"] else hit.snippet
        item["score"] = hit.score
        items.append(item)
    lines = [
        f"{item['slug']}: {item['title']}"
        + (
            " (flagged, withheld)"
            if item["withheld"]
            else (f" — {item['snippet']}" if item["snippet"] else " (found by meaning)")
        )
        for item in items
    ]
    data = {"query": args.query, "items": items, "count": len(items)}
    return ToolAnswer(data=data, text="\n".join(lines) or f"No pages match '{args.query}'.")


class WikiReadArguments(BaseModel):
    title_or_slug: str = Field(description="The page's title or slug")
    project: str | None = Field(None, description="The page's project (any when left out)")


class WikiPage(BaseModel):
    """A page as the wiki's API gives it; ``content`` is None when withheld."""

    model_config = ConfigDict(extra="allow")

    id: int
    title: str
    slug: str
    project: str
    kind: str
    visibility: str
    withheld: bool
    content: str | None = None


@tool(arguments=WikiReadArguments, answer=WikiPage)
def wiki_read(actor: Actor, args: WikiReadArguments) -> ToolAnswer:
    """One wiki page by title or slug, with its content unless the injection scanner's
    verdict withholds it."""
    page = selectors.wiki_page_find(
        user=actor.user, title_or_slug=args.title_or_slug, project=args.project
    )
    data = selectors.page_as_dict(page, actor=actor)
    if data["withheld"]:
        text = f"# {page.title}\n(withheld: flagged by the injection scanner, not yet approved)"
    else:
        text = f"# {page.title}\n\n{data['content']}"
    return ToolAnswer(data=data, text=text)


class WikiWriteArguments(BaseModel):
    title: str
    content: str = Field(description="Markdown")
    tags: list[str] | None = None
    kind: str = Kind.NOTE
    project: str = ""
    visibility: str | None = Field(None, description="private, team or global")


class WikiWriteAnswer(WikiPage):
    created: bool
    changed: bool


@tool(arguments=WikiWriteArguments, answer=WikiWriteAnswer, scope="write", idempotent=True)
def wiki_write(actor: Actor, args: WikiWriteArguments) -> ToolAnswer:
    """Create a wiki page, or update the page of that title; says whether it was created
    or changed."""
    result = services.wiki_page_upsert(
        actor=actor,
        title=args.title,
        content=args.content,
        tags=args.tags,
        kind=args.kind,
        project=args.project or "",
        visibility=args.visibility,
    )
    page = result.page  # as this write left it: another may change or delete it next
    data = {
        **selectors.page_as_dict(page, actor=actor),
        "created": result.created,
        "changed": result.changed,
    }
    done = "created" if result.created else ("updated" if result.changed else "unchanged")
    flagged = " (flagged by the injection scanner)" if page.flagged else ""
    return ToolAnswer(data=data, text=f"{done}: {page.slug}{flagged}")


TOOLS = [wiki_search, wiki_read, wiki_write]
