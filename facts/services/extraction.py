"""Extracting the durable facts of a conversation with the chat model, and the review
queue their owner approves or rejects them in when review is required."""

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from facts.models import Fact, MemoryReview, ReviewState
from facts.search import FACT_FTS
from facts.services.cleaning import EXCERPT_LENGTH
from facts.services.create import WriteResult, fact_create
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import ApplicationError, Conflict, InvalidInput, NotFound
from memoryhub.engine.models import Job, MemoryConfig
from teams.services import Actor, audit_log, scope_for_new_row

# Longer conversations are extracted by a job, not in the request.
EXTRACT_INLINE_CHARS = 8_000
EXTRACT_MAX_CHARS = 500_000
EXTRACT_MAX_MESSAGES = 2_000
# A proposal sharing this much of an active fact's words (but not enough to repeat it)
# and naming the same things, with other values, is about the same subject.
SAME_SUBJECT_MIN = 0.34


@dataclass
class Conversation:
    """What to extract from: messages ({role, content}) or a text taken as the user's."""

    messages: list[dict[str, str]] | None
    text: str | None

    @property
    def length(self) -> int:
        if self.text is not None:
            return len(self.text)
        return sum(len(m["content"]) for m in self.messages or ())


def conversation_clean(*, messages: Any = None, text: Any = None) -> Conversation:
    """Validate what an extraction was given: one of messages or text, within bounds."""
    if (messages is None) == (text is None):
        raise InvalidInput("Send either messages or text to extract from.")
    if text is not None:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("The text to extract from is empty.")
        if len(text) > EXTRACT_MAX_CHARS:
            raise InvalidInput(f"At most {EXTRACT_MAX_CHARS} characters at a time.")
        return Conversation(messages=None, text=text)
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content}.")
    if len(messages) > EXTRACT_MAX_MESSAGES:
        raise InvalidInput(f"At most {EXTRACT_MAX_MESSAGES} messages at a time.")
    cleaned = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise InvalidInput(f"Message {index} needs a content string.")
        role = message.get("role", "user")
        if role not in ("user", "assistant", "system"):
            raise InvalidInput(f"Message {index}: role is user, assistant or system.")
        cleaned.append({"role": role, "content": message["content"]})
    conversation = Conversation(messages=cleaned, text=None)
    if conversation.length > EXTRACT_MAX_CHARS:
        raise InvalidInput(f"At most {EXTRACT_MAX_CHARS} characters at a time.")
    return conversation


def memory_extract(
    *,
    actor: Actor,
    conversation: Conversation,
    session_id: str = "",
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
    in_request: bool = False,
) -> dict[str, Any]:
    """Propose the durable facts of a conversation: written through the normal rules
    (merge, supersede, cap), or, with review required, queued for their owner. A
    proposal saying another value of an active fact's subject supersedes it. Call
    outside a transaction: the model may take long (``in_request``: as long as a request
    waits for it at most, see ``llm_provider_get``)."""
    from memoryhub.engine.llm import ChatMessage
    from memoryhub.engine.llm.configured import llm_provider_get

    scope = scope_for_new_row(user=actor.user, team=team, visibility=visibility, project=project)
    if len(session_id) > 200:
        raise InvalidInput("session_id is at most 200 characters.")
    provider = llm_provider_get(in_request=in_request)
    if conversation.text is not None:
        answer = provider.extract_facts(conversation.text)
    else:
        answer = provider.extract_facts([ChatMessage(**m) for m in conversation.messages])
    config = memory_config_get()
    items = [
        {
            "content": p.content,
            "category": p.category,
            "importance": p.importance,
            "confidence": p.confidence,
            "sentiment": p.sentiment,
            "tags": p.tags,
            "source": p.source,
            "origin": p.origin,
            "source_excerpt": (p.excerpt or p.content)[:EXCERPT_LENGTH],
            "extraction_confidence": p.confidence,
            "session_id": session_id,
            "supersedes": _contradicted(scope=scope, content=p.content, config=config),
        }
        for p in answer.facts
    ]
    if config.extraction_review_required:
        with transaction.atomic():
            reviews = [
                _review_create(actor=actor, scope=scope, item=item, provider=answer.provider)
                for item in items
            ]
            audit_log(
                actor=actor,
                action="memory.extract",
                target_type="review",
                target_id=reviews[0].pk if reviews else "",
                details={"proposals": len(reviews), "provider": answer.provider},
            )
        return {"mode": "review", "provider": answer.provider, "reviews": [r.pk for r in reviews]}
    written = [_extracted_write(actor=actor, scope=scope, item=item) for item in items]
    return {
        "mode": "written",
        "provider": answer.provider,
        "facts": [
            {"id": r.fact.pk, "outcome": "created" if r.created else "merged"} for r in written
        ],
    }


