"""Forgetting a topic: a preview that says why each fact matched, then removal of the
chosen facts with everything derived from them, a receipt, and no trace left in any
table, index, log or the database file."""

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from concepts.models import Entity, Mention, Triple
from facts.models import Fact, Status
from facts.search import FACT_FTS, FACT_KEYS, FACT_VECTORS
from memoryhub.surface.forget import memory_forget
from teams.models import AuditEvent
from teams.services import Actor
from wiki.models import Page, PageRevision

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "Alice's salary is 98765 zebras a year, paid by {payer}"


def post(client, path: str, body: object):
    return client.post(path, body, content_type="application/json")


def file_holds(path: Path, text: str) -> bool:
    """Whether the file holds ``text`` (any case), read by another process: closing a
    file this process opened would drop every lock the process holds on it (POSIX
    locks are per process), and SQLite's locks on the database among them."""
    if not path.exists():
        return False
    check = (
        "import sys; p, t = sys.argv[1:]; "
        "sys.exit(t.lower().encode() in open(p, 'rb').read().lower())"
    )
    return subprocess.run([sys.executable, "-c", check, str(path), text]).returncode == 1


@pytest.fixture
def alice(owner, team, agent_client):
    return agent_client(owner)


@pytest.fixture
def payer() -> str:
    """A word of this test's own: search tables outlive a test's rows, so the trace scan
    looks for a word no other test wrote."""
    return "Quorvex" + uuid.uuid4().hex[:8]


@pytest.fixture
def secret(payer) -> str:
    return SECRET.format(payer=payer)


@pytest.fixture
def world(owner, teammate, team, remember, secret):
    """Facts about the salary in several shapes, and others that must stay."""
    from facts.services.create import fact_create
    from teams.services import Actor

    salary = remember(owner, secret, tags=["pay"])
    # A repeat merges: the fact keeps an archived parent with the earlier wording.
    fact_create(actor=Actor(user=owner), data={"content": secret + "!", "tags": ["pay"]})
    other = remember(owner, "Alice prefers standing desks in the Lisbon office")
    summary = remember(owner, "Summary: Alice is paid 98765 zebras and likes standing desks",
                       layer=2, category="summary")  # fmt: skip
    summary.derived_from.add(salary, other)
    only_salary = remember(owner, "Summary: Alice earns 98765 zebras", layer=2,
                           category="summary")  # fmt: skip
    only_salary.derived_from.add(salary)
    profile = remember(owner, "Profile: Alice, 98765 zebras, standing desks", layer=3,
                       category="profile")  # fmt: skip
    profile.derived_from.add(summary)
    teammates = remember(
        teammate, "Bob's salary is a secret too, 4242 zebras", visibility="team", team=team.pk
    )
    return {
        "salary": salary,
        "other": other,
        "summary": summary,
        "only_salary": only_salary,
        "profile": profile,
        "teammates": teammates,
    }


def test_the_preview_lists_the_users_matching_facts_and_why(alice, world):
    body = post(alice, "/api/forget", {"topic": "salary zebras", "dry_run": True}).json()
    ids = {m["id"] for m in body["matches"]}
    assert world["salary"].pk in ids and world["only_salary"].pk in ids
    assert world["teammates"].pk not in ids  # another person's: not hers to forget
    assert world["other"].pk not in ids
    salary = next(m for m in body["matches"] if m["id"] == world["salary"].pk)
    assert "holds the words salary, zebras" in salary["why"]
    assert body["count"] == len(body["matches"])
    # Summaries match as well: every layer is searched.
    assert {m["layer"] for m in body["matches"]} >= {1, 2}
    assert Fact.objects.filter(pk__in=ids).count() == len(ids)  # nothing changed yet


