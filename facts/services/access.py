"""The use of facts: the access counts recall adds to, which ranking and the active cap
read."""

from collections import Counter, defaultdict
from collections.abc import Sequence

from django.db.models import F
from django.utils import timezone

from facts.models import Fact


def fact_touch(*, fact_ids: Sequence[int]) -> None:
    """Count one more access of a fact per time its id is listed."""
    by_count: dict[int, list[int]] = defaultdict(list)
    for fact_id, count in Counter(fact_ids).items():
        by_count[count].append(fact_id)
    now = timezone.now()
    for count, ids in by_count.items():
        Fact.objects.filter(pk__in=ids).update(
            access_count=F("access_count") + count, last_accessed_at=now
        )
