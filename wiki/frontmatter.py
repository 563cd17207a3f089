"""YAML front matter for wiki pages kept as Markdown files.

A page file may start with a block such as::

    ---
    title: Deploying the ingest service
    tags: [runbook, ingest]
    visibility: team
    kind: runbook
    ---

Only the keys in ``ALLOWED_KEYS`` are accepted: a misspelt key (``tag:``) would
otherwise be dropped silently on import and lost on the next export.
"""

import re
from typing import Any

import yaml

ALLOWED_KEYS: tuple[str, ...] = ("title", "tags", "visibility", "kind")
VISIBILITIES: tuple[str, ...] = ("private", "team", "global")

_KIND_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_OPENING = re.compile(r"^\ufeff?---[ \t]*\r?\n")
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


class FrontMatterError(ValueError):
    """The front matter of a page is not valid YAML or breaks the page schema."""


def parse(text: str) -> tuple[dict[str, Any], str]:
    """Split ``text`` into validated front matter and the Markdown body.

    Text without a leading ``---`` line has no front matter: ``({}, text)``.
    Raises ``FrontMatterError`` when the block is unclosed, is not valid YAML,
    is not a mapping, names an unknown key or holds a value of the wrong type.
    """
    opening = _OPENING.match(text)
    if opening is None:
        return {}, text
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        raise FrontMatterError("front matter starts with '---' but has no closing '---' line")
    raw = text[opening.end() : closing.start()]
    try:
        loaded = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise FrontMatterError(f"front matter is not valid YAML{where}: {problem}") from exc
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise FrontMatterError(
            f"front matter must be a mapping of keys to values, not a {_yaml_type(loaded)}"
        )
    return validate(loaded), text[closing.end() :]


def dump(meta: dict[str, Any], body: str) -> str:
    """Render ``meta`` as a front matter block followed by ``body``.

    Keys are written in the order of ``ALLOWED_KEYS``; empty metadata writes the
    body alone, so ``parse(dump(meta, body)) == (meta, body)`` for valid input.
    """
    clean = validate(meta)
    if not clean:
        # A body that itself opens with '---' needs an empty block to survive parse().
        return f"---\n---\n{body}" if _OPENING.match(body) else body
    ordered = {key: clean[key] for key in ALLOWED_KEYS if key in clean}
    block = yaml.safe_dump(
        ordered, sort_keys=False, allow_unicode=True, default_flow_style=None, width=1000
    )
    return f"---\n{block}---\n{body}"


def validate(meta: dict[Any, Any]) -> dict[str, Any]:
    """Check keys and value types of a front matter mapping and return a copy."""
    unknown = [str(key) for key in meta if key not in ALLOWED_KEYS]
    if unknown:
        raise FrontMatterError(
            f"unknown front matter key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(k) for k in unknown)}; allowed keys are {', '.join(ALLOWED_KEYS)}"
        )
    clean: dict[str, Any] = {}
    if "title" in meta:
        title = meta["title"]
        if not isinstance(title, str) or not title.strip():
            raise FrontMatterError("front matter 'title' must be a non-empty string")
        clean["title"] = title
    if "tags" in meta:
        tags = meta["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
            raise FrontMatterError("front matter 'tags' must be a list of non-empty strings")
        clean["tags"] = list(tags)
    if "visibility" in meta:
        visibility = meta["visibility"]
        if visibility not in VISIBILITIES:
            raise FrontMatterError(
                f"front matter 'visibility' must be one of {', '.join(VISIBILITIES)}, "
                f"not {visibility!r}"
            )
        clean["visibility"] = visibility
    if "kind" in meta:
        kind = meta["kind"]
        if not isinstance(kind, str) or not _KIND_RE.match(kind):
            raise FrontMatterError(
                "front matter 'kind' must be a short lowercase word such as note, runbook or adr"
            )
        clean["kind"] = kind
    return clean


def _yaml_type(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__
