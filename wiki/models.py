"""Wiki pages (scoped rows with their scanner verdict) and their revisions.

Slugs are unique per (owner, project): two owners may each have a private "deploy"
page, but within what one person can reach in a project a slug names one page. The
write service enforces the second half: writing a title whose slug belongs to a page of
another owner that the writer can see but not edit answers 409, rather than quietly
creating a second page that shadows it.
"""

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import ExpressionWrapper, F, Q
from django.utils import timezone

from teams.models import Membership, ScopedModel, Visibility

# Markdown pages are documents, not facts: 200 KB is a long runbook with room to spare.
MAX_CONTENT_CHARS: int = getattr(settings, "WIKI_MAX_CONTENT_CHARS", 200_000)
MAX_TITLE_CHARS = 200


class Kind(models.TextChoices):
    """The usual kinds; any short lowercase word is accepted (see ``KIND_PATTERN``)."""

    NOTE = "note", "Note"
    RUNBOOK = "runbook", "Runbook"
    ADR = "adr", "Decision record"
    PDD = "pdd", "Product design"
    REVIEW = "review", "Review"
    TRIAGE = "triage", "Triage"


KIND_PATTERN = r"^[a-z0-9][a-z0-9-]{0,39}$"
# The kinds that record a decision: forgetting a topic abandons those about it.
DECISION_KINDS = ("adr", "decision")


class PageStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    # A decision whose topic its owner had forgotten: kept, marked as no longer standing.
    ABANDONED = "abandoned", "Abandoned"


def page_fingerprint(
    *, title: str, content: str, tags: list[str], kind: str, visibility: str
) -> str:
    """A hash of everything a page file carries; folder sync compares it to skip
    files that have not changed."""
    payload = json.dumps([title, content, tags, kind, visibility], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


class Page(ScopedModel):
    """A Markdown page with its injection-scan findings and the review that clears them."""

    title = models.CharField(max_length=MAX_TITLE_CHARS)
    slug = models.SlugField(max_length=MAX_TITLE_CHARS, allow_unicode=True)
    content = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    kind = models.CharField(max_length=40, default=Kind.NOTE, db_index=True)
    status = models.CharField(max_length=16, choices=PageStatus.choices, default=PageStatus.ACTIVE)
    abandoned_at = models.DateTimeField(null=True, blank=True)
    # The fleet of the agent that wrote it ("" for a person's page, read by every fleet):
    # an agent of another fleet does not read it (``ScopedQuerySet.visible_to``).
    fleet = models.CharField(max_length=100, blank=True, default="", db_index=True)
    content_hash = models.CharField(max_length=64, blank=True, default="")

    findings = models.JSONField(default=list, blank=True)
    scanner_version = models.CharField(max_length=40, blank=True, default="")
    flagged = models.BooleanField(default=False, db_index=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    # The model that embedded the page's passages; "" while they wait for vectors.
    embedding_model = models.CharField(max_length=200, blank=True, default="")

    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "project", "slug"], name="wiki_page_unique_owner_project_slug"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_approved(self) -> bool:
        return self.approved_at is not None

    @property
    def withheld_from_agents(self) -> bool:
        """Agents get a flagged page's content only once a person has approved it."""
        return self.flagged and not self.is_approved

    def fingerprint(self) -> str:
        return page_fingerprint(
            title=self.title,
            content=self.content,
            tags=list(self.tags),
            kind=self.kind,
            visibility=self.visibility,
        )

    def can_be_edited_by(self, user: Any) -> bool:
        """Who may change the text: whoever manages the page (its owner, an admin of its
        team) and, for a team page, every member of that team. Deleting it and changing
        who may read it stay with those who manage it (``is_editable_by``); letting more
        people read it, with its owner (``is_widenable_by``)."""
        if self.is_editable_by(user):
            return True
        return (
            self.visibility == Visibility.TEAM
            and self.team_id is not None
            and Membership.objects.filter(user_id=user.pk, team_id=self.team_id).exists()
        )

    def editors_description(self) -> str:
        """Who may edit the page and why, as the page tells its readers."""
        owner = self.owner.get_username()
        if self.visibility == Visibility.TEAM and self.team_id is not None:
            return (
                f"Members of {self.team.name} may edit this team page; {owner} (its owner) "
                "and the team's admins may also delete it or make it private, and only "
                f"{owner} may share it more widely."
            )
        if self.visibility == Visibility.TEAM:
            return f"Only {owner} (its owner) may edit this page: it belongs to no team."
        return (
            f"Only {owner} (its owner) may edit this {self.visibility} page; make it a team "
            "page to let a team edit it."
        )

    @property
    def version(self) -> str:
        """Changes with what the page says: a reviewer's approval names the version they
        read, so text saved meanwhile is not released unread."""
        return self.content_hash

    def can_be_reviewed_by(self, user: Any) -> bool:
        """Who reviews a flagged page (rejects it, sees it in the review queue): its
        owner, an admin of its team, or staff who can see it. Approving it also takes
        someone other than those who saved its text (``approval_refusal``)."""
        return self.is_editable_by(user) or (bool(user.is_staff) and self.is_visible_to(user))

    def text_editor_ids(self) -> set[int]:
        """The users who saved the text under review (see ``PageRevisionQuerySet``)."""
        return PageRevision.objects.text_editor_ids([self.pk]).get(self.pk, set())

    def approval_refusal(self, user: Any, *, editor_ids: set[int] | None = None) -> str:
        """Why ``user`` may not release this flagged page to agents, or "" if they may.

        Approval is a second pair of eyes: a reviewer (``can_be_reviewed_by``) who did
        not save the text under review, in person or through an agent (whose revisions
        are its token's user's). ``editor_ids`` saves the query when the caller has them.
        """
        if not self.can_be_reviewed_by(user):
            return "Only the page's owner, an admin of its team or staff can approve it."
        return self.own_text_refusal(user, editor_ids=editor_ids)

    def own_text_refusal(self, user: Any, *, editor_ids: set[int] | None = None) -> str:
        """Why ``user``, a reviewer of this page, may not approve it because they saved
        the text under review ("" if they did not), naming who else may."""
        if editor_ids is None:
            editor_ids = self.text_editor_ids()
        if user.pk not in editor_ids:
            return ""
        saved = "You saved this text (yourself or through one of your agents)"
        if self.visibility == Visibility.PRIVATE or self.team_id is None:
            return (
                f"{saved}, so someone else must approve it, and only you can read this "
                f"{self.visibility} page: make it a team page for an admin of the team to "
                "review, or change its text."
            )
        others = [] if self.owner_id == user.pk else [f"its owner {self.owner.get_username()}"]
        if self.visibility == Visibility.TEAM:
            others += [f"an admin of {self.team.name}", f"a staff member of {self.team.name}"]
        else:
            others.append("a staff member")
        who = ", ".join(others[:-1]) + f" or {others[-1]}" if len(others) > 1 else others[0]
        return f"{saved}, so someone else must approve it: {who}."

    def can_be_approved_by(self, user: Any) -> bool:
        """A reviewer other than those who saved the text under review."""
        return not self.approval_refusal(user)


class PagePassage(models.Model):
    """One passage of a page's current text, the unit a search by meaning finds. Its text
    is not stored (it is the page's, cut by ``wiki.search.page_passages``): only its
    vector, under this row's id."""

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="passages")
    number = models.PositiveIntegerField()

    class Meta:
        ordering = ["page", "number"]
        constraints = [
            models.UniqueConstraint(fields=["page", "number"], name="wiki_passage_unique_number")
        ]

    def __str__(self) -> str:
        return f"{self.page_id}#{self.number}"


