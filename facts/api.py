"""The fact store's JSON API: memories, search, recall, stats and export."""

import json
from collections.abc import Iterator
from datetime import date
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils import timezone
from ninja import Field, Query, Router, Schema, Status

from facts import selectors
from facts.learnings import learning_create
from facts.schemas import (
    BatchOut,
    FactBatchIn,
    FactIn,
    FactListOut,
    FactOut,
    FactPatch,
    FactSearchOut,
    FactWriteOut,
    FingerprintOut,
    LayerStatOut,
    LearningIn,
    LearningOut,
    StatsOut,
)
from facts.selectors import fact_as_dict
from facts.services.create import fact_bulk_create, fact_create
from facts.services.distillation import facts_distill_request
from facts.services.extraction import (
    conversation_clean,
    memory_extract_or_queue,
    memory_review_approve,
    memory_review_reject,
    memory_reviews_decide,
    memory_reviews_pending,
)
from facts.services.update import fact_update
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.models import Job
from memoryhub.engine.paging import next_page_url, page_window_check
from memoryhub.engine.refs import RowId
from teams.auth import read_auth, write_auth
from teams.services import Actor, audit_log

router = Router(tags=["memories"])

EXPORT_FORMAT = "memoryhub.facts"
EXPORT_VERSION = 1
STATUS_HELP = "active (the default), pending_review, archived, or all"


class ListFilters(Schema):
    category: str | None = None
    layer: int | None = None
    visibility: str | None = None
    project: str | None = None
    status: str | None = Field(None, description=STATUS_HELP)
    team: str | None = None
    source: str | None = None
    tag: str | None = None
    created_from: date | None = Field(None, description="Created on or after this day")
    created_to: date | None = Field(None, description="Created on or before this day")
    sort: str = "newest"
    limit: int = 50
    offset: int = 0


def _page(request: HttpRequest, query, *, limit: int, offset: int) -> dict[str, Any]:
    page_window_check(limit=limit, offset=offset)
    count = query.count()
    rows = list(
        query.select_related("created_by", "created_by_token").prefetch_related("derived_from")[
            offset : offset + limit
        ]
    )
    return {
        "items": [fact_as_dict(f) for f in rows],
        "count": count,
        "next": next_page_url(request, limit=limit, offset=offset, count=count),
    }


@router.get("/memories", response=FactListOut, auth=read_auth)
def list_memories(request: HttpRequest, filters: Query[ListFilters]) -> dict[str, Any]:
    """Visible memories, filtered, sorted and paginated (limit/offset). Active ones
    unless `status` asks for others: `archived` includes the earlier wordings merges
    keep, `all` every status."""
    data = filters.dict()
    sort, limit, offset = data.pop("sort"), data.pop("limit"), data.pop("offset")
    query = selectors.fact_list_visible(user=request.user, filters=data, sort=sort)
    return _page(request, query, limit=limit, offset=offset)


@router.post("/memories", response={200: FactWriteOut, 201: FactWriteOut}, auth=write_auth)
def create_memory(request: HttpRequest, payload: FactIn) -> Status:
    """Store a memory: 201 with the new fact, or 200 with the existing fact it was
    merged into as a near-duplicate. Only a fact of the same visibility, team, project
    and layer is ever merged into, so a merge never changes who can read what."""
    result = fact_create(actor=Actor.from_request(request), data=payload.dict(exclude_none=True))
    # The fact as this write left it: another request may change or delete it next.
    outcome = "created" if result.created else "merged"
    return Status(201 if result.created else 200, {**fact_as_dict(result.fact), "outcome": outcome})


@router.post("/memories/batch", response={201: BatchOut}, auth=write_auth)
def create_memories(request: HttpRequest, payload: FactBatchIn) -> Status:
    """Store up to 1,000 memories at once; one invalid item rejects the whole batch.

    Items are taken in order, as if posted one by one: an item that repeats a stored
    memory, or an earlier item of the batch, merges into it (``created: false``)."""
    results = fact_bulk_create(
        actor=Actor.from_request(request),
        items=[item.dict(exclude_none=True) for item in payload.items],
    )
    created = sum(1 for r in results if r.created)
    return Status(
        201,
        {
            "items": [{"id": r.fact.pk, "created": r.created} for r in results],
            "created": created,
            "merged": len(results) - created,
        },
    )


@router.get("/memories/search", response=FactSearchOut, auth=read_auth)
def search_memories(
    request: HttpRequest, q: str, limit: int = 20, mode: str = "hybrid"
) -> dict[str, Any]:
    """Memories for a search, best first. `mode=hybrid` (the default) reads a sentence
    as recall does: "who owns billing" finds what "owns billing" finds, and memories
    close in meaning come too (keyword only when embeddings are off; the answer's `mode`
    says which ran). `mode=exact`: memories whose content or tags hold every word."""
    if not 1 <= limit <= 200:
        raise InvalidInput("limit must be between 1 and 200.")
    found = selectors.fact_search(user=request.user, query=q, limit=limit, mode=mode)
    # With their provenance, in one go rather than a query per fact.
    facts = selectors.fact_get_many_visible(user=request.user, fact_ids=[f.pk for f in found.facts])
    return {
        "items": [fact_as_dict(f) for f in facts],
        "count": len(facts),
        "next": None,
        "mode": found.mode,
    }


