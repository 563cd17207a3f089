"""Writes of the wiki: upsert by title (with a revision per save), create (which
refuses a title in use), delete, and the review that releases a flagged page to agents.

Every write scans the page, keeps the FTS index in step and writes an audit event
inside its own transaction; nothing here runs on signals.
"""

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone
from django.utils.text import slugify

from memoryhub.engine.cleaning import clean_name, clean_tags
from memoryhub.engine.embeddings.configured import (
    embedder_get,
    embedder_model_id,
    embeddings_enabled,
)
from memoryhub.engine.embeddings.pipeline import embed_chunks
from memoryhub.engine.errors import Conflict, Forbidden, InvalidInput, NotFound
from memoryhub.engine.locking import row_for_update
from memoryhub.engine.search.topic import topic_match, topic_read, topic_refine
from memoryhub.engine.tasks import enqueue_on_commit
from teams.models import Visibility
from teams.services import (
    Actor,
    audit_log,
    resolve_team,
    scope_change_check,
    scope_for_new_row,
)
from wiki import scanner
from wiki.models import (
    DECISION_KINDS,
    KIND_PATTERN,
    MAX_CONTENT_CHARS,
    MAX_TITLE_CHARS,
    Kind,
    Page,
    PagePassage,
    PageRevision,
    PageStatus,
)
from wiki.search import PAGE_FTS, PASSAGE_VECTORS, fts_values, page_passages

MAX_PROJECT_CHARS = 200
# What an edit of a page writes: its text and scope, and the verdict and approval of it.
EDITED_FIELDS = (
    "title",
    "content",
    "tags",
    "kind",
    "team",
    "visibility",
    "findings",
    "flagged",
    "scanner_version",
    "approved_by",
    "approved_at",
    "content_hash",
    "updated_at",
)
_KIND_RE = re.compile(KIND_PATTERN)


@dataclass(frozen=True)
class WriteResult:
    """What an upsert did: ``created`` a page, ``changed`` an existing one, or neither."""

    page: Page
    created: bool
    changed: bool


# --- Validation -------------------------------------------------------------------------------


def page_slug(title: str) -> str:
    """The slug a title maps to; titles that differ only in case or punctuation share one."""
    slug = slugify(title, allow_unicode=True)[:MAX_TITLE_CHARS].strip("-")
    if not slug:
        raise InvalidInput(f"The title {title!r} has no letters or digits to make a slug from.")
    return slug


def clean_title(title: Any) -> str:
    return clean_name(title, owner="A page", noun="title", max_length=MAX_TITLE_CHARS)


def clean_content(content: Any) -> str:
    # Content is kept byte for byte (no stripping) so folder sync round-trips losslessly.
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("A page needs content.")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(
            f"Content is {len(content)} characters; the maximum is {MAX_CONTENT_CHARS}."
        )
    return content


def clean_kind(kind: Any) -> str:
    kind = Kind.NOTE if kind in (None, "") else kind
    if not isinstance(kind, str) or not _KIND_RE.match(kind):
        raise InvalidInput(
            f"Unknown kind {kind!r}: use a short lowercase word such as {', '.join(Kind.values)}."
        )
    return kind


def clean_project(project: Any) -> str:
    project = (project or "").strip() if isinstance(project, str | None) else None
    if project is None:
        raise InvalidInput("The project key must be a string.")
    if len(project) > MAX_PROJECT_CHARS:
        raise InvalidInput(f"A project key is at most {MAX_PROJECT_CHARS} characters.")
    return project


# --- Upsert -----------------------------------------------------------------------------------


def _scan_text(content: str, title: str) -> tuple[list[scanner.Finding], list[scanner.Finding]]:
    """The scanner's findings for a page's content (rules and learned pass) and title.
    A title is one short line, not the long text the learned pass looks for: the rules
    read it alone."""
    return scanner.scan(content, learned=True), scanner.scan(title)


def _passes_scan(content: str, title: str) -> bool:
    content_findings, title_findings = _scan_text(content, title)
    return not scanner.is_flagged([*content_findings, *title_findings])


