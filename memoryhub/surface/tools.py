"""The agent tool surface: every app's tools, declared once in its ``tools.py`` and found
by the engine's registry, served over REST (``/api/tools``) and MCP (``/mcp``,
``manage.py mcp``).

A call runs as the token's user, narrowed by the token's scopes and its tool list, and
is audited: the tool, the size of its arguments and the outcome, never their content.
This module also declares the tools that span apps (``recall`` with the role preset's
reads, ``memory_forget``, ``tiered_recall``).
"""

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from facts.recall import fact_recall
from memoryhub.engine.config import feature_enabled, feature_require, memory_config_get
from memoryhub.engine.errors import ApplicationError, InvalidInput
from memoryhub.engine.llm import ChatModelError
from memoryhub.engine.refs import RowId, shortened
from memoryhub.engine.toolkit import Tool, ToolAnswer, tool, tool_apps, tool_get, tool_registry
from memoryhub.surface import recall as tiers
from memoryhub.surface.forget import MAX_FORGET_IDS, memory_forget_preview
from memoryhub.surface.forget import memory_forget as forget_topic
from memoryhub.surface.recall import role_block, token_role_recall
from teams.services import Actor, audit_log

SNIPPET = 160  # characters of a statement in a compact answer


# --- Tools that span apps ----------------------------------------------------------------


class RecallArguments(BaseModel):
    query: str = Field(description="The message or question to recall memories for")
    project: str | None = Field(None, description="Recall this project's memories too")
    max_items: int | None = Field(None, ge=1, le=100)


class RecalledItem(BaseModel):
    id: int
    content: str
    category: str
    score: float


class RoleHit(BaseModel):
    path: str
    snippet: str
    score: float
    ts: str
    status: str = Field(
        "active", description="active, or abandoned: a decision whose topic was forgotten"
    )


class RecallAnswer(BaseModel):
    block: str = Field(description="The `## Recalled Facts` block, empty when nothing matches")
    items: list[RecalledItem]
    mode: str = Field(description="hybrid, keyword or disabled")
    notes: list[str]
    role_items: list[RoleHit] = Field(
        default_factory=list, description="What your token's role preset adds"
    )


@tool(arguments=RecallArguments, answer=RecallAnswer)
def recall(actor: Actor, args: RecallArguments) -> ToolAnswer:
    """The memories relevant to a message, as the `## Recalled Facts` block to put in
    the prompt; each item's id fetches it whole with memory_get."""
    result = fact_recall(
        actor=actor, query=args.query, project=args.project, max_items=args.max_items
    )
    items = [
        {"id": item.id, "content": item.content, "category": item.category, "score": item.score}
        for item in result.items
    ]
    role = actor.token.role if actor.token is not None else ""
    role_items = token_role_recall(actor=actor, query=args.query, project=args.project)
    block = "\n\n".join(part for part in (result.block, role_block(role, role_items)) if part)
    data = {
        "block": block,
        "items": items,
        "mode": result.mode,
        "notes": result.notes,
        "role_items": role_items,
    }
    return ToolAnswer(data=data, text=block or "No memories match.")


class MemoryForgetArguments(BaseModel):
    topic: str = Field(description="What to forget, in words: matched by words and meaning")
    dry_run: bool = Field(True, description="Only list what would go (the default)")
    ids: list[RowId] | None = Field(
        None,
        max_length=MAX_FORGET_IDS,
        description="With dry_run false: the memory ids to forget, chosen from the preview",
    )


class ForgetMatch(BaseModel):
    id: int
    snippet: str
    category: str
    layer: int
    status: str
    visibility: str
    certain: bool = Field(description="About the topic beyond doubt; otherwise possibly")
    why: list[str]


class MemoryForgetAnswer(BaseModel):
    topic: str
    dry_run: bool
    matches: list[ForgetMatch] | None = Field(None, description="The preview (dry run)")
    count: int | None = None
    decisions: list[str] | None = Field(
        None, description="Decision records about the topic that forgetting marks abandoned"
    )
    receipt_id: int | None = Field(None, description="The audit event of the forget")
    removed: dict[str, int] | None = Field(None, description="How many of each kind went")
    fact_ids: list[int] | None = None