class PageRevisionQuerySet(models.QuerySet):
    def text_editor_ids(self, page_ids: Iterable[int]) -> dict[int, set[int]]:
        """For each page, the users who saved the text under review: the author of the
        revision that brought in its current title and content, and of every save
        since (of its tags, say), the latest always included. An agent's revision
        counts as its token's user's."""
        same_text = ExpressionWrapper(
            Q(title=F("page__title")) & Q(content=F("page__content")),
            output_field=models.BooleanField(),
        )
        rows = (
            self.filter(page_id__in=list(page_ids))
            .annotate(same_text=same_text)
            .order_by("page_id", "-number")
            .values_list("page_id", "author_id", "same_text")
        )
        editors: dict[int, set[int]] = {}
        done: set[int] = set()
        for page_id, author_id, same in rows:
            if page_id in done:
                continue
            latest = page_id not in editors
            found = editors.setdefault(page_id, set())
            if (same or latest) and author_id is not None:
                found.add(author_id)
            if not same:
                done.add(page_id)
        return editors


class PageRevision(models.Model):
    """One saved state of a page: who saved it, when, and what it said."""

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The agent that wrote it, when one did: the history shows "alice via agent X".
    author_label = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    title = models.CharField(max_length=MAX_TITLE_CHARS)
    content = models.TextField()
    tags = models.JSONField(default=list, blank=True)

    objects = PageRevisionQuerySet.as_manager()

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["page", "number"], name="wiki_revision_unique_page_number"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.page_id} r{self.number}"
