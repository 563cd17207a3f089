"""The active cap: how much a fact is worth keeping, and archiving the least valuable
active facts past the cap."""

from typing import Any

from django.utils import timezone

from facts.dedupe import fact_keys_refresh
from facts.models import Fact, Status
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor, audit_log


def retention_value(fact: Fact, *, now: Any, half_life_days: float) -> float:
    """How much a fact is worth keeping: importance, then recency, then use."""
    recency = fact.recency(now=now, half_life_days=half_life_days)
    return 0.6 * fact.importance + 0.3 * recency + 0.1 * fact.use(saturation=50)


def enforce_active_cap(
    *,
    actor: Actor | None,
    owner_id: int,
    project: str,
    config: MemoryConfig,
    keep: int | None = None,
) -> list[int]:
    """Archive the least valuable active facts of an owner's project past the cap."""
    cap = config.max_active_facts
    if not cap:
        return []
    active = Fact.objects.filter(owner_id=owner_id, project=project, status=Status.ACTIVE)
    excess = active.count() - cap
    if excess <= 0:
        return []
    now = timezone.now()
    candidates = list(
        active.exclude(pk=keep).only(
            "id", "importance", "created_at", "last_accessed_at", "access_count"
        )
    )
    candidates.sort(
        key=lambda f: (
            retention_value(f, now=now, half_life_days=config.recency_half_life_days),
            f.pk,
        )
    )
    victims = [f.pk for f in candidates[:excess]]
    Fact.objects.filter(pk__in=victims).update(status=Status.ARCHIVED, updated_at=now)
    fact_keys_refresh(victims)
    audit_log(
        actor=actor,
        action="fact.archive",
        target_type="fact",
        target_id=victims[0] if victims else "",
        details={
            "reason": f"over the cap of {cap} active facts",
            "ids": victims,
            "project": project,
        },
    )
    return victims
