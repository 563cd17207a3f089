"""``any_of``: the ``in`` lookup for id lists, one array on PostgreSQL."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from facts.models import Fact


def test_any_of_finds_what_in_finds(owner, remember):
    kept = [remember(owner, f"Fact number {i} about the staging host") for i in range(3)]
    ids = [fact.pk for fact in kept]
    wanted = [ids[0], ids[2], ids[2], None, 10**9]
    with CaptureQueriesContext(connection) as queries:
        found = set(Fact.objects.filter(pk__any_of=wanted).values_list("pk", flat=True))
    assert found == set(Fact.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    assert found == {ids[0], ids[2]}
    if connection.vendor == "postgresql":
        assert "= ANY(" in queries[0]["sql"]
    assert not Fact.objects.filter(pk__any_of=[]).exists()
    assert not Fact.objects.filter(pk__any_of=[None]).exists()
    # A subquery stays a subquery.
    inner = Fact.objects.filter(pk=ids[1]).values("pk")
    assert list(Fact.objects.filter(pk__any_of=inner).values_list("pk", flat=True)) == [ids[1]]
