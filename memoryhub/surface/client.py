"""A Python client for MemoryHub's agent API, for agents in other processes. It needs
httpx alone (no Django):

    from memoryhub.surface.client import MemoryHub

    hub = MemoryHub("http://127.0.0.1:8000", "mh_...")
    hub.remember("The staging database is db-stage-2")
    print(hub.recall("Where is the staging database?").block)

Or, as the aurora-recall skill reads its tiers, in one line with the server and token
from ``MEMORYHUB_URL`` and ``MEMORYHUB_TOKEN``:

    from memoryhub.surface.client import recall

    ctx = recall(tier="org", query="GitHub token rotation", fleet="operate", limit=5)
    # a list of {path, snippet, score, ts}

Every call raises a ``MemoryHubError`` subclass that says what went wrong: the token
was refused (``AuthError``), lacks a scope or tool (``Refused``), something is not
there (``NotFoundError``), the input is off (``BadInput``), or the server could not be
reached or failed (``ServerError``).
"""

import os
from dataclasses import dataclass, field, fields
from typing import Any, Self

import httpx

__all__ = [
    "AuthError",
    "BadInput",
    "ForgetPreview",
    "ForgetReceipt",
    "MemoryHub",
    "MemoryHubError",
    "NotFoundError",
    "Recall",
    "RecalledFact",
    "Refused",
    "ServerError",
    "TieredHit",
    "ToolInfo",
    "ToolResult",
    "Written",
    "recall",
]


