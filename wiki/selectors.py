"""Reads of the wiki. Every one starts from ``Page.objects.visible_to(user)``.

``page_as_dict`` applies the scanner's verdict: an agent never gets the content (or a
snippet, or the matched excerpts) of a flagged page that no person has approved.
"""

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When

from memoryhub.engine.cleaning import MAX_TAG_LENGTH
from memoryhub.engine.embeddings.configured import query_vector
from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from memoryhub.engine.refs import shortened
from memoryhub.engine.search import search_box, search_mode_clean, search_query_clean
from memoryhub.engine.search.hybrid import MAX_NEAR, SearchMode
from memoryhub.engine.search.vectors import VectorHit
from teams.models import Membership, Role, Visibility
from teams.services import Actor
from wiki.models import MAX_TITLE_CHARS, Page, PagePassage, PageRevision
from wiki.search import PAGE_FTS, PASSAGE_VECTORS, SNIPPET_BEST_COLUMN
from wiki.services import page_slug

FILTERS = ("tag", "kind", "project", "visibility", "flagged")
MAX_QUERY_CHARS = 1000
# Passages taken by meaning per page wanted: a long page's passages crowd the nearest.
PASSAGES_PER_PAGE = 4


def wiki_page_list_visible(*, user: Any, filters: dict[str, Any] | None = None) -> QuerySet[Page]:
    """Pages the user may read, newest change first, filtered by tag, kind, project,
    visibility or flagged. An empty project filter value means "any project"."""
    pages = Page.objects.visible_to(user).select_related("owner", "team", "approved_by")
    for name, value in (filters or {}).items():
        if value is None or value == "":
            continue
        if name not in FILTERS:
            raise InvalidInput(f"Unknown filter '{name}': use {', '.join(FILTERS)}.")
        if name == "tag":
            tag = str(value).strip().lower()
            # Tags are stored as a JSON list; a quoted match finds one whole tag. A tag
            # longer than any stored one matches nothing (and is too long to compare).
            if len(tag) > MAX_TAG_LENGTH:
                pages = pages.none()
            else:
                pages = pages.filter(tags__icontains=json.dumps(tag))
        elif name == "flagged":
            pages = pages.filter(flagged=value in (True, "true", "1", "yes", "on"))
        else:
            pages = pages.filter(**{name: value})
    return pages.order_by("-updated_at", "-id")


def wiki_page_get_visible(*, user: Any, page_id: int) -> Page:
    """One page the user may read, by id."""
    page = (
        Page.objects.visible_to(user)
        .select_related("owner", "team", "approved_by")
        .filter(pk=page_id)
        .first()
    )
    if page is None:
        raise NotFound(f"No page {page_id}.")
    return page


def wiki_page_find(*, user: Any, title_or_slug: str, project: str | None = None) -> Page:
    """A visible page by slug or title (``project`` narrows it; None means any). When
    several owners have one, the user's own comes first, then the latest changed."""
    if not isinstance(title_or_slug, str) or not title_or_slug.strip():
        raise InvalidInput("Name a page by its title or slug.")
    text = title_or_slug.strip()
    if len(text) > MAX_TITLE_CHARS:
        raise NotFound(f"No page titled '{shortened(text)}'.")
    try:
        slug = page_slug(text)
    except InvalidInput:
        slug = text
    pages = (
        Page.objects.visible_to(user)
        .select_related("owner", "team", "approved_by")
        .filter(Q(slug=slug) | Q(slug=text) | Q(title__iexact=text))
    )
    if project is not None:
        pages = pages.filter(project=project.strip())
    page = (
        pages.annotate(
            mine=Case(
                When(owner_id=user.pk, then=Value(0)), default=Value(1), output_field=IntegerField()
            )
        )
        .order_by("mine", "-updated_at", "-id")
        .first()
    )
    if page is None:
        where = f" in project '{project}'" if project else ""
        raise NotFound(f"No page '{text}'{where}.")
    return page


@dataclass(frozen=True)
class SearchHit:
    page: Page
    snippet: str
    score: float  # higher is better