def memory_extract_or_queue(
    *,
    actor: Actor,
    conversation: Conversation,
    session_id: str = "",
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
) -> dict[str, Any] | Job:
    """Extract a conversation while the request waits, or queue a job for it (returned):
    a long conversation, or one that finds the calls the process's requests may make to
    the chat model at once all under way, goes to a job. A chat model that fails, or that
    is left alone after failing again and again, raises its error: nothing is written."""
    from memoryhub.engine.llm import ChatModelBusy

    where = {"session_id": session_id, "project": project, "visibility": visibility, "team": team}
    if conversation.length <= EXTRACT_INLINE_CHARS:
        try:
            return memory_extract(actor=actor, conversation=conversation, in_request=True, **where)
        except ChatModelBusy:
            pass  # nothing was asked or written: the worker waits its turn instead
    return memory_extract_request(actor=actor, conversation=conversation, **where)


def memory_extract_request(
    *,
    actor: Actor,
    conversation: Conversation,
    session_id: str = "",
    project: str = "",
    visibility: str | None = None,
    team: str | int | None = None,
) -> Any:
    """A job extracting a long conversation, queued once this commits; the scope is
    checked now, so a job never fails on it later."""
    from facts.tasks import memory_extract as memory_extract_task
    from memoryhub.engine.jobs import job_create

    scope_for_new_row(user=actor.user, team=team, visibility=visibility, project=project)
    arguments = {
        "messages": conversation.messages,
        "text": conversation.text,
        "session_id": session_id,
        "project": project,
        "visibility": visibility,
        "team": team,
        "token": actor.token.pk if actor.token else None,
    }
    job = job_create(
        owner=actor.user, kind="extract", task=memory_extract_task, arguments=arguments
    )
    return job


def _scope_data(scope: dict[str, Any]) -> dict[str, Any]:
    team = scope["team"]
    return {
        "visibility": scope["visibility"],
        "team": team.pk if team is not None else None,
        "project": scope["project"],
    }


def _extracted_write(*, actor: Actor, scope: dict[str, Any], item: dict[str, Any]) -> WriteResult:
    data = {**item, **_scope_data(scope)}
    if data["supersedes"] is None:
        data.pop("supersedes")
    return fact_create(actor=actor, data=data)


def _review_create(
    *, actor: Actor, scope: dict[str, Any], item: dict[str, Any], provider: str
) -> MemoryReview:
    values = {k: v for k, v in item.items() if k not in ("extraction_confidence", "supersedes")}
    return MemoryReview.objects.create(
        owner=actor.user,
        team=scope["team"],
        visibility=scope["visibility"],
        project=scope["project"],
        provider=provider,
        supersedes_id=item["supersedes"],
        **values,
    )


