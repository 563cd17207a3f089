"""Forgetting a topic across the apps: first a preview of every matching fact, then, on
confirmation, their removal with everything derived from them, and a receipt.

The fact store removes the facts, the earlier wordings merges kept, and the summaries
and profiles left without sources (rebuilding those that keep some); the wiki takes
verbatim quotations of them out of the pages the user may edit and their history, and
marks the decision records about the topic abandoned (kept, no longer standing); the
concept graph loses their triples and the entities only they named. The
indexes are then rewritten without the deleted entries and the database's log emptied,
so nothing of it stays in the file. The audit event is the receipt: it counts what went
and lists the ids, never what it said nor the topic (which is itself personal data); a
preview keeps nothing.
"""

from typing import Any

from django.db import transaction

from concepts.services import concept_entities_prune, concept_triples_count
from facts.search import FACT_FTS
from facts.selectors import fact_forget_preview
from facts.services.forgetting import facts_forget
from memoryhub.engine.db.storage import storage_scrub
from memoryhub.engine.errors import InvalidInput
from teams.services import Actor, audit_log
from wiki.services import wiki_decisions_abandon, wiki_decisions_about, wiki_quotes_forget

MAX_FORGET_IDS = 10_000


def memory_forget_preview(*, actor: Actor, topic: str) -> dict[str, Any]:
    """Every fact of the actor's that may be about ``topic``: the certain ones first (a
    form ticks them), then the possible ones, each with why it matched."""
    matches = [
        {
            "id": m.fact.pk,
            "content": m.fact.content,
            "category": m.fact.category,
            "layer": m.fact.layer,
            "status": m.fact.status,
            "visibility": m.fact.visibility,
            "certain": m.certain,
            "why": m.why,
        }
        for m in fact_forget_preview(user=actor.user, topic=topic)
    ]
    decisions = [
        {"id": page.pk, "title": page.title, "kind": page.kind}
        for page in wiki_decisions_about(actor=actor, topic=topic)
    ]
    return {
        "topic": topic,
        "matches": matches,
        "count": len(matches),
        "certain": sum(1 for m in matches if m["certain"]),
        "possible": sum(1 for m in matches if not m["certain"]),
        "decisions": decisions,
    }


def memory_forget(*, actor: Actor, topic: str, ids: list[int] | None = None) -> dict[str, Any]:
    """Forget the facts ``ids`` (by default the topic's certain matches) and all that
    derives from them; the receipt of what went, listing the possible matches left
    when the choice was the preview's."""
    if not isinstance(topic, str) or not topic.strip():
        raise InvalidInput("Name the topic to forget.")
    possible: list[dict[str, Any]] = []
    if ids is None:
        matches = memory_forget_preview(actor=actor, topic=topic)["matches"]
        ids = [m["id"] for m in matches if m["certain"]]
        possible = [
            {"id": m["id"], "content": m["content"], "why": m["why"]}
            for m in matches
            if not m["certain"]
        ]
    if len(ids) > MAX_FORGET_IDS:
        raise InvalidInput(f"At most {MAX_FORGET_IDS} facts at a time.")
    with transaction.atomic():
        # Triples go with their facts (and the entities only they named with them).
        triples_before = concept_triples_count(owner_id=actor.user.pk)
        outcome = facts_forget(actor=actor, fact_ids=ids) if ids else None
        triples = triples_before - concept_triples_count(owner_id=actor.user.pk)
        concept_entities_prune()
        quotes = wiki_quotes_forget(actor=actor, texts=outcome.contents if outcome else [])
        # Decisions taken about the topic no longer stand: marked, kept as the record.
        abandoned = wiki_decisions_abandon(actor=actor, topic=topic)
        if outcome is not None:
            FACT_FTS.purge()
        removed = {
            "facts": len(outcome.asked) if outcome else 0,
            "copies": len(outcome.copies) if outcome else 0,
            "summaries": (outcome.layers.get(2, 0) if outcome else 0),
            "profiles": (outcome.layers.get(3, 0) if outcome else 0),
            "vectors": outcome.vectors if outcome else 0,
            "fts_rows": len(outcome.removed) if outcome else 0,
            "wiki_pages": len(quotes["changed"]),
            "triples": triples,
            "decisions_abandoned": len(abandoned),
        }
        fact_ids = outcome.removed if outcome else []
        regenerated = outcome.regenerated if outcome else []
        event = audit_log(
            actor=actor,
            action="memory.forget",
            target_type="topic",
            target_id="",
            details={
                "removed": removed,
                "fact_ids": fact_ids,
                "regenerated": regenerated,
                "wiki_pages": quotes["changed"],
                "decisions_abandoned": abandoned,
            },
        )
    storage_scrub()
    return {
        "receipt_id": event.pk,
        "topic": topic,
        "removed": removed,
        "regenerated": regenerated,
        "fact_ids": fact_ids,
        "wiki_pages_not_editable": quotes["not_editable"],
        "decisions_abandoned": abandoned,
        "possible": possible,
    }
