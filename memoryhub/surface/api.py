"""The JSON API of what spans the apps: recall with the role preset's reads, tiered
recall, forgetting, the personal export and import, and the agent tools over REST.

Deleting a memory with ``cascade=true`` forgets it across the apps, so that operation is
added here to the fact store's ``/memories/{fact_id}`` route (one route serves all of a
path's methods).
"""

from typing import Any, Literal

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from ninja import Body, Field, Router, Schema, Status

from facts.api import if_match_version
from facts.api import router as facts_router
from facts.schemas import RecallIn, RecallOut
from facts.selectors import fact_get_visible
from facts.services.update import fact_delete
from memoryhub.engine.refs import RowId
from memoryhub.surface.chat import turn_recall
from memoryhub.surface.export import export_schema, personal_export
from memoryhub.surface.forget import memory_forget, memory_forget_preview
from memoryhub.surface.imports import (
    document_parse,
    document_too_large,
    import_max_bytes,
    memories_import_request,
)
from memoryhub.surface.recall import DEFAULT_LIMIT, tiered_recall
from memoryhub.surface.tools import (
    tool_call,
    tool_describe,
    tool_list_usable,
    tool_openai_function,
    tools_prompt,
)
from teams.auth import any_scope_auth, read_auth, write_auth
from teams.services import Actor

router = Router()


@facts_router.delete("/memories/{fact_id}", response={200: dict, 204: None}, auth=write_auth)
def delete_memory(request: HttpRequest, fact_id: int, cascade: bool = False) -> Status:
    """Delete a memory you own, with its index entries and vector (with `If-Match`,
    only if it is still the version you read). With `cascade=true` it is forgotten with
    everything derived from it, as `POST /api/forget` does, and the answer is the
    receipt."""
    fact = fact_get_visible(user=request.user, fact_id=fact_id)
    actor = Actor.from_request(request)
    if cascade:
        return Status(200, memory_forget(actor=actor, topic=f"fact {fact_id}", ids=[fact_id]))
    fact_delete(actor=actor, fact=fact, expected_version=if_match_version(request))
    return Status(204, None)


@router.post("/recall", response=RecallOut, auth=read_auth, tags=["recall"])
def recall(request: HttpRequest, payload: RecallIn) -> dict[str, Any]:
    """The `## Recalled Facts` block for a message, with each item's score breakdown."""
    return turn_recall(
        actor=Actor.from_request(request),
        query=payload.query,
        project=payload.project,
        max_items=payload.max_items,
        char_budget=payload.char_budget,
    )


class ForgetIn(Schema):
    topic: str = Field(description="What to forget, in words: matched by words and meaning")
    dry_run: bool = Field(False, description="Only preview the matches")
    ids: list[RowId] | None = Field(
        None,
        description="The facts to forget, chosen from the preview (default: its certain ones)",
    )


class ForgetMatchOut(Schema):
    id: int
    content: str
    category: str
    layer: int
    status: str
    visibility: str
    certain: bool = Field(description="About the topic beyond doubt; otherwise possibly")
    why: list[str]


class ForgetPossibleOut(Schema):
    id: int
    content: str
    why: list[str]


class ForgetDecisionOut(Schema):
    id: int
    title: str
    kind: str


class ForgetPreviewOut(Schema):
    topic: str
    matches: list[ForgetMatchOut]
    count: int
    certain: int = Field(description="How many of the matches are certain")
    possible: int = Field(description="How many may be about it (shown, not chosen)")
    decisions: list[ForgetDecisionOut] = Field(
        description="Decision records (wiki pages of kind adr or decision) about the topic "
        "that forgetting it marks abandoned"
    )


class ForgetReceiptOut(Schema):
    receipt_id: int
    topic: str
    removed: dict[str, int]
    regenerated: list[int]
    fact_ids: list[int]
    wiki_pages_not_editable: list[int]
    decisions_abandoned: list[int] = Field(
        description="The decision records about the topic, now marked abandoned"
    )
    possible: list[ForgetPossibleOut] = Field(
        description="Without ids: the possible matches, kept; forget them by id if meant"
    )


