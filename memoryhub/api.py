"""The one NinjaAPI: apps add their routers here; errors are mapped to JSON once."""

from typing import Any, Literal

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from ninja import Body, Field, NinjaAPI, Schema, Status
from ninja.errors import HttpError, Throttled, ValidationError
from ninja.parser import Parser

from memoryhub.errors import ApplicationError
from memoryhub.export import export_schema, personal_export
from memoryhub.forget import memory_forget, memory_forget_preview
from memoryhub.health import health_report
from memoryhub.imports import (
    document_parse,
    document_too_large,
    import_max_bytes,
    memories_import_request,
)
from memoryhub.jobs import job_get_visible
from memoryhub.llm import ChatModelError, ChatModelOutputError
from memoryhub.recall import DEFAULT_LIMIT, tiered_recall
from memoryhub.refs import RowId
from memoryhub.tools import (
    tool_call,
    tool_describe,
    tool_list_usable,
    tool_openai_function,
    tools_prompt,
)
from memoryhub.unicode import require_storable_text
from teams.auth import any_scope_auth, read_auth, write_auth
from teams.services import Actor


class StorableJsonParser(Parser):
    """JSON bodies, refusing text that cannot be stored (lone surrogates, NUL)."""

    def parse_body(self, request: HttpRequest) -> Any:
        data = super().parse_body(request)
        require_storable_text(data)
        return data


api = NinjaAPI(
    parser=StorableJsonParser(),
    title="MemoryHub API",
    version="1",
    description=(
        "Memory for AI agents. Agents authenticate with `Authorization: Bearer <token>` "
        "(create tokens under Agents in the dashboard); the dashboard uses its session."
    ),
    docs_url="/docs",
    urls_namespace="api",
)


@api.exception_handler(ApplicationError)
def on_application_error(request: HttpRequest, exc: ApplicationError) -> HttpResponse:
    return api.create_response(
        request, {"detail": exc.message, **exc.extra}, status=exc.status_code
    )


@api.exception_handler(ChatModelError)
def on_chat_model_error(request: HttpRequest, exc: ChatModelError) -> HttpResponse:
    """The chat model failed: a bad gateway when it answered garbage, unavailable when it
    could not be reached or is not configured usably. Nothing was written."""
    status = 502 if isinstance(exc, ChatModelOutputError) else 503
    return api.create_response(
        request,
        {"detail": f"The chat model failed ({exc.kind}): {exc.message}", "kind": exc.kind},
        status=status,
    )


# PostgreSQL ends one of two transactions that wait on each other (deadlock), or one
# that cannot be serialised: it was rolled back whole, and sending it again succeeds.
RETRYABLE_SQLSTATES = {"40P01", "40001"}


@api.exception_handler(OperationalError)
def on_operational_error(request: HttpRequest, exc: OperationalError) -> HttpResponse:
    if getattr(exc.__cause__, "sqlstate", None) in RETRYABLE_SQLSTATES:
        detail = (
            "Another write to the same rows got in the way; nothing was written. "
            "Send the request again."
        )
        return api.create_response(request, {"detail": detail}, status=409)
    raise exc


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if isinstance(exc.__cause__, ApplicationError):  # raised while parsing the body
        return on_application_error(request, exc.__cause__)
    return api.create_response(request, {"detail": str(exc.message)}, status=exc.status_code)


@api.exception_handler(Throttled)
def on_throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
    response = api.create_response(request, {"detail": str(exc.message)}, status=429)
    if exc.wait:
        response["Retry-After"] = str(exc.wait)
    return response


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        {
            "field": ".".join(str(part) for part in err.get("loc", ())[1:]) or "body",
            "message": err.get("msg", "invalid"),
            "type": err.get("type", ""),
        }
        for err in exc.errors
    ]
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors) or "Invalid input."
    return api.create_response(request, {"detail": summary, "errors": errors}, status=422)


class HealthOut(Schema):
    status: str
    database: dict
    vec: dict
    broker: dict
    worker: dict


class JobOut(Schema):
    id: int
    kind: str
    state: str = Field(description="queued, running, done or failed")
    progress: float = Field(ge=0, le=1)
    result: dict | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None


@api.get("/jobs/{job_id}", response=JobOut, tags=["jobs"], auth=read_auth)
def job(request: HttpRequest, job_id: int) -> dict:
    """A piece of long work you started (staff: anyone's): state, progress, result."""
    return job_get_visible(user=request.user, job_id=job_id).as_dict()


