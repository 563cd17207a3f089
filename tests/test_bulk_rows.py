"""Plain-row bulk writes: ids come back in order and JSON and timestamps are stored
as the model layer would store them."""

from datetime import UTC, datetime, timedelta

import pytest

from memoryhub.engine.db.bulk import (
    IDS_PER_SELECT,
    MAX_PARAMS,
    insert_returning_ids,
    insert_rows,
    queryset_rows_by_ids,
    update_rows,
)
from teams.models import AuditEvent

pytestmark = pytest.mark.django_db

FIELDS = ("action", "target_type", "target_id", "details", "created_at", "actor_label")


def test_insert_rows_returns_ids_in_order_across_statements():
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    count = MAX_PARAMS // len(FIELDS) + 7  # more than one statement
    rows = [
        ("x.test", "thing", str(i), {"n": i, "tags": ["a", "b"]}, when + timedelta(seconds=i), "")
        for i in range(count)
    ]
    ids = insert_returning_ids(AuditEvent, FIELDS, rows)
    assert len(ids) == count == len(set(ids))
    stored = AuditEvent.objects.in_bulk(ids)
    for pk, row in zip(ids, rows, strict=True):
        event = stored[pk]
        assert (event.target_id, event.details, event.created_at) == (row[2], row[3], row[4])


ODD = ["it's", 'say "hi"', "{a,b}", "back\\slash", "NULL", "", "line\nbreak", "ünï 🧠", "a,b"]


def test_bulk_inserts_store_every_character_of_text_and_json_as_written():
    when = datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    rows = [(v, "", str(i), {"v": v, "n": None}, when, v) for i, v in enumerate(ODD)]
    ids = insert_returning_ids(AuditEvent, FIELDS, rows)
    insert_rows(AuditEvent, FIELDS, rows)
    stored = AuditEvent.objects.in_bulk(ids)
    for pk, (action, _, _, details, created_at, label) in zip(ids, rows, strict=True):
        event = stored[pk]
        assert (event.action, event.details, event.created_at, event.actor_label) == (
            action,
            details,
            created_at,
            label,
        )
    assert AuditEvent.objects.filter(action__in=ODD).count() == 2 * len(ODD)


@pytest.mark.parametrize("pipeline", [False, True])
def test_a_bulk_insert_breaking_a_constraint_raises_djangos_error_and_writes_nothing(pipeline):
    from contextlib import nullcontext

    from django.db import IntegrityError, transaction

    from memoryhub.engine.db.bulk import pipelined

    when = datetime(2026, 1, 2, tzinfo=UTC)
    rows = [("x.bad", "", "1", {}, when, ""), (None, "", "2", {}, when, "")]  # action: NOT NULL
    # Inside the test's transaction, as a service called by another would be.
    with (
        pytest.raises(IntegrityError),
        transaction.atomic(),
        pipelined() if pipeline else nullcontext(),
    ):
        insert_rows(AuditEvent, FIELDS, rows)
        insert_rows(AuditEvent, FIELDS, [("x.after", "", "3", {}, when, "")])
    # The failed block was rolled back and the surrounding transaction goes on.
    assert not AuditEvent.objects.filter(target_id__in=["1", "2", "3"]).exists()


def test_update_rows_sets_fields_by_primary_key():
    when = datetime(2026, 1, 2, tzinfo=UTC)
    ids = insert_returning_ids(
        AuditEvent, FIELDS, [("x.test", "", str(i), {}, when, "") for i in range(3)]
    )
    later = when + timedelta(days=1)
    update_rows(AuditEvent, ("details", "created_at"), [({"done": True}, later, ids[1])])
    events = AuditEvent.objects.in_bulk(ids)
    assert events[ids[1]].details == {"done": True} and events[ids[1]].created_at == later
    assert events[ids[0]].details == {} and events[ids[0]].created_at == when


def test_nothing_to_write_is_a_no_op():
    assert insert_returning_ids(AuditEvent, FIELDS, []) == []
    insert_rows(AuditEvent, FIELDS, [])
    update_rows(AuditEvent, FIELDS, [])
    assert not AuditEvent.objects.exists()