@router.post(
    "/forget", response=ForgetPreviewOut | ForgetReceiptOut, tags=["forget"], auth=write_auth
)
def forget(request: HttpRequest, payload: ForgetIn) -> dict:
    """Forget a topic, said as you would say it ("everything about my old job at Acme
    Corp"). With `dry_run` first: every fact of yours that may be about it, across
    categories and layers, each `certain` (it names the topic's names, or holds its
    words) or possible (some of them, or close in meaning), with why. Then with the
    `ids` you chose (or none: the certain ones; the possible ones are listed in the
    answer, kept): those facts go with everything derived from them (earlier wordings,
    summaries and profiles left without sources; others are rebuilt from what remains),
    their vectors, index rows and wiki quotations. The answer is the receipt; the audit
    log keeps the counts and ids, never the content nor the topic."""
    actor = Actor.from_request(request)
    if payload.dry_run:
        return memory_forget_preview(actor=actor, topic=payload.topic)
    return memory_forget(actor=actor, topic=payload.topic, ids=payload.ids)


@router.get("/export/personalization", tags=["export"], auth=read_auth)
def export_personalization(request: HttpRequest, user: str | None = None) -> HttpResponse:
    """Download everything MemoryHub holds about you, as one JSON document (its schema:
    `GET /api/export/schema`): your facts of every layer with provenance, lineage and
    history, review proposals, wiki pages and the revisions you saved, CodeGraph
    projects (metadata), settings, team memberships, agent tokens (never their secrets)
    and the audit events about you. Rows of other people (a teammate's team facts) are
    theirs, not in it. Streamed as it is read. Staff answering a data subject's request
    pass `user=<username>`; every export is audited."""
    subject, pieces = personal_export(actor=Actor.from_request(request), username=user)
    response = StreamingHttpResponse(pieces, content_type="application/json")
    name = f"memoryhub-export-{subject.pk}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@router.get("/export/schema", response=dict, tags=["export"], auth=None)
def export_schema_view(request: HttpRequest) -> dict:
    """The JSON Schema of the personal data export (`GET /api/export/personalization`)."""
    return export_schema()


class ImportOut(Schema):
    created: int = Field(description="Facts written")
    skipped: int = Field(description="Facts already in your memory (imported before)")
    already_readable: int = Field(
        description="Facts you can already read from their authors (global or team): left out"
    )
    merged: int = Field(description="Facts that repeated one of yours and were merged into it")
    made_private: int = Field(description="Team facts of a team you are not in, made private")
    links: int = Field(description="Lineage links (derived from, superseded by) made again")
    not_yours: int = Field(description="Facts of other people in a bulk export, left out")
    format: str


class ImportJobOut(Schema):
    job: int


IMPORT_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": ["object", "array"],
                "description": "A MemoryHub export (GET /api/export/personalization, of "
                "this format version or an older one, or GET /api/memories/export), or a "
                "Mem0 dump: its get_all list, or {results: [...]}.",
            }
        }
    },
}


def _request_bytes(request: HttpRequest) -> bytes:
    """The body, read up to the import limit (the usual upload limit does not apply)."""
    limit = import_max_bytes()
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise document_too_large(declared)
    return request.read(limit + 1)


@router.post(
    "/memories/import",
    response={200: ImportOut, 202: ImportJobOut},
    tags=["export"],
    auth=write_auth,
    openapi_extra={"requestBody": IMPORT_BODY},
)
def memories_import(request: HttpRequest) -> Status:
    """Load an export into your memory: a MemoryHub export (of this format version or an
    older one) or a Mem0 dump. Everything is checked before anything is written, and
    written in one transaction. Importing the same document again adds nothing
    (`skipped`); a fact repeating one of yours merges into it. Layers, status,
    validity, provenance and lineage are kept, links remade between the new ids; a team
    fact goes into your team of the same name, or becomes private if you are not in
    one. A large document is imported by a job (202, see `GET /api/jobs/{id}`)."""
    document = document_parse(_request_bytes(request))
    outcome = memories_import_request(actor=Actor.from_request(request), document=document)
    if isinstance(outcome, dict):
        return Status(200, outcome)
    return Status(202, {"job": outcome.pk})


class ToolAnnotationsOut(Schema):
    read_only: bool
    destructive: bool
    idempotent: bool


class ToolOut(Schema):
    name: str
    description: str
    scope: str = Field(description="The token scope it needs: read or write")
    annotations: ToolAnnotationsOut
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


class ToolListOut(Schema):
    tools: list[ToolOut]
    prompt: str = Field(description="The tools described for a system prompt")


class OpenAIFunctionOut(Schema):
    name: str
    description: str
    parameters: dict[str, Any]


