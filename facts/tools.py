"""What agents may call of the fact store: ``memory_write``, ``memory_get``,
``learning_write`` (``recall``, which adds the role preset's reads, is the agent
surface's).

Answers are compact: ids and the statements, so an agent spends few tokens; it reads
a memory whole (provenance, scores, history) with ``memory_get``.
"""

from typing import Any, Literal

from pydantic import BaseModel, Field

from facts import selectors
from facts.learnings import learning_create
from facts.models import Category
from facts.services.create import fact_create
from memoryhub.engine.refs import RowId
from memoryhub.engine.toolkit import ToolAnswer, tool
from teams.services import Actor


class MemoryWriteArguments(BaseModel):
    content: str = Field(description="One self-contained statement")
    category: Literal[tuple(Category.values)] = Category.FACT  # type: ignore[valid-type]
    importance: float = Field(0.5, ge=0, le=1)
    tags: list[str] | None = None
    visibility: Literal["private", "team", "global"] | None = Field(
        None, description="Who may read it (default: your memory settings)"
    )
    project: str = ""
    session_id: str = ""
    occurred_at: str | None = Field(
        None, description="When it was said or happened, ISO 8601 (default: now)"
    )
    speaker: str = Field("", description="Who said or wrote it", max_length=200)
    supersedes: int | None = Field(None, description="The id of a memory this one replaces")


class MemoryWriteAnswer(BaseModel):
    id: int
    outcome: Literal["created", "merged"]
    archived: list[int] = Field(description="Ids of older memories archived to make room")


@tool(arguments=MemoryWriteArguments, answer=MemoryWriteAnswer, scope="write", idempotent=True)
def memory_write(actor: Actor, args: MemoryWriteArguments) -> ToolAnswer:
    """Remember a statement. Repeating one you (in the same visibility) already stored
    merges into it instead of adding a copy; the answer says which."""
    result = fact_create(actor=actor, data=args.model_dump(exclude_none=True))
    outcome = "created" if result.created else "merged"
    data = {"id": result.fact.pk, "outcome": outcome, "archived": result.archived}
    return ToolAnswer(data=data, text=f"{outcome} memory {result.fact.pk}")


class MemoryGetArguments(BaseModel):
    ids: list[RowId] = Field(min_length=1, max_length=50, description="Memory ids")


class MemoryGetAnswer(BaseModel):
    items: list[dict[str, Any]] = Field(description="Whole memories, as GET /api/memories/{id}")
    missing: list[int] = Field(description="Ids you cannot read")


@tool(arguments=MemoryGetArguments, answer=MemoryGetAnswer)
def memory_get(actor: Actor, args: MemoryGetArguments) -> ToolAnswer:
    """Memories by id, whole: content, category, tags, visibility, provenance. Ids you
    cannot read are listed as missing."""
    found = selectors.fact_get_many_visible(user=actor.user, fact_ids=args.ids)
    items = [selectors.fact_as_dict(fact) for fact in found]
    missing = sorted(set(args.ids) - {fact.pk for fact in found})
    lines = [f"{f['id']} [{f['category']}, {f['visibility']}] {f['content']}" for f in items]
    if missing:
        lines.append(f"not found: {', '.join(map(str, missing))}")
    return ToolAnswer(data={"items": items, "missing": missing}, text="\n".join(lines))


class LearningWriteArguments(BaseModel):
    skill: str = Field(description="The skill the learning is about", max_length=200)
    content: str = Field(description="What was learned, self-contained")
    fleet: str | None = Field(None, description="Default: your token's fleet", max_length=100)
    agent: str | None = Field(None, description="Default: your token's name", max_length=200)
    fingerprint: str | None = Field(
        None, description="The failure's fingerprint cluster", max_length=200
    )
    resolution: str | None = Field(None, description="A reference to the fix", max_length=500)


class LearningWriteAnswer(BaseModel):
    id: int
    skill: str
    fleet: str
    fingerprint: str


@tool(arguments=LearningWriteArguments, answer=LearningWriteAnswer, scope="write")
def learning_write(actor: Actor, args: LearningWriteArguments) -> ToolAnswer:
    """Append a learning of a skill (what worked, what failed and why), optionally with
    the failure's fingerprint cluster and a reference to its resolution. Learnings are
    never merged or edited; tiered_recall's skill tier reads them."""
    fact = learning_create(actor=actor, data=args.model_dump(exclude_none=True))
    data = {
        "id": fact.pk,
        "skill": fact.skill,
        "fleet": fact.fleet,
        "fingerprint": fact.fingerprint,
    }
    return ToolAnswer(data=data, text=f"learning {fact.pk} added to skill {fact.skill}")


TOOLS = [memory_write, memory_get, learning_write]
