"""What other apps derive from facts, kept in step by the fact store's writes.

The fact store calls these (it does not import the apps that read it): new or changed
facts are queued for the concept graph after commit, and a deleted fact's graph rows,
which its foreign keys cascade away, leave no entity behind.
"""

from collections.abc import Sequence

from memoryhub.tasks import enqueue_on_commit


def facts_derived_queue(*, fact_ids: Sequence[int]) -> None:
    """Queue the work derived from these new or changed facts, once the transaction
    commits (one task per batch)."""
    from concepts.tasks import concept_facts_extract

    if fact_ids:
        enqueue_on_commit(concept_facts_extract, list(fact_ids))


def facts_derived_prune() -> None:
    """Drop what derived from facts just deleted (inside the deleting transaction)."""
    from concepts.services import concept_entities_prune

    concept_entities_prune()