@tool(
    arguments=MemoryForgetArguments,
    answer=MemoryForgetAnswer,
    scope="write",
    destructive=True,
    idempotent=True,
)
def memory_forget(actor: Actor, args: MemoryForgetArguments) -> ToolAnswer:
    """Forget a topic in two steps. First (dry_run, the default) it lists every memory
    of yours that may be about it with why it matched, the certain ones first (marked
    "(maybe)": the others); then, with dry_run false and the ids you
    chose, those go with everything derived from them, and the answer is the receipt."""
    if args.dry_run:
        preview = memory_forget_preview(actor=actor, topic=args.topic)
        matches = [
            {**{k: m[k] for k in ForgetMatch.model_fields if k in m}, "snippet": m["content"]}
            for m in preview["matches"]
        ]
        for match in matches:
            match["snippet"] = shortened(match["snippet"], SNIPPET)
        lines = [
            f"{m['id']} [{m['category']}] {'' if m['certain'] else '(maybe) '}{m['snippet']}"
            for m in matches
        ]
        decisions = [f"wiki page {d['id']}: {d['title']}" for d in preview["decisions"]]
        data = {
            "topic": args.topic,
            "dry_run": True,
            "matches": matches,
            "count": len(matches),
            "decisions": decisions,
        }
        head = (
            f"{preview['certain']} memories about this topic, {preview['possible']} that may be"
            + ("; forget the ones meant with dry_run false and their ids." if matches else ".")
        )
        marked = [f"Marked abandoned with it: {d}" for d in decisions]
        return ToolAnswer(data=data, text="\n".join([head, *lines, *marked]))
    if not args.ids:
        raise InvalidInput("Preview first (dry_run true), then pass the ids to forget.")
    receipt = forget_topic(actor=actor, topic=args.topic, ids=args.ids)
    data = {
        "topic": args.topic,
        "dry_run": False,
        "receipt_id": receipt["receipt_id"],
        "removed": receipt["removed"],
        "fact_ids": receipt["fact_ids"],
    }
    removed = ", ".join(f"{n} {kind}" for kind, n in receipt["removed"].items() if n)
    return ToolAnswer(
        data=data, text=f"Forgotten (receipt {receipt['receipt_id']}): {removed or 'nothing'}."
    )


class TieredRecallArguments(BaseModel):
    tier: Literal[tiers.TIERS] | None = Field(  # type: ignore[valid-type]
        None,
        description="project: a project's documents; org: the organisation's notes; "
        "skill: learnings of a skill. Optional with a role",
    )
    role: str | None = Field(
        None,
        max_length=100,
        description="Your token's role, to read what its preset reads instead (read by "
        "default when no tier is named); another role is refused",
    )
    fingerprint: str | None = Field(
        None, max_length=200, description="Skill tier: learnings of this cluster (* for any)"
    )
    query: str = Field("", description="Words to rank by (optional)")
    context: str = Field(
        "",
        max_length=tiers.MAX_CONTEXT,
        description="Your task, to rank by when there is no query (optional)",
    )
    project: str | None = Field(None, description="The project (project tier)")
    include: list[str] | None = Field(None, description="Page kinds to include, e.g. pdd, adr")
    skill: str | None = Field(None, description="The skill (skill tier)")
    since: str | None = Field(None, description="Only learnings this recent: 7d, 12h, 2w")
    fleet: str | None = Field(None, description="Whose learnings (default: your token's)")
    scope: Literal["own", "cross"] = Field("own", description="cross: other fleets too")
    justification: str = Field("", description="Why a cross-fleet read is needed (audited)")
    limit: int = Field(tiers.DEFAULT_LIMIT, ge=1, le=tiers.MAX_LIMIT)


class TieredHitOut(BaseModel):
    path: str
    snippet: str
    score: float
    ts: str
    status: str = Field(
        "active", description="active, or abandoned: a decision whose topic was forgotten"
    )


class TieredRecallAnswer(BaseModel):
    tier: str
    items: list[TieredHitOut]


