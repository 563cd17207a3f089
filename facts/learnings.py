"""Learnings: what agents of a skill learned, written append-only into the fact store as
facts of tier ``skill`` (category ``learning``), so the skill tier of tiered recall, the
access rule, search and forgetting treat them as any other fact.

A learning carries its skill, fleet and writing agent, and optionally a fingerprint
cluster (the failure it is about) and a resolution reference (the fix). Learnings are
never merged into near-duplicates and never edited: a correction is a new learning.

``learnings_import`` reads ``learnings/<YYYY-MM-DD>.jsonl`` files, one learning a line;
each line's import key (a hash of what it says and when) makes a second import of the
same files add nothing.
"""

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils.dateparse import parse_datetime

from facts.models import Category, Fact, Tier
from facts.services.cleaning import fact_input_clean
from facts.services.create import fact_from_input
from facts.services.embedding import queue_embedding
from facts.sessions import facts_index_written
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.refs import shortened
from teams.services import Actor, audit_log, scope_for_new_row

FIELDS = ("skill", "content", "fleet", "agent", "fingerprint", "resolution")
IMPORT_FIELDS = (*FIELDS, "ts")
WRITE_FIELDS = (*FIELDS, "visibility", "team")
MAX_SHORT = 200
MAX_RESOLUTION = 500
FILE_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.jsonl$")
MAX_LINE = 100_000
MAX_FILE_LINES = 100_000


@dataclass
class Learning:
    skill: str
    content: str
    fleet: str = ""
    agent: str = ""
    fingerprint: str = ""
    resolution: str = ""
    created_at: datetime | None = None

    @property
    def import_key(self) -> str:
        when = self.created_at.astimezone(UTC).isoformat() if self.created_at else ""
        payload = json.dumps(
            [when, self.skill, self.fleet, self.agent, self.fingerprint, self.content],
            ensure_ascii=False,
        )
        return "learning:" + hashlib.sha256(payload.encode("utf-8", "replace")).hexdigest()[:40]


def _text(data: dict[str, Any], name: str, limit: int, *, required: bool = False) -> str:
    value = data.get(name)
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} is text.")
    value = value.strip()
    if required and not value:
        raise InvalidInput(f"A learning needs a {name}.")
    if len(value) > limit:
        raise InvalidInput(f"{name} is at most {limit} characters.")
    return value


def learning_clean(data: Any, *, allowed: tuple[str, ...] = WRITE_FIELDS) -> Learning:
    """Raw input (the API, a tool, a line of a file) as a Learning; the content is
    checked by the fact store's rules when written."""
    if not isinstance(data, dict):
        raise InvalidInput("A learning is a JSON object.")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise InvalidInput(f"Unknown field {', '.join(shortened(str(k), 40) for k in unknown)}.")
    content = data.get("content")
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("A learning needs its content.")
    return Learning(
        skill=_text(data, "skill", MAX_SHORT, required=True),
        content=content.strip(),
        fleet=_text(data, "fleet", 100),
        agent=_text(data, "agent", MAX_SHORT),
        fingerprint=_text(data, "fingerprint", MAX_SHORT),
        resolution=_text(data, "resolution", MAX_RESOLUTION),
    )


def _fact_for(
    *, actor: Actor, learning: Learning, visibility: str | None, team: Any, import_key: str = ""
) -> Fact:
    config = memory_config_get()
    item = fact_input_clean(
        data={
            "content": learning.content,
            "category": Category.LEARNING,
            "tier": Tier.SKILL,
            "skill": learning.skill,
            "fleet": learning.fleet,
            "resolution_ref": learning.resolution,
            "fingerprint": learning.fingerprint,
            "agent": learning.agent or (actor.token.name if actor.token is not None else ""),
            "visibility": visibility,
            "team": team,
            "import_key": import_key,
            "tags": [learning.skill],
        },
        config=config,
    )
    scope = scope_for_new_row(
        user=actor.user, team=item.team, visibility=item.visibility, project=item.project
    )
    fact = fact_from_input(actor=actor, item=item, scope=scope)
    if learning.created_at is not None:
        fact.created_at = fact.updated_at = fact.valid_from = learning.created_at
    return fact


def _store(facts: list[Fact]) -> None:
    for fact in facts:
        fact.save()
    facts_index_written(facts)
    queue_embedding([fact.pk for fact in facts], memory_config_get())


