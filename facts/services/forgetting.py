"""Forgetting facts with everything derived from them: merge copies, vectors, index rows
and keys; the summaries and profiles that drew on them rebuilt or deleted."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction

from facts.models import Fact, FactUndo, Status, UndoKind
from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.summaries import derived_links, summaries_follow_sources
from facts.sessions import facts_index_after_removal, neighbours_of
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


@transaction.atomic
def facts_forget(*, actor: Actor, fact_ids: Sequence[int]) -> ForgetOutcome:
    """Delete these facts with everything derived from them: the archived copies of
    their earlier wordings (merge parents), their vectors, full-text rows and keys; a
    summary or profile that drew on them is rebuilt from the sources it keeps in its own
    scope, or deleted when none remain (see ``summaries_follow_sources``). The caller
    purges the indexes' pages afterwards."""
    asked = list(dict.fromkeys(fact_ids))
    # Writers of this owner's facts (an edit of a fact being forgotten, a distillation
    # of them) run one at a time: they rewrite the same index rows and summaries.
    writes_serialise("facts", actor.user.pk)
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
    # Summaries (layer 2) and then profiles (layer 3) drawing on what goes are said anew
    # from the sources they keep in their own scope, or go with it.
    followed = summaries_follow_sources(fact_ids=removed, leaving=removed, remove=False)
    copies += followed.copies
    removed |= set(followed.retired) | set(followed.copies)
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
        derived=followed.retired,
        regenerated=followed.rebuilt,
        removed=sorted(ids),
        layers=dict(Counter(layer for _, layer, _, _ in rows)),
        vectors=sum(1 for *_, model in rows if model),
        contents=[content for _, _, content, _ in rows],
    )