def wiki_page_search(
    *,
    user: Any,
    query: str,
    limit: int = 20,
    filters: dict[str, Any] | None = None,
    mode: str | None = None,
) -> list[SearchHit]:
    """Visible pages for a search, best first, each with a snippet whose matches are
    marked ``[[``/``]]`` ("" for a page found by meaning alone). Hybrid (the default)
    reads a sentence as recall does: pages holding every word, any word but stopwords,
    or a passage close in meaning (keyword only with embeddings off); exact: pages
    holding every word (the last as a prefix). Any text is accepted: FTS operators and
    quotes are searched as plain words."""
    chosen = search_mode_clean(mode)
    query = search_query_clean(query, max_chars=MAX_QUERY_CHARS)
    if not 1 <= limit <= 200:
        raise InvalidInput("limit must be between 1 and 200.")
    scope = wiki_page_list_visible(user=user, filters=filters).order_by()
    vector = query_vector(query) if chosen == SearchMode.HYBRID else None
    result = search_box(
        fts=PAGE_FTS,
        query=query,
        within=scope,
        limit=limit,
        mode=chosen,
        near=_pages_near(vector, scope=scope, limit=limit) if vector is not None else None,
        snippet_column=SNIPPET_BEST_COLUMN,
    )
    found = scope.in_bulk([h.id for h in result.hits])
    return [
        SearchHit(page=found[h.id], snippet=h.snippet, score=h.score)
        for h in result.hits
        if h.id in found
    ]


def _pages_near(vector: Any, *, scope: QuerySet[Page], limit: int) -> list[VectorHit]:
    """The pages of ``scope`` with a passage closest to ``vector``, each page by its
    closest passage, best first."""
    passages = PagePassage.objects.filter(page__in=scope)
    hits = PASSAGE_VECTORS.knn(vector, k=min(limit, MAX_NEAR) * PASSAGES_PER_PAGE, within=passages)
    page_of = dict(passages.filter(pk__in=[h.id for h in hits]).values_list("pk", "page_id"))
    best: dict[int, VectorHit] = {}
    for hit in hits:  # best first: a page's first passage is its closest
        page_id = page_of.get(hit.id)
        if page_id is not None and page_id not in best:
            best[page_id] = VectorHit(id=page_id, similarity=hit.similarity)
    return list(best.values())[:limit]


def wiki_page_stats(*, user: Any) -> dict[str, Any]:
    """Counts of the visible pages by kind, visibility and project, and how many are
    flagged and still waiting for a review."""
    pages = Page.objects.visible_to(user).order_by()

    def counts(name: str) -> dict[str, int]:
        return {str(row[name]): row["n"] for row in pages.values(name).annotate(n=Count("id"))}

    by_kind = counts("kind")
    return {
        "total": sum(by_kind.values()),
        "by_kind": by_kind,
        "by_visibility": counts("visibility"),
        "by_project": counts("project"),
        "flagged": pages.filter(flagged=True).count(),
        "awaiting_review": pages.filter(flagged=True, approved_at__isnull=True).count(),
        "revisions": PageRevision.objects.filter(page__in=pages.values("pk")).count(),
    }


def wiki_review_queue(*, user: Any) -> QuerySet[Page]:
    """Flagged, unapproved pages the user may approve: their own, their team's team
    pages where they are an admin, and (for staff) every such page they can see."""
    pages = wiki_page_list_visible(user=user).filter(flagged=True, approved_at__isnull=True)
    if user.is_staff:
        return pages
    admin_teams = Membership.objects.filter(user_id=user.pk, role=Role.ADMIN).values("team_id")
    return pages.filter(
        Q(owner_id=user.pk) | Q(visibility=Visibility.TEAM, team_id__in=admin_teams)
    )


def wiki_flagged_waiting(
    *, user: Any, instance: bool = False, limit: int = 5
) -> tuple[list[Page], int]:
    """Flagged pages waiting for a review: the latest that ``user`` may review
    (``wiki_review_queue``), and how many wait in all, for them or (staff,
    ``instance``) on the whole instance."""
    mine = wiki_review_queue(user=user)
    if instance:
        if not user.is_staff:
            raise Forbidden("Only staff read the counts of the whole instance.")
        total = Page.objects.filter(flagged=True, approved_at__isnull=True).count()
    else:
        total = mine.count()
    return list(mine[:limit]), total


def wiki_revision_list(*, page: Page) -> QuerySet[PageRevision]:
    """The revisions of a page the caller has already checked access to, newest first."""
    return page.revisions.select_related("author").order_by("-number")


def wiki_revision_get(*, page: Page, number: int) -> PageRevision:
    revision = page.revisions.select_related("author").filter(number=number).first()
    if revision is None:
        raise NotFound(f"Page {page.pk} has no revision {number}.")
    return revision