def _scan(page: Page) -> None:
    """Store the scanner's findings for the title and the content of ``page``."""
    content_findings, title_findings = _scan_text(page.content, page.title)
    page.findings = [{**f.to_dict(), "field": "content"} for f in content_findings] + [
        {**f.to_dict(), "field": "title"} for f in title_findings
    ]
    page.flagged = scanner.is_flagged([*content_findings, *title_findings])
    page.scanner_version = str(scanner.SCANNER_VERSION)


def _index(page: Page) -> None:
    """Re-index a saved page: its words now; its passages' vectors, which held what it
    said before, go at once and are made anew after commit."""
    PAGE_FTS.upsert([(page.pk, fts_values(page.title, page.content, list(page.tags)))])
    _passages_drop([page.pk])
    Page.objects.filter(pk=page.pk).update(embedding_model="")
    page.embedding_model = ""
    _queue_embedding([page.pk])


def _unindex(page_ids: list[int]) -> None:
    """Take pages about to be deleted out of both indexes."""
    PAGE_FTS.delete(page_ids)
    _passages_drop(page_ids)


def _keep_revision(*, actor: Actor, page: Page) -> PageRevision:
    last = page.revisions.aggregate(last=Max("number"))["last"] or 0
    return PageRevision.objects.create(
        page=page,
        number=last + 1,
        author=actor.user,
        author_label=actor.label,
        created_at=page.updated_at,
        title=page.title,
        content=page.content,
        tags=list(page.tags),
    )


def _page_for_write(*, actor: Actor, project: str, slug: str) -> Page | None:
    """The page a write of ``slug`` in ``project`` lands on: the writer's own, else a
    page of another owner the writer can edit. A visible page the writer cannot edit
    blocks the write, so one slug never names two pages for the same reader."""
    own = (
        Page.objects.select_for_update(of=("self",))
        .filter(owner=actor.user, project=project, slug=slug)
        .first()
    )
    if own is not None:
        return own
    others = (
        Page.objects.visible_to(actor.user)
        .select_related("owner")
        .filter(project=project, slug=slug)
        .exclude(owner=actor.user)
        .order_by("-updated_at", "-id")
    )
    for other in others:
        if other.can_be_edited_by(actor.user):
            return _still_editable(actor=actor, page=other)
    blocking = others.first()
    if blocking is not None:
        where = f"project '{project}'" if project else "the organisation pages"
        raise Conflict(
            f"The slug '{slug}' in {where} is a slug another scope owns "
            f"(a {blocking.visibility} page of {blocking.owner.get_username()}); "
            "choose another title.",
            extra={"slug": slug, "page_id": blocking.pk},
        )
    return None


def _still_editable(*, actor: Actor, page: Page) -> Page:
    """``page``, found without a lock, re-read under one. Its owner may have deleted it
    (404) or made it a page the writer may no longer edit (409) in the meantime: the
    write never brings it back, nor undoes a change of who may read it."""
    current = row_for_update(
        page, missing=f"The page '{page.title}' was deleted while you saved it; nothing was saved."
    )
    if not current.can_be_edited_by(actor.user):
        raise Conflict(
            f"The page '{page.title}' changed who may read or edit it while you saved it; "
            "nothing was saved. Read it again."
        )
    return current


def _scan_ahead(content: str) -> None:
    """Scan ``content`` before the transaction that saves it: the learned pass embeds
    it, which inside the transaction would hold the database's write lock meanwhile
    (every writer waits on SQLite), and the scan in the transaction finds its answer
    remembered."""
    if not transaction.get_connection().in_atomic_block:
        scanner.scan(content, learned=True)


def wiki_page_upsert(
    *,
    actor: Actor,
    title: str,
    content: str,
    tags: Sequence[str] | str | None = None,
    kind: str | None = Kind.NOTE,
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
) -> WriteResult:
    """Create the page titled ``title`` in ``project``, or update it if it exists.

    The same title (same slug) in the same scope updates rather than duplicates. Each
    save scans the page, keeps a revision, re-indexes it and is audited; a write that
    changes nothing saves nothing. Changing the title or content clears an approval.
    """
    _scan_ahead(clean_content(content))
    return _page_upsert(
        actor=actor,
        title=title,
        content=content,
        tags=tags,
        kind=kind,
        project=project,
        visibility=visibility,
        team=team,
    )


