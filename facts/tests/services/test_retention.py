"""The active cap: the least valuable facts archived past it, and none at zero."""

import pytest

from facts.models import Fact, Status
from memoryhub.engine.config import memory_config_get
from teams.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_cap_archives_the_least_valuable_and_audits(owner, remember):
    config = memory_config_get()
    config.max_active_facts = 3
    config.save()
    low = remember(owner, "Trivia: the coffee machine is on floor two", importance=0.05)
    for text in (
        "Prod database is PostgreSQL",
        "On-call rotates weekly",
        "Releases are tagged with semver",
    ):
        remember(owner, text, importance=0.9)
    low.refresh_from_db()
    assert low.status == Status.ARCHIVED
    assert Fact.objects.filter(owner=owner, status=Status.ACTIVE).count() == 3
    assert Fact.objects.count() == 4  # archived, never destroyed
    event = AuditEvent.objects.get(action="fact.archive")
    assert event.details["ids"] == [low.pk]


def test_cap_zero_means_no_cap(owner, remember):
    config = memory_config_get()
    config.max_active_facts = 0
    config.save()
    for i in range(5):
        remember(owner, f"Distinct fact number {i} about topic {i * 7}")
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 5