class MemoryHubError(Exception):
    """A call that did not succeed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, *, status: int = 0, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body


class AuthError(MemoryHubError):
    """The token is missing, unknown or revoked (401), or the address is locked out (429)."""


class Refused(MemoryHubError):
    """The token may not do this: a scope it lacks or a tool not enabled for it (403)."""


class NotFoundError(MemoryHubError):
    """No such thing, or not one you may read (404)."""


class BadInput(MemoryHubError):
    """The request does not fit (400, 409, 422); the message says what to change."""


class ServerError(MemoryHubError):
    """The server could not be reached, timed out or failed (5xx)."""


@dataclass(frozen=True)
class RecalledFact:
    id: int
    content: str
    category: str
    score: float


@dataclass(frozen=True)
class Recall:
    """What recall found: ``block`` is the ``## Recalled Facts`` text for the prompt
    (empty when nothing matches)."""

    block: str
    items: list[RecalledFact]
    mode: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TieredHit:
    path: str
    snippet: str
    score: float
    ts: str
    status: str = "active"  # abandoned: a decision whose topic was forgotten


@dataclass(frozen=True)
class Written:
    id: int
    outcome: str  # created or merged
    archived: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class ForgetPreview:
    topic: str
    matches: list[dict[str, Any]]  # id, snippet, category, layer, status, visibility, why

    @property
    def ids(self) -> list[int]:
        return [match["id"] for match in self.matches]


@dataclass(frozen=True)
class ForgetReceipt:
    topic: str
    receipt_id: int
    removed: dict[str, int]
    fact_ids: list[int]


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    scope: str
    read_only: bool
    destructive: bool
    idempotent: bool
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    tool: str
    text: str  # what the model reads
    data: dict[str, Any]  # the answer in the tool's output schema


_ERRORS: dict[int, type[MemoryHubError]] = {
    400: BadInput,
    401: AuthError,
    403: Refused,
    404: NotFoundError,
    409: BadInput,
    412: BadInput,
    422: BadInput,
    429: AuthError,
}


class MemoryHub:
    """The agent API of one MemoryHub server, as the user of one agent token."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"The server URL must start with http:// or https://, not {url!r}.")
        if not token:
            raise ValueError("An agent token is needed: create one under Agents.")
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
        )

    @classmethod
    def from_environment(cls, **options: Any) -> "MemoryHub":
        """A client of the server ``MEMORYHUB_URL`` as the token ``MEMORYHUB_TOKEN``."""
        missing = [n for n in ("MEMORYHUB_URL", "MEMORYHUB_TOKEN") if not os.environ.get(n)]
        if missing:
            raise ValueError(
                f"Set {' and '.join(missing)}: the server's URL and an agent token "
                "(created under Agents)."
            )
        return cls(os.environ["MEMORYHUB_URL"], os.environ["MEMORYHUB_TOKEN"], **options)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- transport ----------------------------------------------------------------------

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise ServerError(f"MemoryHub at {self.url} did not answer in time: {exc}") from exc
        except httpx.HTTPError as exc:
            raise ServerError(f"MemoryHub at {self.url} could not be reached: {exc}") from exc
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success:
            if body is None:
                raise ServerError(
                    f"MemoryHub answered {path} with something other than JSON.",
                    status=response.status_code,
                )
            return body
        detail = body.get("detail") if isinstance(body, dict) else None
        message = str(detail or response.reason_phrase or "request failed")
        error = _ERRORS.get(response.status_code)
        if error is None:
            error = ServerError if response.status_code >= 500 else MemoryHubError
        raise error(
            f"{method} {path} answered {response.status_code}: {message}",
            status=response.status_code,
            body=body,
        )

    # --- tools --------------------------------------------------------------------------

    def tools(self) -> list[ToolInfo]:
        """The tools this token may call."""
        listed = self._request("GET", "/api/tools")["tools"]
        return [
            ToolInfo(
                name=t["name"],
                description=t["description"],
                scope=t["scope"],
                read_only=t["annotations"]["read_only"],
                destructive=t["annotations"]["destructive"],
                idempotent=t["annotations"]["idempotent"],
                input_schema=t["input_schema"],
                output_schema=t["output_schema"],
            )
            for t in listed
        ]

    def tools_prompt(self) -> str:
        """The tools described for a system prompt."""
        return self._request("GET", "/api/tools")["prompt"]

    def openai_tools(self) -> list[dict[str, Any]]:
        """The tools in the OpenAI function-calling shape, for ``tools=``."""
        return self._request("GET", "/api/tools", params={"format": "openai"})["tools"]

    def call(self, name: str, /, **arguments: Any) -> ToolResult:
        """Run the tool ``name`` with ``arguments``."""
        answer = self._request("POST", f"/api/tools/{name}", json=arguments)
        return ToolResult(tool=answer["tool"], text=answer["text"], data=answer["data"])

    # --- memory -------------------------------------------------------------------------

    def recall(
        self, query: str, *, project: str | None = None, max_items: int | None = None
    ) -> Recall:
        """The memories relevant to ``query``, with the block to put in the prompt."""
        arguments: dict[str, Any] = {"query": query}
        if project is not None:
            arguments["project"] = project
        if max_items is not None:
            arguments["max_items"] = max_items
        data = self.call("recall", **arguments).data
        return Recall(
            block=data["block"],
            items=[RecalledFact(**item) for item in data["items"]],
            mode=data["mode"],
            notes=list(data.get("notes", [])),
        )

    def tiered_recall(
        self,
        *,
        tier: str | None = None,
        query: str = "",
        fleet: str | None = None,
        limit: int = 10,
        **options: Any,
    ) -> list[TieredHit]:
        """A project's pages, the organisation's pages or a skill's learnings, best
        first; ``options``: project, include (page kinds), skill, since ("7d"),
        fingerprint (a cluster, or "*"), scope ("cross"), justification, and role (the
        token's own role: its preset decides what is read, with or without a tier;
        another role is refused). With neither tier nor role, the token's role is read."""
        body: dict[str, Any] = {"query": query, "limit": limit, **options}
        if tier is not None:
            body["tier"] = tier
        if fleet is not None:
            body["fleet"] = fleet
        items = self._request("POST", "/api/recall/tiered", json=body)["items"]
        # Fields a newer server adds are left out rather than fail the call.
        known = {f.name for f in fields(TieredHit)}
        return [TieredHit(**{k: v for k, v in item.items() if k in known}) for item in items]

    def learn(self, skill: str, content: str, **fields: Any) -> int:
        """Append a learning of ``skill`` (``fleet``, ``agent``, ``fingerprint`` and
        ``resolution`` optional); its id."""
        return int(self.call("learning_write", skill=skill, content=content, **fields).data["id"])

    def remember(self, content: str, **fields: Any) -> Written:
        """Store a statement (``category``, ``importance``, ``tags``, ``visibility``,
        ``project``, ``session_id``, ``supersedes`` optional); a repeat merges."""
        data = self.call("memory_write", content=content, **fields).data
        return Written(id=data["id"], outcome=data["outcome"], archived=list(data["archived"]))

    def get(self, *ids: int) -> list[dict[str, Any]]:
        """Memories by id, whole; ids you cannot read are left out."""
        return self.call("memory_get", ids=list(ids)).data["items"]

    def forget_preview(self, topic: str) -> ForgetPreview:
        """Every memory of yours about ``topic``; nothing is forgotten yet."""
        data = self.call("memory_forget", topic=topic, dry_run=True).data
        return ForgetPreview(topic=topic, matches=data["matches"])

    def forget(self, topic: str, ids: list[int] | None = None) -> ForgetReceipt:
        """Forget memories about ``topic``: the ``ids`` chosen from ``forget_preview``,
        or without ids every one the preview finds now."""
        if ids is None:
            ids = self.forget_preview(topic).ids
        if not ids:
            return ForgetReceipt(topic=topic, receipt_id=0, removed={}, fact_ids=[])
        data = self.call("memory_forget", topic=topic, dry_run=False, ids=ids).data
        return ForgetReceipt(
            topic=topic,
            receipt_id=data["receipt_id"],
            removed=data["removed"],
            fact_ids=data["fact_ids"],
        )


def recall(
    *,
    tier: str | None = None,
    query: str = "",
    fleet: str | None = None,
    limit: int = 10,
    **options: Any,
) -> list[dict[str, Any]]:
    """Tiered recall as the aurora-recall skill's Python form reads it: a list of
    ``{path, snippet, score, ts}`` dicts, best first, from the server and token in
    ``MEMORYHUB_URL`` and ``MEMORYHUB_TOKEN`` (``options`` as ``MemoryHub.tiered_recall``
    takes them)."""
    with MemoryHub.from_environment() as hub:
        hits = hub.tiered_recall(tier=tier, query=query, fleet=fleet, limit=limit, **options)
    # The skill's four keys; an abandoned decision says so in its snippet.
    return [
        {
            "path": hit.path,
            "snippet": f"(abandoned) {hit.snippet}" if hit.status == "abandoned" else hit.snippet,
            "score": hit.score,
            "ts": hit.ts,
        }
        for hit in hits
    ]