def wiki_page_create(
    *,
    actor: Actor,
    title: str,
    content: str,
    tags: Sequence[str] | str | None = None,
    kind: str | None = Kind.NOTE,
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
) -> WriteResult:
    """Create the page titled ``title`` in ``project``, as ``wiki_page_upsert`` does, but
    refuse (409, with the page's ``page_id``) a title that already names a page there
    by the upsert's rules, rather than update it: someone starting a new page does not
    mean to overwrite another."""
    _scan_ahead(clean_content(content))
    return _page_upsert(
        actor=actor,
        title=title,
        content=content,
        tags=tags,
        kind=kind,
        project=project,
        visibility=visibility,
        team=team,
        create_only=True,
    )


@transaction.atomic
def _page_upsert(
    *,
    actor: Actor,
    title: str,
    content: str,
    tags: Sequence[str] | str | None,
    kind: str | None,
    project: str,
    visibility: str | None,
    team: str | int | None,
    create_only: bool = False,
) -> WriteResult:
    title = clean_title(title)
    content = clean_content(content)
    clean = {"tags": clean_tags(tags, split_text=True), "kind": clean_kind(kind)}
    project = clean_project(project)
    slug = page_slug(title)
    if visibility not in (None, "") and visibility not in Visibility.values:
        raise InvalidInput(
            f"Unknown visibility '{visibility}': use one of {', '.join(Visibility.values)}."
        )
    page = _page_for_write(actor=actor, project=project, slug=slug)
    if page is not None and create_only:
        where = f"project '{project}'" if project else "the organisation pages"
        raise Conflict(
            f"There is already a page titled '{page.title}' in {where}: edit that page, "
            "or choose another title.",
            extra={"slug": slug, "page_id": page.pk},
        )
    now = timezone.now()

    if page is None:
        scope = scope_for_new_row(
            user=actor.user, team=team, visibility=visibility or None, project=project
        )
        page = Page(
            **scope,
            title=title,
            slug=slug,
            content=content,
            fleet=actor.token.fleet if actor.token is not None else "",
            created_at=now,
            updated_at=now,
            **clean,
        )
        _scan(page)
        page.content_hash = page.fingerprint()
        try:
            with transaction.atomic():
                page.save()
        except IntegrityError as exc:
            raise Conflict(f"A page with the slug '{slug}' was just created; try again.") from exc
        _after_save(actor=actor, page=page, action="wiki.create")
        return WriteResult(page=page, created=True, changed=True)

    before = (page.title, page.content, list(page.tags), page.kind, page.visibility, page.team_id)
    new_team = resolve_team(user=actor.user, team=team) if team not in (None, "") else page.team
    new_visibility = visibility or page.visibility
    if visibility == Visibility.TEAM and new_team is None:
        new_team = scope_for_new_row(
            user=actor.user, team=team, visibility=visibility, project=project
        )["team"]
    new_team_id = new_team.pk if new_team is not None else None
    if (new_visibility, new_team_id) != (page.visibility, page.team_id):
        if not page.is_editable_by(actor.user):
            raise Forbidden(
                "Team members edit a team page's text; only its owner or an admin of its "
                "team can change who may read it."
            )
        scope_change_check(
            actor=actor,
            row=page,
            visibility=new_visibility,
            team=new_team,
            target_type="wiki_page",
            noun="page",
        )
    text_changed = page.title != title or page.content != content
    page.title, page.content = title, content
    page.tags, page.kind = clean["tags"], clean["kind"]
    page.team, page.visibility = new_team, new_visibility
    after = (page.title, page.content, list(page.tags), page.kind, page.visibility, page.team_id)
    if after == before:
        return WriteResult(page=page, created=False, changed=False)
    if text_changed or page.scanner_version != str(scanner.SCANNER_VERSION):
        _scan(page)
    if text_changed:
        # The reviewer approved the text they read, not whatever it says now.
        page.approved_by, page.approved_at = None, None
    page.content_hash = page.fingerprint()
    page.updated_at = now
    # The row is locked (``_page_for_write``): it cannot be deleted meanwhile, and only
    # what an edit may change is written.
    page.save(update_fields=EDITED_FIELDS)
    _after_save(actor=actor, page=page, action="wiki.update")
    return WriteResult(page=page, created=False, changed=True)