def test_forgetting_removes_the_facts_and_all_that_derives_from_them(alice, world, owner):
    preview = post(alice, "/api/forget", {"topic": "salary zebras", "dry_run": True}).json()
    chosen = [m["id"] for m in preview["matches"] if m["layer"] == 1]
    receipt = post(alice, "/api/forget", {"topic": "salary zebras", "ids": chosen}).json()
    assert receipt["receipt_id"] and receipt["topic"] == "salary zebras"
    gone = set(receipt["fact_ids"])
    assert {world["salary"].pk, world["only_salary"].pk} <= gone
    assert not Fact.objects.filter(pk__in=gone).exists()
    assert (
        not Fact.objects.filter(content__contains="98765")
        .exclude(pk__in=[world["summary"].pk, world["profile"].pk])
        .exists()
    )
    # The summary that drew on another fact too is said anew from that fact alone, and
    # the profile built on it as well.
    summary = Fact.objects.get(pk=world["summary"].pk)
    profile = Fact.objects.get(pk=world["profile"].pk)
    assert "98765" not in summary.content and "standing desks" in summary.content
    assert list(summary.derived_from.values_list("pk", flat=True)) == [world["other"].pk]
    assert "98765" not in profile.content
    assert sorted(receipt["regenerated"]) == sorted([summary.pk, profile.pk])
    assert receipt["removed"]["summaries"] == 1 and receipt["removed"]["copies"] == 1
    assert FACT_FTS.ids().isdisjoint(gone)
    assert FACT_VECTORS.vectors(list(gone)) == {}
    assert not FACT_KEYS.keys_of(gone)
    assert Fact.objects.filter(pk=world["teammates"].pk).exists()
    event = AuditEvent.objects.get(pk=receipt["receipt_id"])
    assert event.action == "memory.forget" and sorted(event.details["fact_ids"]) == sorted(gone)
    assert event.details["removed"]["facts"] == len(chosen)
    # The topic is personal data too: the audit log keeps the counts, ids and time only.
    logged = str(AuditEvent.objects.filter(actor=owner).values_list("details", "target_id"))
    assert "98765" not in logged and "zebras" not in logged and "salary" not in logged


def test_a_preview_leaves_no_trace_in_the_audit_log(alice, world, owner):
    before = AuditEvent.objects.count()
    post(alice, "/api/forget", {"topic": "salary zebras", "dry_run": True})
    assert AuditEvent.objects.count() == before


@pytest.mark.sqlite_only("reads the database file and its write-ahead log")
def test_nothing_forgotten_stays_anywhere_in_the_database_or_its_files(
    alice, world, owner, secret, payer
):
    from teams.services import Actor
    from wiki.services import wiki_page_upsert

    wiki_page_upsert(actor=Actor(user=owner), title="Pay notes", content=f"Quote: {secret}.")
    wiki_page_upsert(actor=Actor(user=owner), title="Pay notes", content=f"Again: {secret}!")
    receipt = post(alice, "/api/forget", {"topic": "salary zebras"}).json()
    assert receipt["removed"]["wiki_pages"] == 1
    assert "[forgotten]" in Page.objects.get().content
    assert not PageRevision.objects.filter(content__contains="98765").exists()
    for path in ("/api/memories?limit=200", "/api/memories/export",
                 "/api/export/personalization", "/api/memories/search?q=zebras",
                 "/api/wiki/search?q=zebras"):  # fmt: skip
        assert payer.encode() not in b"".join(alice.get(path)), path
    assert payer not in post(alice, "/api/recall", {"query": "Alice salary"}).json()["block"]

    # Every row of every table, indexes' shadow tables included.
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [name for (name,) in cursor.fetchall()]
        for table in tables:
            cursor.execute(f'SELECT * FROM "{table}"')
            for row in cursor.fetchall():
                text = b" ".join(
                    v if isinstance(v, bytes) else str(v).encode() for v in row if v is not None
                )
                assert payer.lower().encode() not in text.lower(), table
    # And the files: the database, its write-ahead log, nothing left on free pages.
    name = Path(settings.DATABASES["default"]["TEST"]["NAME"])
    for path in (name, Path(f"{name}-wal")):
        assert not file_holds(path, payer), path


def test_bad_input_is_refused_and_changes_nothing(alice, world, outsider, agent_client):
    assert post(alice, "/api/forget", {"topic": "  ", "dry_run": True}).status_code == 400
    assert post(alice, "/api/forget", {"topic": "x" * 501, "dry_run": True}).status_code == 400
    nothing = post(alice, "/api/forget", {"topic": "kangaroo juggling", "dry_run": True})
    assert nothing.json()["count"] == 0
    theirs = post(alice, "/api/forget", {"topic": "bob", "ids": [world["teammates"].pk]})
    assert theirs.status_code == 403
    stranger = agent_client(outsider, name="stranger")
    refused = post(stranger, "/api/forget", {"topic": "salary", "ids": [world["salary"].pk]})
    assert refused.status_code == 403
    assert post(stranger, "/api/forget", {"topic": "salary", "dry_run": True}).json()["count"] == 0
    # Ids no database column can hold, beside one that exists: refused whole.
    for odd in (-(2**64), 2**63, 0, -3):
        odd_ids = post(alice, "/api/forget", {"topic": "salary", "ids": [world["salary"].pk, odd]})
        assert odd_ids.status_code == 422 and "ids" in str(odd_ids.json()["detail"])
    assert Fact.objects.filter(pk=world["salary"].pk, status=Status.ACTIVE).exists()


