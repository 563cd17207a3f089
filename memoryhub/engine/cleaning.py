"""Cleaning the names and tags people and agents send, the same way in every app."""

from collections.abc import Sequence
from typing import Any

from memoryhub.engine.errors import InvalidInput

MAX_TAGS = 20
MAX_TAG_LENGTH = 64


def clean_name(value: Any, *, owner: str, noun: str = "name", max_length: int) -> str:
    """A name (of a team, a code project, a token; a page's title) single-spaced,
    present and at most ``max_length`` characters. The messages say "``owner`` needs a
    ``noun``" ("A team needs a name", "A page needs a title")."""
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"{owner}'s {noun} must be text.")
    name = " ".join((value or "").split())
    if not name:
        raise InvalidInput(f"{owner} needs a {noun}.")
    if len(name) > max_length:
        raise InvalidInput(f"{owner}'s {noun} is at most {max_length} characters, not {len(name)}.")
    return name


def clean_tags(tags: Sequence[str] | str | None, *, split_text: bool = False) -> list[str]:
    """Tags lower-cased and single-spaced, each once, in order; with ``split_text`` a
    text is taken as tags separated by commas (as a form field or front matter has
    them). At most MAX_TAGS of at most MAX_TAG_LENGTH characters."""
    if tags is None:
        return []
    if isinstance(tags, str) and split_text:
        tags = tags.split(",")
    if isinstance(tags, str):
        raise InvalidInput("Tags must be a list of strings.")
    if not all(isinstance(t, str) for t in tags):
        raise InvalidInput("Tags must be a list of strings.")
    cleaned = list(dict.fromkeys(" ".join(t.split()).lower() for t in tags if t.strip()))
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"At most {MAX_TAGS} tags, not {len(cleaned)}.")
    if any(len(t) > MAX_TAG_LENGTH for t in cleaned):
        raise InvalidInput(f"A tag is at most {MAX_TAG_LENGTH} characters.")
    return cleaned