@router.get("/memories/stats", response=StatsOut, auth=read_auth)
def memory_stats(
    request: HttpRequest, status: str | None = Query(None, description=STATUS_HELP)
) -> dict[str, Any]:
    """Counts of visible memories by category, visibility and layer, of active ones
    unless `status` asks for others; `by_status` counts every status."""
    return selectors.fact_stats(user=request.user, status=status)


class JobRefOut(Schema):
    job: int


class MessageIn(Schema):
    role: Literal["user", "assistant", "system"] = "user"
    content: str


class ExtractIn(Schema):
    messages: list[MessageIn] | None = None
    text: str | None = None
    session_id: str = ""
    project: str = ""
    visibility: Literal["private", "team", "global"] | None = None
    team: str | None = None


@router.post("/memories/extract", response={200: dict, 202: JobRefOut}, auth=write_auth)
def extract(request: HttpRequest, payload: ExtractIn) -> Status:
    """Propose the durable facts of a conversation (messages, or a text taken as said
    by the user): "remember that ..." becomes an explicit fact stated by the user, the
    rest extracted with its excerpt and confidence. They are written through the usual
    rules (a repeat merges, another value of a fact's subject supersedes it), or, when
    Settings -> Memory asks for review, wait for you under `/api/memories/reviews`. A
    long conversation runs as a job (202), as does one arriving while this server's
    calls to the chat model are all under way. A chat model that does not answer in
    time, or that keeps failing, is a 503 (with `Retry-After` when known): nothing is
    written."""
    actor = Actor.from_request(request)
    conversation = conversation_clean(
        messages=[m.dict() for m in payload.messages] if payload.messages is not None else None,
        text=payload.text,
    )
    scope = {
        "session_id": payload.session_id,
        "project": payload.project,
        "visibility": payload.visibility,
        "team": payload.team,
    }
    outcome = memory_extract_or_queue(actor=actor, conversation=conversation, **scope)
    if isinstance(outcome, Job):
        return Status(202, {"job": outcome.pk})
    return Status(200, outcome)


class ReviewOut(Schema):
    id: int
    content: str
    category: str
    importance: float
    confidence: float
    sentiment: str
    tags: list[str]
    source: str
    origin: str
    source_excerpt: str
    visibility: str
    project: str
    supersedes: int | None = Field(None, alias="supersedes_id")
    provider: str
    created_at: str


class ReviewListOut(Schema):
    items: list[ReviewOut]
    count: int
    next: str | None = None


class ReviewEditIn(Schema):
    content: str | None = None
    category: str | None = None
    importance: float | None = None
    confidence: float | None = None
    sentiment: str | None = None
    tags: list[str] | None = None
    visibility: Literal["private", "team", "global"] | None = None
    team: str | None = None
    project: str | None = None


class ReviewIdsIn(Schema):
    ids: list[RowId] = Field(min_length=1, max_length=500)


