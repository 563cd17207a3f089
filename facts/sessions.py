"""A session's facts in order, and what each fact's full-text entry holds of its
neighbours.

A session is the facts one owner wrote with the same ``session_id`` (a conversation, a
task, an imported ticket), in the order of ``occurred_at`` then id. Two facts are
neighbours when they are next to each other among the session's active facts of the
same layer, project, visibility, team, tier and fleet: a fact's full-text entry holds its
neighbours' words (at a lower weight, see ``facts.search``), so that entry may never
carry words its readers could not read themselves.

Every write that changes what a fact says, where it sits in its session or whether it
exists re-indexes the facts whose neighbours change (``facts_index``,
``facts_index_after_removal``); recall reads neighbours in one statement per batch
(``session_neighbours``).
"""

from collections.abc import Iterable

from django.db import connection

from facts.models import Fact, Status
from facts.search import FACT_FTS, fts_values
from memoryhub.db.bulk import rows_by_ids

# How much of each neighbour goes into a fact's entry.
CONTEXT_CHARS = 600
CHUNK = 500

_SAME_SESSION = """
    n.owner_id = f.owner_id AND n.session_id = f.session_id AND n.layer = f.layer
    AND n.project = f.project AND n.visibility = f.visibility
    AND n.tier = f.tier AND n.fleet = f.fleet
    AND (n.team_id = f.team_id OR (n.team_id IS NULL AND f.team_id IS NULL))
    AND n.status = %s
"""


def _neighbours_sql(count: int) -> str:
    table = connection.ops.quote_name(Fact._meta.db_table)
    marks = ", ".join(["%s"] * count)
    before = "(n.occurred_at < f.occurred_at OR (n.occurred_at = f.occurred_at AND n.id < f.id))"
    after = "(n.occurred_at > f.occurred_at OR (n.occurred_at = f.occurred_at AND n.id > f.id))"
    return f"""
        SELECT f.id,
            (SELECT n.id FROM {table} n WHERE {_SAME_SESSION} AND {before}
             ORDER BY n.occurred_at DESC, n.id DESC LIMIT 1),
            (SELECT n.id FROM {table} n WHERE {_SAME_SESSION} AND {after}
             ORDER BY n.occurred_at, n.id LIMIT 1)
        FROM {table} f WHERE f.id IN ({marks}) AND f.session_id <> ''
    """


def session_neighbours(ids: Iterable[int]) -> dict[int, tuple[int | None, int | None]]:
    """(previous, next) neighbour of each of these facts that is in a session; facts
    outside sessions (or gone) are left out."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    found: dict[int, tuple[int | None, int | None]] = {}
    with connection.cursor() as cursor:
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            cursor.execute(_neighbours_sql(len(chunk)), [Status.ACTIVE, Status.ACTIVE, *chunk])
            for fact_id, previous, following in cursor.fetchall():
                if previous is not None or following is not None:
                    found[fact_id] = (previous, following)
    return found


def neighbours_of(ids: Iterable[int]) -> set[int]:
    """The neighbours of these facts (not the facts themselves)."""
    ids = set(ids)
    around = session_neighbours(ids)
    return {n for pair in around.values() for n in pair if n is not None} - ids


def _entries(ids: list[int]) -> list[tuple[int, tuple[str, str, str]]]:
    """The full-text entries of these facts: content, tags, their neighbours' content
    and who said them."""
    if not ids:
        return []
    rows = rows_by_ids(
        f"SELECT id, content, tags, speaker FROM {connection.ops.quote_name(Fact._meta.db_table)}",
        "id",
        ids,
    )
    around = session_neighbours(ids)
    wanted = {n for pair in around.values() for n in pair if n is not None}
    known = {row[0]: row[1] for row in rows}
    missing = wanted - set(known)
    if missing:
        known.update(
            rows_by_ids(
                f"SELECT id, content FROM {connection.ops.quote_name(Fact._meta.db_table)}",
                "id",
                missing,
            )
        )
    entries = []
    for fact_id, content, tags, speaker in rows:
        pair = around.get(fact_id, (None, None))
        context = " ".join(known[n][:CONTEXT_CHARS] for n in pair if n is not None)
        entries.append((fact_id, fts_values(content, _tags(tags), context, speaker)))
    return entries


def _tags(value) -> list[str]:
    if isinstance(value, str):
        from json import loads

        value = loads(value or "[]")
    return list(value or [])


def facts_index(ids: Iterable[int], *, new: Iterable[int] = ()) -> None:
    """Index these facts (``new``: facts just inserted) and re-index their neighbours,
    whose entries hold what these say. Inside the writing transaction."""
    new = [int(i) for i in new]
    changed = set(int(i) for i in ids) | set(new)
    if not changed:
        return
    fresh = set(new)
    entries = _entries(sorted(changed | neighbours_of(changed)))
    FACT_FTS.upsert([e for e in entries if e[0] in fresh], new=True)
    FACT_FTS.upsert([e for e in entries if e[0] not in fresh])


def facts_index_after_removal(neighbours: Iterable[int]) -> None:
    """Re-index the former neighbours of facts just removed from their sessions
    (deleted, or moved): take them with ``neighbours_of`` before the change."""
    entries = _entries(sorted(set(neighbours)))
    FACT_FTS.upsert(entries)