def _contradicted(*, scope: dict[str, Any], content: str, config: MemoryConfig) -> int | None:
    """The active fact of the scope that ``content`` gives another value of (the same
    subject: many shared words, the same names; each side with words of its own), if
    any. A near-duplicate is not a contradiction: the write rules merge it."""
    from facts.dedupe import content_words, names

    team = scope["team"]
    candidates = Fact.objects.filter(
        owner_id=scope["owner"].pk,
        team_id=team.pk if team is not None else None,
        visibility=scope["visibility"],
        project=scope["project"],
        layer=1,
    ).recallable()
    hits = FACT_FTS.search_words(content, limit=5, within=candidates)
    new_words, new_names = content_words(content), names(content)
    for hit in hits:
        old = Fact.objects.filter(pk=hit.id).values_list("content", flat=True).first()
        if old is None:
            continue
        old_words = content_words(old)
        shared = len(new_words & old_words)
        similarity = shared / max(1, len(new_words | old_words))
        if not SAME_SUBJECT_MIN <= similarity < config.dedupe_similarity:
            continue
        if new_names and not new_names & names(old):
            continue
        if new_words - old_words and old_words - new_words:
            return hit.id
    return None


def memory_reviews_pending(*, user: Any) -> Any:
    """The proposals waiting for ``user``: theirs alone, newest first."""
    return MemoryReview.objects.filter(owner_id=user.pk, state=ReviewState.PENDING)


def _review_for_decision(*, actor: Actor, review_id: int) -> MemoryReview:
    review = MemoryReview.objects.select_for_update(of=("self",)).filter(pk=review_id).first()
    if review is None or review.owner_id != actor.user.pk:
        raise NotFound(f"No proposal {review_id}.")
    if review.state != ReviewState.PENDING:
        raise Conflict(f"Proposal {review_id} was {review.state} already.")
    return review


REVIEW_EDITABLE = ("content", "category", "importance", "confidence", "sentiment", "tags",
                   "visibility", "team", "project")  # fmt: skip


@transaction.atomic
def memory_review_approve(
    *, actor: Actor, review_id: int, edits: dict[str, Any] | None = None
) -> WriteResult:
    """Write a proposal as a fact (with the owner's edits), through the normal write
    rules: it may merge into a repeat, and supersede the fact it contradicts."""
    review = _review_for_decision(actor=actor, review_id=review_id)
    unknown = sorted(set(edits or {}) - set(REVIEW_EDITABLE))
    if unknown:
        raise InvalidInput(f"These fields cannot be edited: {', '.join(unknown)}.")
    data = {
        "content": review.content,
        "category": review.category,
        "importance": review.importance,
        "confidence": review.confidence,
        "sentiment": review.sentiment,
        "tags": review.tags,
        "source": review.source,
        "origin": review.origin,
        "source_excerpt": review.source_excerpt,
        "extraction_confidence": review.confidence,
        "session_id": review.session_id,
        "visibility": review.visibility,
        "team": review.team_id,
        "project": review.project,
        **(edits or {}),
    }
    if (
        review.supersedes_id
        and Fact.objects.filter(pk=review.supersedes_id, superseded_by__isnull=True).exists()
    ):
        data["supersedes"] = review.supersedes_id
    result = fact_create(actor=actor, data=data)
    MemoryReview.objects.filter(pk=review.pk).update(
        state=ReviewState.APPROVED, decided_at=timezone.now(), fact=result.fact
    )
    audit_log(
        actor=actor,
        action="review.approve",
        target_type="review",
        target_id=review.pk,
        details={"fact": result.fact.pk, "edited": sorted(edits or {})},
    )
    return result


@transaction.atomic
def memory_review_reject(*, actor: Actor, review_id: int) -> None:
    review = _review_for_decision(actor=actor, review_id=review_id)
    MemoryReview.objects.filter(pk=review.pk).update(
        state=ReviewState.REJECTED, decided_at=timezone.now()
    )
    audit_log(actor=actor, action="review.reject", target_type="review", target_id=review.pk)


def memory_reviews_decide(*, actor: Actor, review_ids: list[int], approve: bool) -> dict:
    """Approve or reject many proposals: each on its own (one refused leaves the
    others decided); says which were done and which refused, and why."""
    done, refused = [], {}
    for review_id in dict.fromkeys(review_ids):
        try:
            if approve:
                memory_review_approve(actor=actor, review_id=review_id)
            else:
                memory_review_reject(actor=actor, review_id=review_id)
        except ApplicationError as exc:
            refused[review_id] = exc.message
        else:
            done.append(review_id)
    return {"done": done, "refused": refused}
