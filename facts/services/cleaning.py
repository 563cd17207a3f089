"""Input of a fact checked before anything is written: its content, choices, units,
dates and fields, into a ``FactInput``."""

import functools
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from facts.models import ORIGIN_OF_SOURCE, Category, Fact, Origin, Sentiment, Source, Tier
from memoryhub.engine.cleaning import clean_tags
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.models import MemoryConfig

EXCERPT_LENGTH = 200
IMPORT_KEY_LENGTH = Fact._meta.get_field("import_key").max_length


def clean_content(content: str, config: MemoryConfig) -> str:
    """What a fact says, stripped: not empty, within the configured length."""
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("Content must not be empty.")
    content = content.strip()
    if len(content) > config.max_content_length:
        raise InvalidInput(
            f"Content is {len(content)} characters; the maximum is {config.max_content_length}."
        )
    return content


@functools.cache
def _choice_values(choices: type) -> frozenset[str]:
    return frozenset(choices.values)


def clean_choice(value: str, choices: type, what: str) -> str:
    """``value`` if it is one of ``choices``; the error names ``what`` and the choices."""
    if value not in _choice_values(choices):
        raise InvalidInput(
            f"Unknown {what} '{value}': use one of {', '.join(map(str, choices.values))}."
        )
    return value


# The earliest and latest moments a statement may be dated.
EARLIEST_MOMENT = datetime(1900, 1, 1, tzinfo=UTC)
LATEST_MOMENT = datetime(2200, 1, 1, tzinfo=UTC)


def clean_moment(value: datetime | str | None, what: str) -> datetime | None:
    """A date-time given as a datetime or ISO 8601 text ("2023-05-08T13:56:00Z", or a
    date alone); without a time zone it is taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInput(
                f"{what} is not an ISO 8601 date-time (such as 2023-05-08T13:56:00Z)."
            ) from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be an ISO 8601 date-time.")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if not EARLIEST_MOMENT <= value <= LATEST_MOMENT:
        raise InvalidInput(f"{what} must lie between the years 1900 and 2200.")
    return value


def clean_unit(value: float, what: str) -> float:
    """A number from 0 to 1 (importance, confidence), as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidInput(f"{what.capitalize()} must be a number between 0 and 1.")
    if not 0 <= value <= 1:
        raise InvalidInput(f"{what.capitalize()} must be between 0 and 1, not {value}.")
    return float(value)


@dataclass
class FactInput:
    """A validated fact to write."""

    content: str
    category: str = Category.FACT
    source: str = Source.EXPLICIT
    importance: float = 0.5
    confidence: float = 1.0
    sentiment: str = ""
    tags: list[str] = field(default_factory=list)
    visibility: str | None = None
    team: str | int | None = None
    project: str = ""
    session_id: str = ""
    occurred_at: datetime | str | None = None
    speaker: str = ""
    supersedes: int | None = None
    origin: str = ""  # "": the origin its source implies (``ORIGIN_OF_SOURCE``)
    source_excerpt: str = ""
    extraction_confidence: float | None = None
    tier: str = Tier.PROJECT
    fleet: str = ""
    skill: str = ""
    resolution_ref: str = ""
    fingerprint: str = ""
    agent: str = ""
    layer: int = 1
    import_key: str = ""


def fact_input_clean(*, data: dict[str, Any], config: MemoryConfig) -> FactInput:
    """Validate raw input (from the API, a tool or a form) into a FactInput."""
    known = set(FactInput.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidInput(f"Unknown field {', '.join(unknown)}.")
    values = {k: v for k, v in data.items() if v is not None}
    item = FactInput(**values)
    item.content = clean_content(item.content, config)
    item.category = clean_choice(item.category, Category, "category")
    item.source = clean_choice(item.source, Source, "source")
    item.sentiment = clean_choice(item.sentiment or "", Sentiment, "sentiment")
    if item.origin:
        item.origin = clean_choice(item.origin, Origin, "origin")
    else:
        item.origin = ORIGIN_OF_SOURCE[item.source]
    item.tier = clean_choice(item.tier, Tier, "tier")
    item.importance = clean_unit(item.importance, "importance")
    item.confidence = clean_unit(item.confidence, "confidence")
    if item.extraction_confidence is not None:
        item.extraction_confidence = clean_unit(item.extraction_confidence, "extraction confidence")
    item.tags = clean_tags(item.tags)
    item.source_excerpt = (item.source_excerpt or "")[:EXCERPT_LENGTH]
    if len(item.session_id) > 200 or len(item.fleet) > 100 or len(item.skill) > 200:
        raise InvalidInput("session_id, fleet or skill is too long.")
    item.occurred_at = clean_moment(item.occurred_at, "occurred_at")
    if not isinstance(item.speaker, str) or len(item.speaker) > 200:
        raise InvalidInput("The speaker is a name of at most 200 characters.")
    item.speaker = " ".join(item.speaker.split())
    if len(item.fingerprint) > 200 or len(item.agent) > 200 or len(item.resolution_ref) > 500:
        raise InvalidInput("fingerprint, agent or resolution_ref is too long.")
    if item.layer not in (1, 2, 3):
        raise InvalidInput("Layer must be 1, 2 or 3.")
    if not isinstance(item.import_key, str) or len(item.import_key) > IMPORT_KEY_LENGTH:
        raise InvalidInput(f"An import key is text of at most {IMPORT_KEY_LENGTH} characters.")
    return item