@router.get("/memories/reviews", response=ReviewListOut, auth=read_auth)
def reviews(request: HttpRequest, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """The facts extraction proposed for you, waiting for your review, newest first."""
    page_window_check(limit=limit, offset=offset)
    pending = memory_reviews_pending(user=request.user)
    count = pending.count()
    items = [
        {**review.__dict__, "created_at": review.created_at.isoformat()}
        for review in pending[offset : offset + limit]
    ]
    return {
        "items": items,
        "count": count,
        "next": next_page_url(request, limit=limit, offset=offset, count=count),
    }


@router.post("/memories/reviews/approve", response=dict, auth=write_auth)
def reviews_approve(request: HttpRequest, payload: ReviewIdsIn) -> dict[str, Any]:
    """Approve many proposals as they are: each written on its own."""
    return memory_reviews_decide(
        actor=Actor.from_request(request), review_ids=payload.ids, approve=True
    )


@router.post("/memories/reviews/reject", response=dict, auth=write_auth)
def reviews_reject(request: HttpRequest, payload: ReviewIdsIn) -> dict[str, Any]:
    """Reject many proposals."""
    return memory_reviews_decide(
        actor=Actor.from_request(request), review_ids=payload.ids, approve=False
    )


@router.post("/memories/reviews/{review_id}/approve", response=FactWriteOut, auth=write_auth)
def review_approve(
    request: HttpRequest, review_id: int, payload: ReviewEditIn | None = None
) -> dict[str, Any]:
    """Approve a proposal, edited first with the fields you send: it is written as a
    fact (merging into a repeat, superseding the fact it contradicts)."""
    edits = payload.dict(exclude_none=True) if payload is not None else {}
    result = memory_review_approve(
        actor=Actor.from_request(request), review_id=review_id, edits=edits
    )
    outcome = "created" if result.created else "merged"
    return {**fact_as_dict(result.fact), "outcome": outcome}


@router.post("/memories/reviews/{review_id}/reject", response={204: None}, auth=write_auth)
def review_reject(request: HttpRequest, review_id: int) -> Status:
    """Reject a proposal: nothing is written."""
    memory_review_reject(actor=Actor.from_request(request), review_id=review_id)
    return Status(204, None)


class DistillIn(Schema):
    project: str | None = None


@router.post("/memories/distill-now", response={202: JobRefOut}, auth=write_auth)
def distill_now(request: HttpRequest, payload: DistillIn) -> Status:
    """Distill your memory now: a job (see `GET /api/jobs/{id}`) that rolls each of your
    scopes with enough new facts into summaries, and summaries into a profile."""
    job = facts_distill_request(actor=Actor.from_request(request), project=payload.project)
    return Status(202, {"job": job.pk})


@router.get("/memories/layer-stats", response=list[LayerStatOut], auth=read_auth)
def memory_layer_stats(
    request: HttpRequest, status: str | None = Query(None, description=STATUS_HELP)
) -> list[dict[str, Any]]:
    """Per distillation layer: how many memories of `status` (active unless it asks for
    others) and how many of them distilled, and how many of the layer are active."""
    return selectors.fact_layer_stats(user=request.user, status=status)


@router.get("/memories/export", auth=read_auth)
def export_memories(request: HttpRequest) -> HttpResponse:
    """Every visible memory with its provenance, streamed as one JSON document."""
    actor = Actor.from_request(request)
    audit_log(actor=actor, action="fact.export", target_type="user", target_id=request.user.pk)

    def stream() -> Iterator[str]:
        header = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "exported_at": timezone.now().isoformat(),
            "user": request.user.get_username(),
        }
        yield json.dumps(header)[:-1] + ', "facts": ['
        for index, row in enumerate(selectors.fact_export_rows(user=request.user)):
            yield ("," if index else "") + "\n" + json.dumps(row)
        yield "\n]}\n"

    response = StreamingHttpResponse(stream(), content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="memoryhub-facts.json"'
    return response


def _etag(fact) -> str:
    return f'"{fact.version}"'


def if_match_version(request: HttpRequest) -> str | None:
    """The version an ``If-Match`` header names (None: change whatever is there)."""
    header = request.headers.get("If-Match", "").strip()
    if not header or header == "*":
        return None
    return header.removeprefix("W/").strip('"')


@router.get("/memories/{fact_id}", response=FactOut, auth=read_auth)
def get_memory(request: HttpRequest, response: HttpResponse, fact_id: int) -> dict[str, Any]:
    """One visible memory. Its `ETag` names this version: send it back as `If-Match`
    with a change, and the change is refused (412) if someone changed the memory since."""
    fact = selectors.fact_get_visible(user=request.user, fact_id=fact_id)
    response["ETag"] = _etag(fact)
    return fact_as_dict(fact)


@router.patch("/memories/{fact_id}", response=FactOut, auth=write_auth)
def update_memory(
    request: HttpRequest, response: HttpResponse, fact_id: int, payload: FactPatch
) -> dict[str, Any]:
    """Change a memory you own (or, for team memories, administer: an admin of its team
    may make it private but not let more people read it, 403). With `If-Match`, only if
    it is still the version you read (412 otherwise); 404 if it was deleted."""
    fact = selectors.fact_get_visible(user=request.user, fact_id=fact_id)
    changes = payload.dict(exclude_unset=True)
    if not changes:
        raise InvalidInput("Nothing to change: send at least one field.")
    fact = fact_update(
        actor=Actor.from_request(request),
        fact=fact,
        changes=changes,
        expected_version=if_match_version(request),
    )
    response["ETag"] = _etag(fact)
    return fact_as_dict(fact)


@router.post("/learnings", response={201: LearningOut}, auth=write_auth, tags=["learnings"])
def learning_post(request: HttpRequest, payload: LearningIn) -> Status:
    """Append a learning of a skill (never merged, never edited): it joins the skill
    tier of tiered recall, and with a fingerprint cluster the fingerprint index."""
    fact = learning_create(
        actor=Actor.from_request(request), data=payload.model_dump(exclude_none=True)
    )
    return Status(201, selectors.learning_as_dict(fact))


@router.get(
    "/learnings/fingerprints/{cluster}",
    response=FingerprintOut,
    auth=read_auth,
    tags=["learnings"],
)
def learnings_fingerprint(request: HttpRequest, cluster: str, limit: int = 50) -> dict[str, Any]:
    """The fingerprint index of a cluster: its learnings you may read and their
    resolutions (an agent sees its own fleet's and those of no fleet)."""
    actor = Actor.from_request(request)
    return selectors.learnings_of_fingerprint(
        user=actor.user,
        fleet=actor.token.fleet if actor.token is not None else None,
        cluster=cluster,
        limit=limit,
    )
