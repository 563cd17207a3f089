"""The one NinjaAPI: the apps' and the surface's routers are added here; errors are
mapped to JSON once."""

import math
from typing import Any

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import Field, NinjaAPI, Schema
from ninja.errors import HttpError, Throttled, ValidationError
from ninja.parser import Parser

from memoryhub.engine.config import feature_guard
from memoryhub.engine.errors import ApplicationError
from memoryhub.engine.jobs import job_get_visible
from memoryhub.engine.llm import ChatModelError, ChatModelOutputError
from memoryhub.engine.unicode import require_storable_text
from memoryhub.health import health_report
from teams.auth import read_auth


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
    could not be reached in time, is left alone after failing, or is not configured
    usably (with ``Retry-After`` when it is known when to try again). Nothing was
    written."""
    status = 502 if isinstance(exc, ChatModelOutputError) else 503
    response = api.create_response(
        request,
        {"detail": f"The chat model failed ({exc.kind}): {exc.message}", "kind": exc.kind},
        status=status,
    )
    if exc.retry_after is not None:
        response["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    return response


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
    attempts: int = Field(
        description="How many times a worker started it: more than one when a worker died "
        "running it and it was queued again"
    )
    note: str | None = Field(description="What happened to it on the way, when anything did")
    created_at: str
    started_at: str | None
    finished_at: str | None
    heartbeat_at: str | None = Field(
        description="Its last sign of life: queued, started, or alive while it runs"
    )


@api.get("/jobs/{job_id}", response=JobOut, tags=["jobs"], auth=read_auth)
def job(request: HttpRequest, job_id: int) -> dict:
    """A piece of long work you started (staff: anyone's): state, progress, result."""
    return job_get_visible(user=request.user, job_id=job_id).as_dict()


@api.get("/health", response=HealthOut, tags=["health"], auth=None)
def health(request: HttpRequest) -> dict:
    """Database, sqlite-vec (or pgvector), broker and worker status."""
    return health_report()


def _register_routers() -> None:
    from codegraph.api import router as codegraph_router
    from concepts.api import router as concepts_router
    from facts.api import router as facts_router
    from memoryhub.surface.api import router as surface_router
    from teams.api import router as teams_router
    from wiki.api import router as wiki_router

    api.add_router("/", teams_router)
    api.add_router("/", surface_router)
    api.add_router("/", facts_router)
    # Features Settings -> Memory may switch off: their endpoints answer 404 saying so.
    codegraph_router.add_decorator(feature_guard("codegraph"))
    wiki_router.add_decorator(feature_guard("wiki"))
    api.add_router("/codegraph", codegraph_router)
    api.add_router("/wiki", wiki_router)
    api.add_router("/concept-graph", concepts_router)


_register_routers()