def test_insert_rows_writes_every_row_through_statements_of_several_lengths():
    when = datetime(2026, 3, 4, tzinfo=UTC)
    rows = [("x.many", "", str(i), {"i": i}, when, "") for i in range(63)]  # 50 + 10 + 3 x 1
    insert_rows(AuditEvent, FIELDS, rows)
    stored = AuditEvent.objects.filter(action="x.many")
    assert sorted(int(e.target_id) for e in stored) == list(range(63))
    assert all(e.details == {"i": int(e.target_id)} and e.created_at == when for e in stored)


@pytest.mark.postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_table_outgrowing_its_statistics_is_analyzed_before_the_next_bulk_write():
    from django.db import connection

    from memoryhub.engine.db.bulk import analyze_when_grown

    table = AuditEvent._meta.db_table

    def planned_rows() -> float:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
            return cursor.fetchone()[0]

    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {table}")
    before = planned_rows()
    when = datetime(2026, 1, 2, tzinfo=UTC)
    insert_rows(AuditEvent, FIELDS, [("x.test", "", str(i), {}, when, "") for i in range(3000)])
    with connection.cursor() as cursor:
        # The server counts changes per table a little after each transaction.
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT 1")
    analyze_when_grown(table)
    assert before < 100 and planned_rows() >= 3000


@pytest.mark.postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_table_another_process_is_analyzing_is_left_to_it():
    import threading

    from django.db import connection, connections, transaction

    from memoryhub.engine.db.bulk import analyze_when_grown

    table = AuditEvent._meta.db_table
    when = datetime(2026, 1, 2, tzinfo=UTC)
    insert_rows(AuditEvent, FIELDS, [("x.test", "", str(i), {}, when, "") for i in range(3000)])
    locked, done = threading.Event(), threading.Event()

    def analyzing_elsewhere() -> None:
        # The lock ANALYZE and VACUUM take, held by another connection.
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {table} IN SHARE UPDATE EXCLUSIVE MODE")
                locked.set()
                done.wait(30)
        finally:
            connections.close_all()

    other = threading.Thread(target=analyzing_elsewhere)
    other.start()
    try:
        assert locked.wait(30)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_force_next_flush()")
            cursor.execute("SET lock_timeout = '5s'")  # a wait for the lock fails the test
        try:
            analyze_when_grown(table)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
    finally:
        done.set()
        other.join()
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
        assert cursor.fetchone()[0] < 3000  # skipped, not waited for
    analyze_when_grown(table)  # once the other is done, analyzed as usual
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
        assert cursor.fetchone()[0] >= 3000


BUILT: list[int] = []


def _events_with_a_subquery():
    from django.db.models import OuterRef, Subquery

    BUILT.append(1)
    later = AuditEvent.objects.filter(pk__gt=OuterRef("pk"), action="x.test").order_by("pk")
    return AuditEvent.objects.order_by().values_list("pk", Subquery(later.values("pk")[:1]))


def test_a_queryset_is_compiled_once_then_read_by_ids_in_chunks():
    when = datetime(2026, 1, 2, tzinfo=UTC)
    rows = [("x.test", "thing", str(i), {}, when, "") for i in range(IDS_PER_SELECT + 20)]
    ids = insert_returning_ids(AuditEvent, FIELDS, rows)
    expected = {pk: (ids[i + 1] if i + 1 < len(ids) else None) for i, pk in enumerate(ids)}
    BUILT.clear()
    for asked in (ids, ids[:3], [ids[-1], 0]):  # more than a statement holds, a few, absent
        found = dict(queryset_rows_by_ids(_events_with_a_subquery, asked))
        assert found == {pk: expected[pk] for pk in asked if pk in expected}
    assert len(BUILT) <= 1  # built and compiled once per process and database
    with pytest.raises(ValueError):
        queryset_rows_by_ids(lambda: AuditEvent.objects.filter(action="x"), ids)
