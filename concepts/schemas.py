"""The concept graph's API shapes (Ninja in/out)."""

from typing import Literal

from ninja import Field, Schema

REF_DESCRIPTION = (
    "The entity's ref: what the graph names it by (GET /api/concept-graph/entities/{ref})"
)


class EntityOut(Schema):
    ref: str = Field(description=REF_DESCRIPTION)
    name: str
    type: str
    mentions: int = Field(description="Facts you can see that mention it")


class EndOut(Schema):
    """An end of a relation, named and typed as the facts stating the relation name it
    (``GET /api/concept-graph/entities/{ref}`` counts its mentions)."""

    ref: str = Field(description=REF_DESCRIPTION)
    name: str
    type: str


class RelationOut(Schema):
    subject: EndOut
    relation: str
    object: EndOut
    weight: int = Field(description="Facts you can see that state it")
    source_fact_ids: list[int]


class QueryOut(Schema):
    entity: EntityOut
    relations: list[RelationOut]


class PathQuery(Schema):
    start: str = Field(alias="from", description="The entity to start from")
    to: str = Field(description="The entity to reach")
    max_hops: int = Field(3, description="At most this many edges (1 to 6)")
    limit: int = Field(5, description="At most this many shortest paths (1 to 20)")
    project: str | None = None


class StepOut(Schema):
    subject: EntityOut
    relation: str
    object: EntityOut


class PathOut(Schema):
    paths: list[list[StepOut]]


class NodeListOut(Schema):
    items: list[EntityOut]
    count: int
    next: str | None = None


class EdgeListOut(Schema):
    items: list[RelationOut]
    count: int
    next: str | None = None


class StatsOut(Schema):
    nodes: int
    edges: int
    triples: int
    facts: int
    by_type: dict[str, int]
    by_relation: dict[str, int]


class SourceFactOut(Schema):
    id: int
    content: str
    category: str
    visibility: str


class EntityDetailOut(Schema):
    entity: EntityOut
    relations: list[RelationOut]
    sources: list[SourceFactOut]


class BuildIn(Schema):
    project: str | None = Field(None, description="Only this project's facts")


class JobRefOut(Schema):
    job: int


class AliasIn(Schema):
    alias: str = Field(description="Another name, e.g. k8s")
    target: str = Field(description="The entity it stands for, e.g. Kubernetes")
    visibility: Literal["private", "team", "global"] | None = None
    team: str | None = None


class AliasOut(Schema):
    id: int
    alias: str
    target: str
    visibility: str
    team: str | None = None


class AliasListOut(Schema):
    items: list[AliasOut]
    count: int
    next: str | None = None
