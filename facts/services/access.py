"""The use of facts: the access counts recall adds to, which ranking and the active cap
read, and the recalls served per user and day, which the home page charts."""

from collections import Counter, defaultdict
from collections.abc import Sequence

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from facts.models import Fact, RecallDay


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


def recall_day_count(*, user_id: int) -> None:
    """Count one more recall served to user ``user_id`` today (in the server's time
    zone). One UPDATE of the day's row; the day's first recall inserts it, and of two
    that race to, the loser adds to the winner's row."""
    day = timezone.localdate()
    today = RecallDay.objects.filter(user_id=user_id, day=day)
    if today.update(count=F("count") + 1):
        return
    try:
        with transaction.atomic():
            RecallDay.objects.create(user_id=user_id, day=day, count=1)
    except IntegrityError:
        today.update(count=F("count") + 1)