class OpenAIToolOut(Schema):
    type: Literal["function"]
    function: OpenAIFunctionOut


class OpenAIToolListOut(Schema):
    tools: list[OpenAIToolOut]


class ToolCallOut(Schema):
    tool: str
    text: str = Field(description="The compact answer an agent reads")
    data: dict[str, Any] = Field(description="The structured answer (the tool's output schema)")


@router.get("/tools", response=ToolListOut | OpenAIToolListOut, tags=["tools"], auth=any_scope_auth)
def tools(request: HttpRequest, format: Literal["memoryhub", "openai"] = "memoryhub") -> dict:
    """The tools you may call (those enabled for your token, within its scopes): name,
    description, input and output JSON Schema and annotations, with the descriptions
    ready for a system prompt; `format=openai` answers them in the OpenAI
    function-calling shape."""
    usable = tool_list_usable(actor=Actor.from_request(request))
    if format == "openai":
        return {"tools": [tool_openai_function(each) for each in usable]}
    return {"tools": [tool_describe(each) for each in usable], "prompt": tools_prompt(usable)}


@router.post("/tools/{name}", response=ToolCallOut, tags=["tools"], auth=any_scope_auth)
def run_tool(request: HttpRequest, name: str, arguments: Body[dict[str, Any]]) -> dict:
    """Run one tool as you (an agent: as its token's user, within its scopes and tool
    list). The body is the tool's arguments, a JSON object. Every call is audited
    with the tool, the arguments' size and the outcome, never their content."""
    answer = tool_call(
        actor=Actor.from_request(request), name=name, arguments=arguments, transport="rest"
    )
    return {"tool": name, "text": answer.text, "data": answer.data}


class TieredRecallIn(Schema):
    tier: str | None = Field(None, description="project, org or skill (optional with a role)")
    role: str | None = Field(
        None,
        description="Read what this role's preset reads (an agent: its token's role only, "
        "read by default when no tier is named)",
    )
    fingerprint: str | None = Field(None, description="Skill tier: this cluster (* for any)")
    query: str = ""
    context: str = Field(
        "", description="Your task: relevance is measured against it when there is no query"
    )
    project: str | None = Field(None, description="The project (project tier)")
    include: list[str] | None = Field(None, description="Page kinds, e.g. ['pdd', 'adr']")
    skill: str | None = None
    since: str | None = Field(None, description="Learnings this recent: 7d, 12h, 2w")
    fleet: str | None = Field(None, description="Default: your token's fleet")
    scope: str = Field("own", description="own, or cross to read other fleets")
    justification: str = Field("", description="Needed for a cross-fleet read; audited")
    limit: int = DEFAULT_LIMIT


class TieredHitOut(Schema):
    path: str
    snippet: str
    score: float
    ts: str
    status: str = Field(
        "active", description="active, or abandoned: a decision whose topic was forgotten"
    )


class TieredRecallOut(Schema):
    tier: str
    items: list[TieredHitOut]


@router.post("/recall/tiered", response=TieredRecallOut, tags=["recall"], auth=read_auth)
def recall_tiered(request: HttpRequest, payload: TieredRecallIn) -> dict:
    """Tiered recall: a project's documents (wiki pages of the project, `include` kinds),
    the organisation's notes (pages of no project) or a skill's learnings, ranked by
    0.5 recency (half-life 30 days) + 0.3 relevance (the cosine of a TF-IDF sketch of the
    row against `query`, or `context` when there is no query) + 0.15 fleet (own 1.0,
    other 0.5) + 0.05 resolved. Read-only; another fleet's learnings need `scope: cross` and a
    justification, which the audit log keeps. With `role`, the role's preset decides
    what is read (a `tier` too: only the preset's reads of it). An agent's role is its
    token's: naming another, or any role for a token without one, is refused (403); with
    neither `role` nor `tier`, a token with a role reads by its role."""
    items = tiered_recall(
        actor=Actor.from_request(request),
        tier=payload.tier,
        query=payload.query,
        fleet=payload.fleet,
        limit=payload.limit,
        scope=payload.scope,
        justification=payload.justification,
        project=payload.project,
        kinds=payload.include,
        context=payload.context,
        skill=payload.skill,
        since=payload.since,
        fingerprint=payload.fingerprint,
        role=payload.role,
    )
    return {"tier": payload.tier or "", "items": items}
