"""What agents may call of the concept graph: ``concept_query``.

One tool answers the graph's questions: what an entity is related to (filtered by
relation, direction and the type of the other end), and, given ``to``, how two
entities connect. Answers are short lines of triples with the ids of their facts.
"""

from typing import Literal

from pydantic import BaseModel, Field

from concepts import selectors
from concepts.models import ENTITY_TYPES
from memoryhub.engine.toolkit import ToolAnswer, tool
from teams.services import Actor


class ConceptQueryArguments(BaseModel):
    entity: str = Field(description="An entity's name (or an alias of it)")
    to: str | None = Field(None, description="Another entity: answer how the two connect")
    relation: str | None = Field(None, description="Only this relation, e.g. works_at")
    direction: Literal["both", "out", "in"] = "both"
    type: Literal[tuple(ENTITY_TYPES)] | None = Field(  # type: ignore[valid-type]
        None, description="Only relations whose other end is of this type"
    )
    max_hops: int = Field(3, ge=1, le=selectors.MAX_HOPS)
    limit: int = Field(20, ge=1, le=100)
    project: str | None = None


def _line(step: dict) -> str:
    return f"{step['subject']['name']} -{step['relation']}-> {step['object']['name']}"


@tool(arguments=ConceptQueryArguments)
def concept_query(actor: Actor, args: ConceptQueryArguments) -> ToolAnswer:
    """The knowledge graph built from the memories you can read: the relations an
    entity takes part in, heaviest first (weight: facts stating it, with their ids for
    memory_get), or with `to` the shortest paths between two entities."""
    user = actor.user
    entity = selectors.concept_entity_find_visible(
        user=user, name=args.entity, project=args.project
    )
    if args.to is not None:
        end = selectors.concept_entity_find_visible(user=user, name=args.to, project=args.project)
        paths = selectors.concept_paths(
            user=user,
            start=entity,
            end=end,
            max_hops=args.max_hops,
            limit=min(args.limit, selectors.MAX_PATHS),
            project=args.project,
        )
        lines = [" ; ".join(_line(step) for step in path) for path in paths]
        text = "\n".join(lines) or (
            f"No path of at most {args.max_hops} hops from {entity.name} to {end.name}."
        )
        data = {"entity": entity.as_dict(), "to": end.as_dict(), "paths": paths}
        return ToolAnswer(data=data, text=text)
    relations = selectors.concept_relations(
        user=user,
        entity=entity,
        relation=args.relation,
        direction=args.direction,
        type=args.type,
        limit=args.limit,
        project=args.project,
    )
    lines = [
        f"{_line(r)} (weight {r['weight']}; facts {', '.join(map(str, r['source_fact_ids']))})"
        for r in relations
    ]
    head = f"{entity.name} ({entity.type}, {entity.mentions} mentions)"
    data = {"entity": entity.as_dict(), "relations": relations}
    return ToolAnswer(data=data, text="\n".join([head, *lines]))


TOOLS = [concept_query]
