"""What callers hand the chat-model providers and what they get back (pydantic).

The values of the literals are those of the fact store (``facts.models``), which the core
does not import; a test keeps the two in step.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
)

from memoryhub.engine.cleaning import MAX_TAG_LENGTH, MAX_TAGS

EXCERPT_LENGTH = 200
CONTENT_LENGTH = 2000
NAME_LENGTH = 200

Role = Literal["system", "user", "assistant", "tool"]
# The categories an extracted fact may take (summary, profile and learning are written
# by other paths, never proposed from a conversation).
Category = Literal["preference", "fact", "context", "relationship", "pattern", "personality"]
Sentiment = Literal["", "positive", "neutral", "negative"]
FactSource = Literal["extracted", "explicit", "observed"]
Origin = Literal["user_stated", "extracted", "inferred"]
EntityType = Literal["person", "organisation", "project", "tool", "place", "concept", "other"]

_ORIGIN_OF_SOURCE: dict[str, Origin] = {
    "explicit": "user_stated",
    "extracted": "extracted",
    "observed": "inferred",
}


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _clip(limit: int):
    def clip(value: object) -> object:
        if isinstance(value, str):
            value = _one_line(value)
            return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"
        return value

    return clip


def _relation_name(value: str) -> str:
    # "Works at" / "works-at" / "WORKS_AT" all name one relation: works_at.
    name = re.sub(r"[^\w]+", "_", value.strip().lower()).strip("_")
    if not name:
        raise ValueError("a relation needs a name")
    return name


def _tags(value: object) -> object:
    # Models' tags are tidied, not refused: the fact store's limits, extra ones dropped.
    if not isinstance(value, list):
        return value
    seen: dict[str, None] = {}
    for tag in value:
        if isinstance(tag, str):
            tag = _one_line(tag).lower()[:MAX_TAG_LENGTH]
            if tag:
                seen[tag] = None
    return list(seen)[:MAX_TAGS]


def _label(value: object) -> object:
    # Models write "Preference", " fact " or null where a lower-case label is meant.
    if value is None:
        return ""
    return value.strip().lower() if isinstance(value, str) else value


def _sentiment(value: object) -> object:
    value = _label(value)
    return "" if value in ("none", "null", "n/a", "mixed") else value


_ENTITY_TYPES = frozenset(("person", "organisation", "project", "tool", "place", "concept"))
_ENTITY_ALIASES = {
    "organization": "organisation",
    "org": "organisation",
    "company": "organisation",
    "location": "place",
    "technology": "tool",
    "software": "tool",
}


def _entity_type(value: object) -> object:
    # A type outside the list is still a usable triple: its entity is "other".
    value = _label(value)
    if not isinstance(value, str):
        return value
    value = _ENTITY_ALIASES.get(value, value)
    return value if value in _ENTITY_TYPES else "other"


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Name = Annotated[
    str, BeforeValidator(_clip(NAME_LENGTH)), StringConstraints(strip_whitespace=True, min_length=1)
]
Excerpt = Annotated[str, BeforeValidator(_clip(EXCERPT_LENGTH))]
Unit = Annotated[float, Field(ge=0.0, le=1.0)]


class ChatMessage(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class SourceText(BaseModel):
    """A text the caller knows by id (a fact): results point back to it by that id.

    The offline rules also read, when given, its category (a fact's: "preference",
    "pattern", ...) and its vector (its embedding), to group sources by topic and to
    tell what is said about the user; a model is sent the text alone."""

    model_config = ConfigDict(frozen=True)

    id: int
    text: str
    category: str = ""
    vector: tuple[float, ...] | None = None


class Summary(BaseModel):
    """A durable statement condensed from several sources."""

    text: Annotated[Text, StringConstraints(max_length=CONTENT_LENGTH)]
    source_ids: list[int] = Field(min_length=1)


class Summaries(BaseModel):
    """The answer of ``summarize``."""

    provider: str
    summaries: list[Summary]


class FactProposal(BaseModel):
    """A fact proposed from a conversation, with what the fact store records about it."""

    content: Annotated[Text, StringConstraints(max_length=CONTENT_LENGTH)]
    category: Annotated[Category, BeforeValidator(_label)] = "fact"
    importance: Unit = 0.5
    confidence: Unit = 0.5
    sentiment: Annotated[Sentiment, BeforeValidator(_sentiment)] = ""
    tags: Annotated[list[str], BeforeValidator(_tags)] = Field(default_factory=list)
    # explicit: the user asked for it to be remembered; observed: inferred from repeated
    # behaviour; extracted: stated in passing.
    source: Annotated[FactSource, BeforeValidator(_label)] = "extracted"
    # The words of the conversation it comes from.
    excerpt: Excerpt = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def origin(self) -> Origin:
        """user_stated for an explicit fact, inferred for an observed one, else extracted."""
        return _ORIGIN_OF_SOURCE[self.source]


class FactProposals(BaseModel):
    """The answer of ``extract_facts``."""

    provider: str
    facts: list[FactProposal]


class Triple(BaseModel):
    """subject -> relation -> object, with the types of both entities."""

    subject: Name
    subject_type: Annotated[EntityType, BeforeValidator(_entity_type)] = "other"
    relation: Annotated[str, AfterValidator(_relation_name), StringConstraints(max_length=64)]
    object: Name
    object_type: Annotated[EntityType, BeforeValidator(_entity_type)] = "other"
    confidence: Unit = 0.5
    # The id of the SourceText it was found in (0 for a plain text).
    source_id: int = 0


class Triples(BaseModel):
    """The answer of ``extract_triples``."""

    provider: str
    triples: list[Triple]
