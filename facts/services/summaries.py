"""Summaries and profiles kept true to their sources.

A summary (layer 2) is built from facts of one scope: one owner, team, visibility,
project and fleet (``DISTILL_SCOPE``); a profile (layer 3) from the summaries of such a
scope. Whoever reads it reads each of its sources, and nobody else.

When a source leaves that scope (its visibility, team or project changes), is deleted
or is forgotten, every row built from it is said anew from the sources it keeps in its
own scope, or retired (deleted) when none remain; a profile follows its summaries the
same way. This runs inside the writing transaction, so no reader ever finds a summary
quoting a fact they can no longer read. No chat model is asked inside a request: the
row is said anew offline (the first sentence of each source), and the next distillation
writes better prose.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from facts.dedupe import fact_keys_refresh
from facts.models import Fact, Origin, Status
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.cleaning import EXCERPT_LENGTH
from facts.services.embedding import queue_embedding
from facts.sessions import facts_index, facts_index_after_removal, neighbours_of
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.derived import facts_derived_prune

# What a summary's sources share with it: their readers are its readers.
DISTILL_SCOPE = ("owner_id", "team_id", "visibility", "project", "fleet")
# A change of these moves a fact out of the summaries built from it.
SCOPE_FIELDS = frozenset({"visibility", "team", "project"})


def scope_key(fact: Fact) -> tuple:
    """The scope ``fact`` may be summarised in (see ``DISTILL_SCOPE``)."""
    return tuple(getattr(fact, name) for name in DISTILL_SCOPE)


def derived_links(*, children: set[int] | None = None, parents: set[int] | None = None) -> list:
    """(child, parent) ``derived_from`` links of these children or of these parents."""
    through = Fact.derived_from.through.objects
    if children is not None:
        through = through.filter(from_fact_id__in=children)
    if parents is not None:
        through = through.filter(to_fact_id__in=parents)
    return list(through.values_list("from_fact_id", "to_fact_id"))


@dataclass
class Followed:
    """What keeping summaries true to their sources did."""

    rebuilt: list[int] = field(default_factory=list)  # said anew from the sources left
    retired: list[int] = field(default_factory=list)  # left with none: deleted
    # Earlier wordings of the rows said anew or retired (merges keep them): deleted too.
    copies: list[int] = field(default_factory=list)


def summaries_follow_sources(
    *, fact_ids: Iterable[int], leaving: Iterable[int] = (), remove: bool = True
) -> Followed:
    """Make the summaries and profiles built from ``fact_ids`` follow them: facts moved
    to another scope, or about to be deleted (``leaving``), are taken out; a row keeping
    no source in its own scope is retired. Inside the writing transaction, after a
    change of scope and before a delete. The rows retired are deleted here with their
    index rows and vectors, unless the caller deletes them itself (``remove=False``)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("summaries_follow_sources runs inside the writing transaction")
    changed = set(fact_ids)
    gone = set(leaving)
    outcome = Followed()
    dropped: set[int] = set()  # sources taken out of a summary that still exist
    for layer in (2, 3):
        links = derived_links(parents=changed)
        candidates = (
            Fact.objects.filter(pk__in={child for child, _ in links}, layer=layer)
            .exclude(pk__in=gone)
            .order_by("pk")
        )
        for row in candidates:
            sources, copies = _sources_and_copies(row)
            keep = [s for s in sources if s.pk not in gone and scope_key(s) == scope_key(row)]
            if len(keep) == len(sources) and not {s.pk for s in sources} & set(outcome.rebuilt):
                continue  # every source still there, in its scope, as it was
            if keep:
                _summary_rebuild(summary=row, sources=keep)
                outcome.rebuilt.append(row.pk)
            else:
                row.derived_from.clear()  # it goes: its sources are rolled into nothing
                outcome.retired.append(row.pk)
                gone.add(row.pk)
            outcome.copies += copies
            gone |= set(copies)
            dropped |= {s.pk for s in sources} - {s.pk for s in keep}
        changed |= set(outcome.rebuilt) | set(outcome.retired)
    sources_undistilled(dropped - gone)
    if remove:
        facts_remove(outcome.retired + outcome.copies)
    return outcome


def _sources_and_copies(row: Fact) -> tuple[list[Fact], list[int]]:
    """What ``row`` was built from (its parents of a lower layer, save the fact it
    replaced), and the earlier wordings of it a merge kept (archived, same layer)."""
    parents = Fact.objects.filter(pk__in=[p for _, p in derived_links(children={row.pk})])
    sources, copies = [], []
    for parent in parents.order_by("created_at", "pk"):
        if parent.superseded_by_id == row.pk:
            continue
        if parent.layer < row.layer:
            sources.append(parent)
        elif parent.layer == row.layer and parent.status == Status.ARCHIVED:
            copies.append(parent.pk)
    return sources, copies


def _summary_rebuild(*, summary: Fact, sources: list[Fact]) -> None:
    """A summary or profile said anew from ``sources`` alone: their first sentences,
    in order, within the content limit."""
    config = memory_config_get()
    content = " ".join(first_sentence(s.content) for s in sources)
    content = content[: config.max_content_length].strip()
    Fact.objects.filter(pk=summary.pk).update(
        content=content,
        source_excerpt=content[:EXCERPT_LENGTH],
        updated_at=timezone.now(),
        embedding_model="",
        origin=Origin.INFERRED,
        provider="offline",  # said anew by rule, whoever first wrote it
    )
    summary.derived_from.set([s.pk for s in sources])
    FACT_VECTORS.delete([summary.pk])
    facts_index([summary.pk])
    fact_keys_refresh([summary.pk])
    queue_embedding([summary.pk], config)


def sources_undistilled(fact_ids: Iterable[int]) -> None:
    """Facts no summary draws on any more wait for the next distillation of their scope."""
    Fact.objects.filter(pk__in=set(fact_ids), layer=1, distilled=True).exclude(
        derivatives__layer=2
    ).update(distilled=False)


def facts_remove(fact_ids: list[int]) -> None:
    """Delete these facts with their full-text rows, vectors, keys and links; their
    session neighbours' entries are written again without them."""
    if not fact_ids:
        return
    around = neighbours_of(fact_ids)
    FACT_FTS.delete(fact_ids)
    FACT_VECTORS.delete(fact_ids)
    Fact.objects.filter(pk__in=fact_ids).delete()
    facts_index_after_removal(around)
    facts_derived_prune()


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one)."""
    for end in (". ", "! ", "? ", "\n"):
        cut = text.find(end)
        if cut > 0:
            text = text[: cut + 1]
    return text.strip()