def _after_save(
    *, actor: Actor, page: Page, action: str, details: dict[str, Any] | None = None
) -> PageRevision:
    revision = _keep_revision(actor=actor, page=page)
    _index(page)
    audit_log(
        actor=actor,
        action=action,
        target_type="wiki_page",
        target_id=page.pk,
        details={
            "title": page.title,
            "slug": page.slug,
            "project": page.project,
            "revision": revision.number,
            "flagged": page.flagged,
            **(details or {}),
        },
    )
    return revision


def _locked(page: Page) -> Page:
    """The page's row, locked for the rest of the transaction; 404 if it is gone, so a
    write never brings back a page that was deleted meanwhile."""
    locked = (
        Page.objects.select_for_update(of=("self",))
        .select_related("owner", "team")
        .filter(pk=page.pk)
    )
    current = locked.first()
    if current is None:
        raise NotFound(f"No page {page.pk}: it was deleted.")
    return current


def _set_text(*, actor: Actor, page: Page, revision: PageRevision) -> None:
    """Put ``revision``'s text back on ``page`` (rescanned, approval cleared) and save."""
    page.content = revision.content
    page.tags = list(revision.tags)
    if page_slug(revision.title) == page.slug:
        page.title = revision.title
    _scan(page)
    page.approved_by, page.approved_at = None, None
    page.content_hash = page.fingerprint()
    page.updated_at = timezone.now()
    page.save(force_update=True)


def wiki_page_revision_restore(*, actor: Actor, page: Page, number: int) -> PageRevision:
    """Put an old revision's text back as a new revision, which is scanned like any
    edit and audited as ``wiki.restore``. Anyone who may edit the page may restore."""
    for content in page.revisions.filter(number=number).values_list("content", flat=True):
        _scan_ahead(content)
    return _revision_restore(actor=actor, page=page, number=number)


@transaction.atomic
def _revision_restore(*, actor: Actor, page: Page, number: int) -> PageRevision:
    page = _locked(page)
    if not page.can_be_edited_by(actor.user):
        raise Forbidden("Only people who may edit this page can restore a revision of it.")
    old = page.revisions.filter(number=number).first()
    if old is None:
        raise NotFound(f"Page {page.pk} has no revision {number}.")
    if (old.title, old.content, list(old.tags)) == (page.title, page.content, list(page.tags)):
        raise InvalidInput(f"The page already says what r{number} says; nothing to restore.")
    _set_text(actor=actor, page=page, revision=old)
    return _after_save(
        actor=actor, page=page, action="wiki.restore", details={"restored_from": number}
    )


@dataclass(frozen=True)
class Rejection:
    """What rejecting a flagged page did: put back ``restored_from`` as ``revision``, or
    deleted the page when no revision of it ever passed the scanner."""

    page_id: int
    title: str
    restored_from: int | None = None
    revision: int | None = None

    @property
    def deleted(self) -> bool:
        return self.restored_from is None


def wiki_page_reject(*, actor: Actor, page: Page) -> Rejection:
    """A reviewer refuses a flagged page's text: the latest revision that the scanner
    passes comes back as a new revision, or, if none ever did, the page is deleted.
    Only a person may reject, one who reviews the page (its author too: rejecting
    releases nothing); audited as ``wiki.reject`` with the findings."""
    if actor.token is not None:
        raise Forbidden("Agents cannot reject flagged pages; a person reviews them.")
    for content, title in page.revisions.order_by("-number").values_list("content", "title"):
        _scan_ahead(content)
        if _passes_scan(content, title):
            break
    return _reject(actor=actor, page=page)


