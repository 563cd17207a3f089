"""Forgetting facts with everything derived from them: merge copies, vectors, index rows
and keys; the summaries and profiles that drew on them rebuilt or deleted."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from facts.dedupe import fact_keys_refresh
from facts.models import Fact, FactUndo, Origin, Status, UndoKind
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.embedding import queue_embedding
from facts.sessions import facts_index, facts_index_after_removal, neighbours_of
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import Forbidden
from memoryhub.engine.locking import writes_serialise
from teams.services import Actor


@dataclass
class ForgetOutcome:
    """What forgetting some facts removed and rebuilt."""

    asked: list[int]  # the facts named
    copies: list[int]  # earlier wordings of them kept by merges (archived parents)
    derived: list[int]  # summaries and profiles with no source left
    regenerated: list[int]  # summaries and profiles rebuilt from their other sources
    removed: list[int] = field(default_factory=list)  # every fact deleted
    layers: dict[int, int] = field(default_factory=dict)  # removed facts per layer
    vectors: int = 0  # vectors removed with them
    contents: list[str] = field(default_factory=list)  # what they said (for other apps)


def derived_links(*, children: set[int] | None = None, parents: set[int] | None = None) -> list:
    """(child, parent) ``derived_from`` links of these children or of these parents."""
    through = Fact.derived_from.through.objects
    if children is not None:
        through = through.filter(from_fact_id__in=children)
    if parents is not None:
        through = through.filter(to_fact_id__in=parents)
    return list(through.values_list("from_fact_id", "to_fact_id"))


@transaction.atomic
def facts_forget(*, actor: Actor, fact_ids: Sequence[int]) -> ForgetOutcome:
    """Delete these facts with everything derived from them: the archived copies of
    their earlier wordings (merge parents), their vectors, full-text rows and keys; a
    summary or profile that drew on them is rebuilt from its remaining sources, or
    deleted when none remain. The caller purges the indexes' pages afterwards."""
    # After this owner's other writers (an edit of a fact being forgotten among them),
    # never beside them: both rewrite the facts' index rows.
    writes_serialise("facts", actor.user.pk)
    asked = list(dict.fromkeys(fact_ids))
    allowed = set(
        Fact.objects.owned_by(actor.user).filter(pk__in=asked).values_list("pk", flat=True)
    )
    refused = [i for i in asked if i not in allowed]
    if refused:
        raise Forbidden(
            f"You cannot forget {', '.join(map(str, refused[:20]))}: not found, or not yours."
        )
    removed: set[int] = set(asked)
    # A merge keeps the earlier wordings of a fact as archived parents of its own layer.
    # Other parents are other statements: the one a supersession replaced, and the
    # sources of a summary, which stay.
    frontier = set(asked)
    copies: list[int] = []
    while frontier:
        links = derived_links(children=frontier)
        layer_of = dict(Fact.objects.filter(pk__in=frontier).values_list("pk", "layer"))
        parents = {
            pk: (layer, status, replaced_by)
            for pk, layer, status, replaced_by in Fact.objects.filter(
                pk__in={p for _, p in links}
            ).values_list("pk", "layer", "status", "superseded_by_id")
        }
        found = {
            p
            for c, p in links
            if p not in removed
            and parents[p][0] == layer_of[c]
            and parents[p][1] == Status.ARCHIVED
            and parents[p][2] != c
        }
        copies += sorted(found)
        removed |= found
        frontier = found
    # Summaries (layer 2) and then profiles (layer 3) drawing on what goes.
    derived: list[int] = []
    regenerated: list[int] = []
    touched = {c for c, _ in derived_links(parents=removed)} - removed
    for layer in (2, 3):
        for summary in Fact.objects.filter(pk__in=touched, layer=layer).order_by("pk"):
            sources = [p for _, p in derived_links(children={summary.pk}) if p not in removed]
            if sources:
                _summary_rebuild(actor=actor, summary=summary, source_ids=sources)
                regenerated.append(summary.pk)
            else:
                removed.add(summary.pk)
                derived.append(summary.pk)
        touched = {c for c, _ in derived_links(parents=removed | set(regenerated))} - removed
    rows = list(
        Fact.objects.filter(pk__in=removed).values_list("pk", "layer", "content", "embedding_model")
    )
    ids = [pk for pk, _, _, _ in rows]
    # Their neighbours' entries hold their words: written again without them.
    around = neighbours_of(ids)
    FACT_FTS.delete(ids)
    FACT_VECTORS.delete(ids)
    Fact.objects.filter(pk__in=ids).delete()  # with their keys and links
    facts_index_after_removal(around)
    # The copies a recent delete keeps for its undo go too: a forget leaves nothing to
    # bring back.
    FactUndo.objects.filter(user_id=actor.user.pk, kind=UndoKind.DELETE).delete()
    return ForgetOutcome(
        asked=asked,
        copies=copies,
        derived=derived,
        regenerated=regenerated,
        removed=sorted(ids),
        layers=dict(Counter(layer for _, layer, _, _ in rows)),
        vectors=sum(1 for *_, model in rows if model),
        contents=[content for _, _, content, _ in rows],
    )


def _summary_rebuild(*, actor: Actor, summary: Fact, source_ids: list[int]) -> None:
    """A summary or profile said anew from ``source_ids`` alone: their first
    sentences, in order, within the content limit."""
    config = memory_config_get()
    sources = Fact.objects.filter(pk__in=source_ids).order_by("created_at", "pk")
    sentences = [first_sentence(f.content) for f in sources]
    content = " ".join(sentences)[: config.max_content_length].strip()
    now = timezone.now()
    Fact.objects.filter(pk=summary.pk).update(
        content=content, updated_at=now, embedding_model="", origin=Origin.INFERRED
    )
    summary.derived_from.set(source_ids)
    FACT_VECTORS.delete([summary.pk])
    facts_index([summary.pk])
    fact_keys_refresh([summary.pk])
    queue_embedding([summary.pk], config)


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one)."""
    for end in (". ", "! ", "? ", "\n"):
        cut = text.find(end)
        if cut > 0:
            text = text[: cut + 1]
    return text.strip()