@tool(arguments=TieredRecallArguments, answer=TieredRecallAnswer)
def tiered_recall(actor: Actor, args: TieredRecallArguments) -> ToolAnswer:
    """Project documents, organisation notes or a skill's learnings, ranked by recency,
    relevance, fleet and resolution: `path`, `snippet`, `score`, `ts` per item. Another
    fleet's learnings need scope cross and a justification. With no tier, your token's
    role preset decides what is read."""
    items = tiers.tiered_recall(
        actor=actor,
        tier=args.tier,
        query=args.query,
        fleet=args.fleet,
        limit=args.limit,
        scope=args.scope,
        justification=args.justification,
        project=args.project,
        kinds=args.include,
        skill=args.skill,
        since=args.since,
        fingerprint=args.fingerprint,
        role=args.role,
        context=args.context,
    )
    lines = [
        f"{i['path']} ({i['score']:.2f})"
        f"{' (abandoned)' if i['status'] == 'abandoned' else ''} {i['snippet']}"
        for i in items
    ]
    return ToolAnswer(
        data={"tier": args.tier or "", "items": items}, text="\n".join(lines) or "Nothing found."
    )


TOOLS = [recall, tiered_recall, memory_forget]


# --- The registry ------------------------------------------------------------------------


def tool_usable_by(*, actor: Actor, found: Tool) -> bool:
    token = actor.token
    return token is None or (token.has_scope(found.scope) and token.has_tool(found.name))


def tool_list_usable(*, actor: Actor) -> list[Tool]:
    """The tools ``actor`` may call: of a feature switched on, enabled for its token and
    within its scopes."""
    config = memory_config_get()
    owners = tool_apps()
    return [
        each
        for each in tool_registry().values()
        if feature_enabled(owners.get(each.name, ""), config=config)
        and tool_usable_by(actor=actor, found=each)
    ]


def tool_describe(found: Tool) -> dict[str, Any]:
    return {
        "name": found.name,
        "description": found.description,
        "scope": found.scope,
        "annotations": {
            "read_only": found.read_only,
            "destructive": found.destructive,
            "idempotent": found.idempotent,
        },
        "input_schema": found.input_schema(),
        "output_schema": found.output_schema(),
    }


def tool_openai_function(found: Tool) -> dict[str, Any]:
    """The OpenAI function-calling shape (Chat Completions ``tools`` entries)."""
    return {
        "type": "function",
        "function": {
            "name": found.name,
            "description": found.description,
            "parameters": found.input_schema(),
        },
    }


def _argument_line(found: Tool) -> str:
    schema = found.input_schema()
    required = set(schema.get("required", []))
    names = [name if name in required else f"{name}?" for name in schema.get("properties", {})]
    return ", ".join(names)


def tools_prompt(tools: list[Tool]) -> str:
    """The tools described for a system prompt: one entry per tool, its arguments
    (``?`` marks optional ones) and what it does."""
    if not tools:
        return "No MemoryHub tools are enabled for this token."
    entries = ["## MemoryHub tools", ""]
    for found in tools:
        effect = (
            "read-only" if found.read_only else ("destructive" if found.destructive else "writes")
        )
        description = " ".join(found.description.split())
        entries.append(f"- {found.name}({_argument_line(found)}) [{effect}]: {description}")
    return "\n".join(entries)


def _argument_bytes(arguments: Any) -> int:
    try:
        return len(json.dumps(arguments, ensure_ascii=False).encode("utf-8", "replace"))
    except (TypeError, ValueError):
        return 0


def _outcome(status: int) -> str:
    return {400: "invalid", 403: "refused", 404: "unknown"}.get(status, "failed")


def tool_call(*, actor: Actor, name: str, arguments: Any, transport: str) -> ToolAnswer:
    """Run the tool ``name`` as ``actor`` with ``arguments``, and audit the call: the
    tool, the transport, the arguments' size and the outcome."""
    size = _argument_bytes(arguments)

    def audit(outcome: str, status: int) -> None:
        audit_log(
            actor=actor,
            action="tool.call",
            target_type="tool",
            target_id=shortened(str(name), 64),
            details={
                "transport": transport,
                "argument_bytes": size,
                "outcome": outcome,
                "status": status,
            },
        )

    try:
        found = tool_get(name=name)
        feature_require(tool_apps().get(found.name, ""))
        actor.require_tool(found.name)
        answer = found.run(actor=actor, arguments=arguments)
    except ApplicationError as exc:
        audit(_outcome(exc.status_code), exc.status_code)
        raise
    except ChatModelError:
        audit("failed", 503)
        raise
    audit("ok", 200)
    return answer