@transaction.atomic
def _reject(*, actor: Actor, page: Page) -> Rejection:
    page = _locked(page)
    if not page.can_be_reviewed_by(actor.user):
        raise Forbidden("Only the page's owner, an admin of its team or staff can reject it.")
    if not page.flagged or page.is_approved:
        raise InvalidInput("Only a flagged page waiting for review can be rejected.")
    rules = sorted({f.get("rule", "") for f in page.findings if f.get("severity") != "low"})
    clean = next(
        (
            revision
            for revision in page.revisions.order_by("-number")
            if _passes_scan(revision.content, revision.title)
        ),
        None,
    )
    title = page.title
    if clean is None:
        audit_log(
            actor=actor,
            action="wiki.reject",
            target_type="wiki_page",
            target_id=page.pk,
            details={"title": title, "slug": page.slug, "rules": rules, "deleted": True},
        )
        page_id = page.pk
        _unindex([page_id])
        page.delete()
        return Rejection(page_id=page_id, title=title)
    _set_text(actor=actor, page=page, revision=clean)
    revision = _after_save(
        actor=actor,
        page=page,
        action="wiki.reject",
        details={"restored_from": clean.number, "rules": rules},
    )
    return Rejection(
        page_id=page.pk, title=title, restored_from=clean.number, revision=revision.number
    )


# --- Delete and review ------------------------------------------------------------------------


@transaction.atomic
def wiki_page_delete(*, actor: Actor, page: Page) -> None:
    """Delete a page the actor may edit, with its revisions and index entry; audited.
    The page is re-read under a lock first: a page deleted meanwhile is not found, and
    no edit adds a revision or a passage to it while it goes."""
    page = _locked(page)
    if not page.is_editable_by(actor.user):
        raise Forbidden("Only the page's owner or an admin of its team can delete it.")
    page_id = page.pk
    audit_log(
        actor=actor,
        action="wiki.delete",
        target_type="wiki_page",
        target_id=page_id,
        details={
            "title": page.title,
            "slug": page.slug,
            "project": page.project,
            "owner": page.owner.get_username(),
            "revisions": page.revisions.count(),
        },
    )
    _unindex([page_id])
    page.delete()


# What an approval's audit event keeps of each finding it overrides: where and what,
# not the excerpt (the suspicious text itself, which forgetting must be able to remove).
AUDITED_FINDING_FIELDS = ("rule", "severity", "field", "start", "end", "message")


@transaction.atomic
def wiki_page_approve(*, actor: Actor, page: Page, version: str | None = None) -> Page:
    """Release a flagged page to agents, overriding the scanner's findings.

    Only a person may do it (never an agent token), one who reviews the page (its
    owner, an admin of its team, or staff) and did not save the text under review,
    in person or through an agent (``Page.approval_refusal``). With ``version`` (the
    ``Page.version`` the reviewer read), text saved since is refused (412) rather than
    released unread. Audited as ``wiki.approve`` with the findings it overrides.
    """
    if actor.token is not None:
        raise Forbidden("Agents cannot approve flagged pages; a person reviews them.")
    page = row_for_update(
        page, missing="This page was deleted meanwhile.", expected_version=version
    )
    refusal = page.approval_refusal(actor.user)
    if refusal:
        raise Forbidden(refusal)
    if not page.flagged:
        raise InvalidInput("This page is not flagged; there is nothing to approve.")
    if page.is_approved:
        return page
    page.approved_by, page.approved_at = actor.user, timezone.now()
    page.save(update_fields=["approved_by", "approved_at"])
    audit_log(
        actor=actor,
        action="wiki.approve",
        target_type="wiki_page",
        target_id=page.pk,
        details={
            "title": page.title,
            "slug": page.slug,
            "project": page.project,
            "revision": page.revisions.aggregate(last=Max("number"))["last"],
            "scanner_version": page.scanner_version,
            "rules": sorted({f.get("rule", "") for f in page.findings}),
            "findings": [
                {k: f.get(k, "content" if k == "field" else None) for k in AUDITED_FINDING_FIELDS}
                for f in page.findings
            ],
        },
    )
    return page


# --- Scanner upgrades -------------------------------------------------------------------------


def _serious_rules(findings: list[dict[str, Any]]) -> set[str]:
    return {str(f.get("rule", "")) for f in findings if f.get("severity") in ("high", "medium")}