def wiki_revision_diff(*, page: Page, old: int, new: int) -> list[tuple[str, str]]:
    """A unified diff between two revisions as ``(kind, line)`` pairs, kind being one of
    "add", "del", "hunk", "meta" or "same", for the template to style."""
    before, after = (
        wiki_revision_get(page=page, number=old),
        wiki_revision_get(page=page, number=new),
    )
    lines = difflib.unified_diff(
        [f"# {before.title}", "", *before.content.splitlines()],
        [f"# {after.title}", "", *after.content.splitlines()],
        fromfile=f"r{old}",
        tofile=f"r{new}",
        lineterm="",
        n=3,
    )
    kinds = []
    for line in lines:
        if line.startswith(("---", "+++")):
            kinds.append(("meta", line))
        elif line.startswith("@@"):
            kinds.append(("hunk", line))
        elif line.startswith("+"):
            kinds.append(("add", line))
        elif line.startswith("-"):
            kinds.append(("del", line))
        else:
            kinds.append(("same", line))
    return kinds


def agent_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The excerpt is the suspicious text itself: an agent gets where and what, not it.
    return [{k: v for k, v in f.items() if k != "excerpt"} for f in findings]


def page_as_dict(page: Page, *, actor: Actor, content: bool = True) -> dict[str, Any]:
    """A page as plain data for ``actor``, with the scanner's verdict applied: an agent
    gets ``content: None`` and ``withheld: True`` for a flagged, unapproved page."""
    is_agent = actor.token is not None
    withheld = is_agent and page.withheld_from_agents
    data: dict[str, Any] = {
        "id": page.pk,
        "title": page.title,
        "slug": page.slug,
        "project": page.project,
        "kind": page.kind,
        "status": page.status,
        "tags": list(page.tags),
        "visibility": page.visibility,
        "team": page.team.name if page.team_id else None,
        "fleet": page.fleet,
        "owner": page.owner.get_username(),
        "flagged": page.flagged,
        "approved": page.is_approved,
        "approved_by": page.approved_by.get_username() if page.approved_by_id else None,
        "approved_at": page.approved_at.isoformat() if page.approved_at else None,
        "withheld": withheld,
        "findings": agent_findings(page.findings) if is_agent else list(page.findings),
        "scanner_version": page.scanner_version,
        "created_at": page.created_at.isoformat(),
        "updated_at": page.updated_at.isoformat(),
    }
    if content:
        data["content"] = None if withheld else page.content
    return data


def wiki_page_export_rows(*, user: Any, project: str | None = None) -> Iterator[Page]:
    """Every page the user may read (optionally of one project), in a stable order."""
    pages = (
        Page.objects.visible_to(user)
        .select_related("owner", "team")
        .order_by("project", "slug", "owner_id")
    )
    if project is not None:
        pages = pages.filter(project=project)
    yield from pages.iterator(chunk_size=200)


def wiki_page_export_owned(*, user: Any) -> Iterator[dict[str, Any]]:
    """Every page ``user`` owns, with its text and the scanner's verdict, oldest first."""
    pages = Page.objects.owned_by(user).select_related("team", "approved_by").order_by("pk")
    for page in pages.iterator(chunk_size=200):
        yield {
            "id": page.pk,
            "title": page.title,
            "slug": page.slug,
            "project": page.project,
            "kind": page.kind,
            "status": page.status,
            "abandoned_at": page.abandoned_at.isoformat() if page.abandoned_at else None,
            "tags": list(page.tags),
            "visibility": page.visibility,
            "team": page.team.name if page.team_id else None,
            "content": page.content,
            "flagged": page.flagged,
            "findings": list(page.findings),
            "approved_by": page.approved_by.get_username() if page.approved_by_id else None,
            "approved_at": page.approved_at.isoformat() if page.approved_at else None,
            "created_at": page.created_at.isoformat(),
            "updated_at": page.updated_at.isoformat(),
        }


def wiki_revision_export_written(*, user: Any) -> Iterator[dict[str, Any]]:
    """Every revision ``user`` (or their agents) saved, of their own pages and of the
    pages they may still read, oldest first."""
    pages = Page.objects.owned_by(user) | Page.objects.visible_to(user)
    revisions = (
        PageRevision.objects.filter(author_id=user.pk, page__in=pages.values("pk"))
        .select_related("page")
        .order_by("pk")
    )
    for revision in revisions.iterator(chunk_size=200):
        yield {
            "page": revision.page_id,
            "page_title": revision.page.title,
            "number": revision.number,
            "title": revision.title,
            "content": revision.content,
            "tags": list(revision.tags),
            "author": revision.author_label or user.get_username(),
            "created_at": revision.created_at.isoformat(),
        }