def learning_create(*, actor: Actor, data: Any) -> Fact:
    """Append one learning for the acting user (a new row always: never merged)."""
    actor.require_scope("write")
    learning = learning_clean(data)
    visibility = data.get("visibility") if isinstance(data, dict) else None
    team = data.get("team") if isinstance(data, dict) else None
    with transaction.atomic():
        fact = _fact_for(actor=actor, learning=learning, visibility=visibility, team=team)
        _store([fact])
        audit_log(
            actor=actor,
            action="learning.create",
            target_type="fact",
            target_id=fact.pk,
            details={"skill": fact.skill, "fleet": fact.fleet, "fingerprint": fact.fingerprint},
        )
    return fact


# --- Import ------------------------------------------------------------------------------


def _file_day(path: Path) -> datetime:
    found = FILE_NAME.match(path.name)
    try:
        day = datetime(int(found.group(1)), int(found.group(2)), int(found.group(3)))
    except (AttributeError, ValueError):
        raise InvalidInput(f"{path.name}: a learnings file is named YYYY-MM-DD.jsonl.") from None
    return datetime.combine(day.date(), time(0, 0), tzinfo=UTC)


def learning_files(directory: Path) -> list[Path]:
    """The ``<YYYY-MM-DD>.jsonl`` files of ``directory`` (or of its ``learnings/``
    folder), oldest first."""
    directory = Path(directory)
    if (directory / "learnings").is_dir():
        directory = directory / "learnings"
    if not directory.is_dir():
        raise InvalidInput(f"There is no folder {directory}.")
    files = sorted(p for p in directory.iterdir() if p.is_file() and p.suffix == ".jsonl")
    for path in files:
        _file_day(path)
    return files


def _line_learning(path: Path, number: int, line: str, day: datetime) -> Learning:
    where = f"{path.name}:{number}"
    try:
        if len(line) > MAX_LINE:
            raise InvalidInput(f"a line is at most {MAX_LINE} characters.")
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise InvalidInput(f"not JSON ({exc.msg}).") from None
        learning = learning_clean(data, allowed=IMPORT_FIELDS)
        ts = data.get("ts")
        if ts is None:
            learning.created_at = day
        else:
            parsed = parse_datetime(ts) if isinstance(ts, str) else None
            if parsed is None:
                raise InvalidInput("ts is an ISO 8601 date and time.")
            learning.created_at = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        fact_input_clean(data={"content": learning.content}, config=memory_config_get())
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None
    return learning


def learnings_read(files: list[Path]) -> list[Learning]:
    """Every line of ``files`` as a Learning; the first bad line is refused with its
    file and line number. Blank lines are skipped."""
    learnings = []
    for path in files:
        day = _file_day(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"{path.name}: cannot be read ({exc.__class__.__name__}).") from None
        lines = text.splitlines()
        if len(lines) > MAX_FILE_LINES:
            raise InvalidInput(f"{path.name}: at most {MAX_FILE_LINES} lines a file.")
        for number, line in enumerate(lines, start=1):
            if line.strip():
                learnings.append(_line_learning(path, number, line, day))
    return learnings


def learnings_import(
    *,
    actor: Actor,
    directory: Path,
    visibility: str | None = None,
    team: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Import the learnings files of ``directory`` for ``actor``: everything is checked
    before anything is written, and written in one transaction; learnings already there
    (by their import key) are skipped. ``{files, created, skipped}``."""
    files = learning_files(directory)
    learnings = learnings_read(files)
    keys = {learning.import_key for learning in learnings}
    known = set(
        Fact.objects.filter(owner=actor.user, import_key__in=keys).values_list(
            "import_key", flat=True
        )
    )
    created = skipped = 0
    with transaction.atomic():
        batch: list[Fact] = []
        for done, learning in enumerate(learnings, start=1):
            key = learning.import_key
            if key in known:
                skipped += 1
            else:
                known.add(key)
                batch.append(
                    _fact_for(
                        actor=actor,
                        learning=learning,
                        visibility=visibility,
                        team=team,
                        import_key=key,
                    )
                )
                created += 1
            if progress is not None:
                progress(done, len(learnings))
        _store(batch)
        audit_log(
            actor=actor,
            action="learning.import",
            target_type="learnings",
            target_id="",
            details={"files": len(files), "created": created, "skipped": skipped},
        )
    if progress is not None and not learnings:
        progress(0, 0)
    return {"files": len(files), "created": created, "skipped": skipped}