def wiki_pages_rescan(*, limit: int = 500) -> int:
    """Scan again, with the current scanner, up to ``limit`` pages whose stored verdict
    an older scanner gave, and return how many were refreshed. An approval stands only
    if the new scan finds nothing serious that the reviewer was not shown. Each page is
    updated only if no write changed it meanwhile, so a deleted page stays deleted."""
    version = str(scanner.SCANNER_VERSION)
    stale = Page.objects.exclude(scanner_version=version).order_by("id")[:limit]
    refreshed = 0
    for page in stale:
        before = _serious_rules(page.findings)
        _scan(page)
        keep_approval = page.is_approved and _serious_rules(page.findings) <= before
        refreshed += Page.objects.filter(pk=page.pk, content_hash=page.content_hash).update(
            findings=page.findings,
            flagged=page.flagged,
            scanner_version=version,
            **({} if keep_approval else {"approved_by": None, "approved_at": None}),
        )
    return refreshed


# --- Vectors of passages ---------------------------------------------------------------------

# Pages embedded per statement, and pages one task takes along besides its own.
EMBED_PAGES = 16
EMBED_SWEEP = 256


def _queue_embedding(page_ids: list[int]) -> None:
    """Embed these pages' passages once the transaction commits. With embeddings off
    nothing is queued: switching them on lets the backfill embed every page."""
    from wiki.tasks import wiki_pages_embed

    if page_ids and embeddings_enabled():
        enqueue_on_commit(wiki_pages_embed, page_ids)


def _passages_drop(page_ids: list[int]) -> None:
    ids = list(PagePassage.objects.filter(page_id__in=page_ids).values_list("pk", flat=True))
    if ids:
        PASSAGE_VECTORS.delete(ids)
        PagePassage.objects.filter(pk__in=ids).delete()


def wiki_pages_embed(*, page_ids: Sequence[int]) -> int:
    """Cut these pages into passages and store a vector of each; returns how many pages
    were embedded. Pages already embedded by the configured model, and pages that
    changed or vanished while they were embedded, are skipped (the change queued its
    own embedding). Embedder errors propagate (the task retries; the pages keep being
    found by their words)."""
    if not embeddings_enabled():
        return 0
    embedder = embedder_get()
    ids = list(page_ids)

    def chunks():
        for start in range(0, len(ids), EMBED_PAGES):
            rows = list(
                Page.objects.filter(pk__in=ids[start : start + EMBED_PAGES])
                .exclude(embedding_model=embedder.model_id)
                .values_list("pk", "content_hash", "title", "content")
            )
            if rows:
                pages = [(pk, dg, page_passages(title, text)) for pk, dg, title, text in rows]
                yield pages, [passage for _, _, passages in pages for passage in passages]

    return sum(
        _passages_store(pages, vectors, embedder.model_id, embedder.dim)
        for (pages, _), vectors in embed_chunks(embedder, chunks(), lambda chunk: chunk[1])
    )


def _passages_store(
    pages: list[tuple[int, str, list[str]]], vectors: Any, model: str, dim: int
) -> int:
    """Store the passages of ``pages`` (id, fingerprint embedded, passages) with their
    ``vectors`` in order, for the pages still as they were; how many were stored."""
    PASSAGE_VECTORS.ensure_dim(dim)
    stored = 0
    with transaction.atomic():
        current = dict(
            Page.objects.select_for_update(of=("self",))
            .filter(pk__in=[pk for pk, _, _ in pages])
            .values_list("pk", "content_hash")
        )
        at = 0
        for pk, digest, passages in pages:
            own = vectors[at : at + len(passages)]
            at += len(passages)
            if current.get(pk) != digest:
                continue
            _passages_drop([pk])
            rows = PagePassage.objects.bulk_create(
                PagePassage(page_id=pk, number=n) for n in range(len(passages))
            )
            PASSAGE_VECTORS.upsert(
                [(row.pk, vector) for row, vector in zip(rows, own, strict=True)], model=model
            )
            stored += Page.objects.filter(pk=pk).update(embedding_model=model)
    return stored


