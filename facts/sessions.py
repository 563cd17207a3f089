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

import functools
from collections.abc import Iterable, Sequence

from django.db import connection
from django.db.models import OuterRef, Q, QuerySet, Subquery

from facts.models import Fact, Status
from facts.search import FACT_FTS, fts_values
from teams.models import Visibility

# How much of each neighbour goes into a fact's entry.
CONTEXT_CHARS = 600
CHUNK = 500
# The sizes the neighbour statement is compiled for (a list of ids is padded to one).
STATEMENT_SIZES = (16, 64, 128, 256, CHUNK)


def _same_session() -> QuerySet:
    """The active facts in the session of the outer fact, and sharing its readers."""
    return (
        Fact.objects.filter(
            owner_id=OuterRef("owner_id"),
            session_id=OuterRef("session_id"),
            layer=OuterRef("layer"),
            project=OuterRef("project"),
            visibility=OuterRef("visibility"),
            tier=OuterRef("tier"),
            fleet=OuterRef("fleet"),
            status=Status.ACTIVE,
        )
        # The team decides who reads a team fact only.
        .filter(~Q(visibility=Visibility.TEAM) | Q(team_id=OuterRef("team_id")))
    )


def _neighbour_subqueries() -> tuple[QuerySet, QuerySet]:
    """The previous and the next fact of the outer fact's session, as subqueries."""
    when, pk = OuterRef("occurred_at"), OuterRef("pk")
    previous = (
        _same_session()
        .filter(Q(occurred_at__lt=when) | Q(occurred_at=when, pk__lt=pk))
        .order_by("-occurred_at", "-pk")
        .values("pk")[:1]
    )
    following = (
        _same_session()
        .filter(Q(occurred_at__gt=when) | Q(occurred_at=when, pk__gt=pk))
        .order_by("occurred_at", "pk")
        .values("pk")[:1]
    )
    return previous, following


def session_neighbours(ids: Iterable[int]) -> dict[int, tuple[int | None, int | None]]:
    """(previous, next) neighbour of each of these facts that is in a session; facts
    outside sessions (or gone) are left out."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    # Most facts are in no session: the neighbour lookups run for the others only.
    in_sessions = []
    for start in range(0, len(ids), CHUNK):
        in_sessions += (
            Fact.objects.filter(pk__in=ids[start : start + CHUNK])
            .exclude(session_id="")
            .values_list("pk", flat=True)
        )
    return neighbours_in_sessions(in_sessions)


def neighbours_in_sessions(ids: Iterable[int]) -> dict[int, tuple[int | None, int | None]]:
    """``session_neighbours`` of facts the caller knows to be in a session (it has read
    their rows), without the query that finds which are."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    found: dict[int, tuple[int | None, int | None]] = {}
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        size = next(s for s in STATEMENT_SIZES if s >= len(chunk))
        sql, params, slots = _neighbour_statement(connection.alias, connection.vendor, size)
        params = list(params)
        # Padded with the last id: a repeated id in the list finds its row once.
        for slot, fact_id in zip(slots, chunk + chunk[-1:] * (size - len(chunk)), strict=True):
            params[slot] = fact_id
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        for fact_id, before, after in rows:
            if before is not None or after is not None:
                found[fact_id] = (before, after)
    return found


@functools.lru_cache(maxsize=len(STATEMENT_SIZES) * 2)
def _neighbour_statement(alias: str, vendor: str, size: int) -> tuple[str, tuple, list[int]]:
    """The statement that finds the neighbours of ``size`` facts, compiled once per
    database (building the two correlated subqueries costs more than running them),
    with the places of the ids among its parameters."""
    sentinels = [-1 - i for i in range(size)]
    previous, following = _neighbour_subqueries()
    rows = (
        Fact.objects.using(alias)
        .filter(pk__in=sentinels)
        .order_by()
        .values_list("pk", Subquery(previous), Subquery(following))
    )
    sql, params = rows.query.get_compiler(alias).as_sql()
    slots = [i for i, value in enumerate(params) if isinstance(value, int) and value < 0]
    if [params[i] for i in slots] != sentinels:
        raise RuntimeError("the neighbour statement's parameters are not the ids alone")
    return sql, tuple(params), slots


def neighbours_of(ids: Iterable[int]) -> set[int]:
    """The neighbours of these facts (not the facts themselves)."""
    ids = set(ids)
    around = session_neighbours(ids)
    return {n for pair in around.values() for n in pair if n is not None} - ids


def _contents(ids: Iterable[int], *fields: str) -> list[tuple]:
    ids = list(ids)
    return [
        row
        for start in range(0, len(ids), CHUNK)
        for row in Fact.objects.filter(pk__in=ids[start : start + CHUNK])
        .order_by()
        .values_list("pk", "content", *fields)
    ]


def _entries(ids: list[int]) -> list[tuple[int, tuple[str, str, str, str]]]:
    """The full-text entries of these facts: content, tags, their neighbours' content
    and who said them."""
    rows = _contents(ids, "tags", "speaker")
    around = session_neighbours(ids)
    known = {row[0]: row[1] for row in rows}
    wanted = {n for pair in around.values() for n in pair if n is not None}
    known.update(_contents(wanted - set(known)))
    entries = []
    for fact_id, content, tags, speaker in rows:
        pair = around.get(fact_id, (None, None))
        context = " ".join(known[n][:CONTEXT_CHARS] for n in pair if n is not None)
        entries.append((fact_id, fts_values(content, list(tags or []), context, speaker)))
    return entries


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


def facts_index_written(facts: Sequence[Fact]) -> None:
    """Index facts just inserted, given as written. Those outside sessions have no
    neighbours: their entries come from the rows in hand, with nothing read back."""
    alone = [f for f in facts if not f.session_id]
    FACT_FTS.upsert(
        [(f.pk, fts_values(f.content, list(f.tags or []), "", f.speaker)) for f in alone],
        new=True,
    )
    facts_index([], new=[f.pk for f in facts if f.session_id])


def facts_index_after_removal(neighbours: Iterable[int]) -> None:
    """Re-index the former neighbours of facts just removed from their sessions
    (deleted, or moved): take them with ``neighbours_of`` before the change."""
    entries = _entries(sorted(set(neighbours)))
    FACT_FTS.upsert(entries)
