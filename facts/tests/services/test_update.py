"""Changing and deleting a fact: FTS and vectors follow."""

import pytest

from facts.search import FACT_FTS, FACT_VECTORS
from facts.services.update import fact_delete, fact_update
from teams.models import AuditEvent
from teams.services import Actor

pytestmark = pytest.mark.django_db


def test_update_reindexes_and_reembeds(owner, remember, django_capture_on_commit_callbacks):
    fact = remember(owner, "The office is in Berlin")
    before = FACT_VECTORS.vectors([fact.pk])[fact.pk].copy()
    with django_capture_on_commit_callbacks(execute=True):
        fact_update(
            actor=Actor(user=owner),
            fact=fact,
            changes={"content": "The office moved to Lisbon", "tags": ["office"]},
        )
    assert FACT_FTS.content_of(fact.pk) == ("The office moved to Lisbon", "office", "", "")
    after = FACT_VECTORS.vectors([fact.pk])[fact.pk]
    assert float(before @ after) < 0.99
    assert not FACT_FTS.search('"berlin"', limit=5)


def test_delete_leaves_no_fts_row_and_no_vector(owner, remember):
    fact = remember(owner, "Temporary note about the hackathon")
    fact_id = fact.pk
    fact_delete(actor=Actor(user=owner), fact=fact)
    assert FACT_FTS.content_of(fact_id) is None
    assert FACT_VECTORS.vectors([fact_id]) == {}
    event = AuditEvent.objects.get(action="fact.delete", target_id=str(fact_id))
    assert fact.content not in str(event.details)
