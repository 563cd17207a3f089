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

from collections.abc import Iterable, Sequence

from django.db.models import OuterRef, Q, QuerySet, Subquery

from facts.models import Fact, Status
from facts.search import FACT_FTS, fts_values
from memoryhub.engine.db.bulk import queryset_rows_by_ids
from teams.models import Visibility

# How much of each neighbour goes into a fact's entry.
CONTEXT_CHARS = 600
CHUNK = 500


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
    return {
        fact_id: (before, after)
        for fact_id, before, after in queryset_rows_by_ids(_with_neighbours, ids)
        if before is not None or after is not None
    }


def _with_neighbours() -> QuerySet:
    """Every fact's id with its previous and next neighbour's."""
    previous, following = _neighbour_subqueries()
    return Fact.objects.order_by().values_list("pk", Subquery(previous), Subquery(following))


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