def wiki_pages_embed_waiting(*, limit: int = EMBED_SWEEP) -> int:
    """Embed up to ``limit`` pages without vectors from the configured model, oldest
    first: those whose task was never queued (the broker was down), and every page
    after the model changed."""
    if not embeddings_enabled():
        return 0
    waiting = list(
        Page.objects.exclude(embedding_model=embedder_model_id())
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    return wiki_pages_embed(page_ids=waiting) if waiting else 0


# --- Forgetting -------------------------------------------------------------------------------

FORGOTTEN = "[forgotten]"
# Shorter texts are too common to be a quotation of one statement.
QUOTE_MIN_CHARS = 20
QUOTES_PER_QUERY = 200


@transaction.atomic
def wiki_quotes_forget(*, actor: Actor, texts: Sequence[str]) -> dict[str, list[int]]:
    """Take out of the pages ``actor`` may edit, and out of their history, every verbatim
    quotation of ``texts`` (statements being forgotten), leaving ``[forgotten]``;
    pages quoting them that the actor cannot edit are listed, not changed."""
    quotes = sorted({t for t in texts if len(t) >= QUOTE_MIN_CHARS}, key=len, reverse=True)
    changed: list[int] = []
    others: list[int] = []
    if not quotes:
        return {"changed": changed, "not_editable": others}
    holding: set[int] = set()
    # A statement at a time would be a query each; all at once, an expression deeper
    # than the engine parses.
    for start in range(0, len(quotes), QUOTES_PER_QUERY):
        quoting = reduce(
            operator.or_,
            (Q(content__contains=q) for q in quotes[start : start + QUOTES_PER_QUERY]),
        )
        holding.update(Page.objects.filter(quoting).values_list("pk", flat=True))
        holding.update(PageRevision.objects.filter(quoting).values_list("page_id", flat=True))
    for page in Page.objects.filter(pk__in=holding).order_by("pk").select_for_update(of=("self",)):
        if not page.can_be_edited_by(actor.user):
            others.append(page.pk)
            continue
        for revision in page.revisions.all():
            text = _without(revision.content, quotes)
            if text != revision.content:
                PageRevision.objects.filter(pk=revision.pk).update(content=text)
        page.content = _without(page.content, quotes)
        Page.objects.filter(pk=page.pk).update(
            content=page.content, content_hash=page.fingerprint()
        )
        _index(page)
        changed.append(page.pk)
    if changed:
        PAGE_FTS.purge()
    return {"changed": changed, "not_editable": others}


def _without(text: str, quotes: Sequence[str]) -> str:
    for quote in quotes:
        text = text.replace(quote, FORGOTTEN)
    return text


def wiki_decisions_about(*, actor: Actor, topic: str) -> list[Page]:
    """The standing decision records ``actor`` may edit that are about ``topic``, read
    in their own words as a fact is (``memoryhub.engine.search.topic``): every name the
    topic gives, and one of its other words; or, without names, all of its words."""
    read = topic_read(topic)
    if read.empty:
        return []
    decisions = [
        page
        for page in Page.objects.filter(kind__in=DECISION_KINDS, status=PageStatus.ACTIVE)
        .visible_to(actor.user)
        .select_related("team")
        .order_by("pk")
        if page.can_be_edited_by(actor.user)
    ]
    texts = {page.pk: f"{page.title}\n{page.content}" for page in decisions}
    about = topic_refine(read, list(texts.values()))
    found = []
    for page in decisions:
        held = topic_match(about, texts[page.pk])
        if about.names:
            if held.clear and (not about.terms or held.terms):
                found.append(page)
        elif about.terms and len(held.terms) == len(about.terms):
            found.append(page)
    return found


def wiki_decisions_abandon(*, actor: Actor, topic: str) -> list[int]:
    """Mark the decision records about ``topic`` abandoned (forgetting it): they stay,
    saying the decision no longer stands. Returns their ids."""
    now = timezone.now()
    ids = [page.pk for page in wiki_decisions_about(actor=actor, topic=topic)]
    Page.objects.filter(pk__in=ids, status=PageStatus.ACTIVE).update(
        status=PageStatus.ABANDONED, abandoned_at=now
    )
    return ids