def test_a_cascading_delete_forgets_one_fact_and_answers_the_receipt(alice, world):
    response = alice.delete(f"/api/memories/{world['salary'].pk}?cascade=true")
    assert response.status_code == 200
    receipt = response.json()
    assert world["salary"].pk in receipt["fact_ids"]
    assert world["only_salary"].pk in receipt["fact_ids"]  # no source left
    assert not Fact.objects.filter(pk=world["salary"].pk).exists()


@pytest.mark.sqlite_only("reads the database file and its write-ahead log")
def test_the_file_keeps_no_trace_of_a_plain_delete_either(alice, owner, remember):
    fact = remember(owner, f"The vault combination is 31-41-59-{uuid.uuid4().hex[:6]}")
    assert alice.delete(f"/api/memories/{fact.pk}").status_code == 204
    from memoryhub.engine.db.storage import storage_scrub

    storage_scrub()
    name = Path(settings.DATABASES["default"]["TEST"]["NAME"])
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert not file_holds(name, fact.content)


# --- The dashboard ----------------------------------------------------------------------


def test_the_forget_page_previews_then_forgets_the_ticked_facts(owner_client, world):
    page = owner_client.get("/memory/forget/", {"topic": "salary zebras"})
    assert page.status_code == 200
    html = page.content.decode()
    assert f'value="{world["salary"].pk}"' in html and "holds the words salary, zebras" in html
    assert f'value="{world["teammates"].pk}"' not in html
    done = owner_client.post(
        "/memory/forget/", {"topic": "salary zebras", "ids": [world["salary"].pk]}
    )
    assert done.status_code == 200 and "Receipt #" in done.content.decode()
    assert not Fact.objects.filter(pk=world["salary"].pk).exists()
    assert Fact.objects.filter(pk=world["other"].pk).exists()


def test_the_forget_page_refuses_odd_input_and_outsiders(owner_client, outsider_client, world):
    assert owner_client.post("/memory/forget/", {"topic": "x"}).status_code == 400
    assert owner_client.post("/memory/forget/", {"topic": "x", "ids": ["²"]}).status_code == 400
    refused = outsider_client.post(
        "/memory/forget/", {"topic": "salary", "ids": [world["salary"].pk]}
    )
    assert refused.status_code == 403
    assert Fact.objects.filter(pk=world["salary"].pk).exists()
    assert (
        "No fact of yours"
        in outsider_client.get("/memory/forget/", {"topic": "salary"}).content.decode()
    )


@pytest.mark.browser
def test_a_person_forgets_a_topic_through_the_preview(page, live_server, login, owner, world):
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    page.click("text=forget a topic")
    page.fill("#forget-topic", "salary zebras")
    page.click("text=Find facts")
    page.wait_for_selector("table.forget-matches")
    assert page.locator("table.forget-matches tbody tr").count() >= 2
    # Keep the summary that also speaks of desks: untick it.
    page.uncheck(f'input[name=ids][value="{world["summary"].pk}"]')
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("text=Forget the ticked facts")
    page.wait_for_selector("text=Receipt #")
    assert not Fact.objects.filter(pk=world["salary"].pk).exists()
    assert Fact.objects.filter(pk=world["summary"].pk).exists()


def test_forgetting_removes_the_triples_and_counts_them_in_the_receipt(owner, remember):
    remember(owner, "Alice works at Acme Corp.")
    secret = remember(owner, "Project Nightjar depends on Vaultbox.")

    receipt = memory_forget(actor=Actor(user=owner), topic="Nightjar", ids=[secret.pk])

    assert receipt["removed"]["triples"] == 1
    assert not Entity.objects.filter(key__in=["project nightjar", "vaultbox"]).exists()
    assert not Mention.objects.filter(name__icontains="nightjar").exists()
    assert Triple.objects.count() == 1