class ForgetIn(Schema):
    topic: str = Field(description="What to forget, in words: matched by words and meaning")
    dry_run: bool = Field(False, description="Only preview the matches")
    ids: list[RowId] | None = Field(
        None, description="The facts to forget, chosen from the preview (default: all of it)"
    )


class ForgetMatchOut(Schema):
    id: int
    content: str
    category: str
    layer: int
    status: str
    visibility: str
    why: list[str]


class ForgetPreviewOut(Schema):
    topic: str
    matches: list[ForgetMatchOut]
    count: int


class ForgetReceiptOut(Schema):
    receipt_id: int
    topic: str
    removed: dict[str, int]
    regenerated: list[int]
    fact_ids: list[int]
    wiki_pages_not_editable: list[int]


@api.post("/forget", response=ForgetPreviewOut | ForgetReceiptOut, tags=["forget"], auth=write_auth)
def forget(request: HttpRequest, payload: ForgetIn) -> dict:
    """Forget a topic. With `dry_run` first: every fact of yours about it, across
    categories and layers, each with why it matched. Then with the `ids` you chose (or
    none: every match): those facts go with everything derived from them (earlier
    wordings, summaries and profiles left without sources; others are rebuilt from
    what remains), their vectors, index rows and wiki quotations. The answer is the
    receipt; the audit log keeps the topic and the counts, never the content."""
    actor = Actor.from_request(request)
    if payload.dry_run:
        return memory_forget_preview(actor=actor, topic=payload.topic)
    return memory_forget(actor=actor, topic=payload.topic, ids=payload.ids)


@api.get("/export/personalization", tags=["export"], auth=read_auth)
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


@api.get("/export/schema", response=dict, tags=["export"], auth=None)
def export_schema_view(request: HttpRequest) -> dict:
    """The JSON Schema of the personal data export (`GET /api/export/personalization`)."""
    return export_schema()


class ImportOut(Schema):
    created: int = Field(description="Facts written")
    skipped: int = Field(description="Facts already in your memory (imported before)")
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


@api.post(
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


@api.get("/tools", response=ToolListOut | OpenAIToolListOut, tags=["tools"], auth=any_scope_auth)
def tools(request: HttpRequest, format: Literal["memoryhub", "openai"] = "memoryhub") -> dict:
    """The tools you may call (those enabled for your token, within its scopes): name,
    description, input and output JSON Schema and annotations, with the descriptions
    ready for a system prompt; `format=openai` answers them in the OpenAI
    function-calling shape."""
    usable = tool_list_usable(actor=Actor.from_request(request))
    if format == "openai":
        return {"tools": [tool_openai_function(each) for each in usable]}
    return {"tools": [tool_describe(each) for each in usable], "prompt": tools_prompt(usable)}


@api.post("/tools/{name}", response=ToolCallOut, tags=["tools"], auth=any_scope_auth)
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
    role: str | None = Field(None, description="Read what this role's preset reads")
    fingerprint: str | None = Field(None, description="Skill tier: this cluster (* for any)")
    query: str = ""
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


class TieredRecallOut(Schema):
    tier: str
    items: list[TieredHitOut]


@api.post("/recall/tiered", response=TieredRecallOut, tags=["recall"], auth=read_auth)
def recall_tiered(request: HttpRequest, payload: TieredRecallIn) -> dict:
    """Tiered recall: a project's documents (wiki pages of the project, `include` kinds),
    the organisation's notes (pages of no project) or a skill's learnings, ranked by
    0.5 recency (half-life 30 days) + 0.3 relevance + 0.15 fleet (own 1.0, other 0.5) +
    0.05 resolved. Read-only; another fleet's learnings need `scope: cross` and a
    justification, which the audit log keeps. With `role`, the role's preset decides
    what is read (a `tier` too: only the preset's reads of it)."""
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
        skill=payload.skill,
        since=payload.since,
        fingerprint=payload.fingerprint,
        role=payload.role,
    )
    return {"tier": payload.tier or "", "items": items}


@api.get("/health", response=HealthOut, tags=["health"], auth=None)
def health(request: HttpRequest) -> dict:
    """Database, sqlite-vec (or pgvector), broker and worker status."""
    return health_report()


def _register_routers() -> None:
    from codegraph.api import router as codegraph_router
    from concepts.api import router as concepts_router
    from facts.api import router as facts_router
    from teams.api import router as teams_router
    from wiki.api import router as wiki_router

    api.add_router("/", teams_router)
    api.add_router("/", facts_router)
    api.add_router("/codegraph", codegraph_router)
    api.add_router("/wiki", wiki_router)
    api.add_router("/concept-graph", concepts_router)


_register_routers()
