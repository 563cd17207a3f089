"""The personal data export and the import: everything held about a person and nothing
about anyone else, a published schema it validates against, staff exports for data
subject requests, and imports (of exports and of Mem0 dumps) that round-trip, add
nothing the second time and refuse bad input whole."""

import io
import json
import threading

import jsonschema_rs
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from facts.models import Fact
from memoryhub.engine.models import Job
from teams.models import AuditEvent

pytestmark = pytest.mark.django_db(transaction=True)


def post(client, path: str, body: object):
    return client.post(path, json.dumps(body), content_type="application/json")


def export_of(client, **params) -> dict:
    response = client.get("/api/export/personalization", params)
    assert response.status_code == 200, response.content
    assert response.streaming
    assert response["Content-Disposition"].startswith("attachment;")
    return json.loads(b"".join(response.streaming_content))


def schema_of(client) -> dict:
    response = client.get("/api/export/schema")
    assert response.status_code == 200
    return response.json()


def facts_by_content(document: dict) -> dict[str, dict]:
    return {f["content"]: f for f in document["facts"]}


@pytest.fixture
def world(owner, teammate, outsider, team, remember, make_token, settings, tmp_path):
    """Alice's memory in many shapes, beside a teammate's and an outsider's."""
    from codegraph.services import code_project_register
    from facts.models import MemoryReview
    from facts.services.create import fact_create
    from teams.services import Actor
    from wiki.services import wiki_page_upsert

    alice = Actor(user=owner)
    tea = remember(owner, "Alice drinks green tea every morning", tags=["drinks"])
    desk = remember(owner, "Alice works at a standing desk in Lisbon", visibility="team")
    old_city = remember(owner, "Alice lives in Porto")
    new_city = fact_create(
        actor=alice, data={"content": "Alice lives in Lisbon now", "supersedes": old_city.pk}
    ).fact
    summary = remember(owner, "Alice: green tea, standing desk", layer=2, category="summary")
    summary.derived_from.add(tea, desk)
    profile = remember(owner, "Profile: a Lisbon tea drinker", layer=3, category="profile")
    profile.derived_from.add(summary)
    theirs = remember(
        teammate, "Bob keeps the deploy keys in the vault", visibility="team", team=team.pk
    )
    stranger = remember(outsider, "Charlie collects antique maps")
    MemoryReview.objects.create(
        owner=owner, visibility="private", content="Alice may like jasmine tea"
    )
    MemoryReview.objects.create(
        owner=teammate, visibility="private", content="Bob may like espresso"
    )
    own_page = wiki_page_upsert(actor=alice, title="Tea notes", content="Sencha, then matcha.")
    bobs_page = wiki_page_upsert(
        actor=Actor(user=teammate),
        title="Deploys",
        content="Bob's deploy checklist.",
        visibility="team",
        team=team.pk,
    )
    # Alice edits Bob's team page: her revision is hers, the page is Bob's.
    wiki_page_upsert(actor=alice, title="Deploys", content="Bob's checklist; Alice's rollback.")
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    (tmp_path / "shop").mkdir()
    code_project_register(actor=alice, name="shop", path=str(tmp_path / "shop"))
    token, secret = make_token(owner, name="laptop")
    return {
        "tea": tea,
        "desk": desk,
        "old_city": old_city,
        "new_city": new_city,
        "summary": summary,
        "profile": profile,
        "theirs": theirs,
        "stranger": stranger,
        "own_page": own_page.page,
        "bobs_page": bobs_page.page,
        "secret": secret,
        "token": token,
    }


# --- The export ---------------------------------------------------------------------------


def test_the_export_holds_everything_about_the_person_and_nothing_of_anyone_else(
    owner_client, world
):
    document = export_of(owner_client)
    jsonschema_rs.validate(schema_of(owner_client), document)
    assert (document["format"], document["format_version"]) == ("memoryhub.personalization", 1)
    assert document["user"]["username"] == "alice"

    facts = facts_by_content(document)
    assert {f["id"] for f in document["facts"]} == {
        world[name].pk for name in ("tea", "desk", "old_city", "new_city", "summary", "profile")
    }
    # Lineage, validity and layers, as stored.
    summary = facts["Alice: green tea, standing desk"]
    assert sorted(summary["provenance"]["derived_from"]) == sorted(
        [world["tea"].pk, world["desk"].pk]
    )
    assert summary["layer"] == 2
    assert facts["Profile: a Lisbon tea drinker"]["provenance"]["derived_from"] == [
        world["summary"].pk
    ]
    old = facts["Alice lives in Porto"]
    assert old["superseded_by"] == world["new_city"].pk and old["valid_until"] is not None
    assert facts["Alice drinks green tea every morning"]["tags"] == ["drinks"]
    # Each fact's history: the audit events about it.
    assert [e["action"] for e in facts["Alice lives in Lisbon now"]["history"]] == ["fact.create"]
    assert all(f["import_key"] for f in document["facts"])

    assert [r["content"] for r in document["reviews"]] == ["Alice may like jasmine tea"]
    assert [p["title"] for p in document["wiki_pages"]] == ["Tea notes"]
    # Her revision of Bob's page is hers; his own revision of it is not.
    written = {(r["page"], r["content"]) for r in document["wiki_revisions"]}
    assert (world["bobs_page"].pk, "Bob's checklist; Alice's rollback.") in written
    assert (world["bobs_page"].pk, "Bob's deploy checklist.") not in written
    assert [p["name"] for p in document["code_projects"]] == ["shop"]
    assert document["settings"] == {"active_team": "Platform", "default_visibility": "private"}
    assert document["memberships"][0]["team"] == "Platform"
    assert document["memberships"][0]["role"] == "admin"
    assert [t["name"] for t in document["agent_tokens"]] == ["laptop"]
    assert {e["action"] for e in document["audit_events"]} >= {
        "fact.create",
        "wiki.create",
        "token.create",
        "export.personalization",
    }

    text = json.dumps(document)
    for foreign in ("deploy keys", "antique maps", "espresso", "Bob's deploy checklist."):
        assert foreign not in text, foreign
    # Tokens without their secrets or hashes.
    assert world["secret"] not in text and world["token"].secret_hash not in text


def test_the_export_reads_its_rows_in_chunks_whatever_their_number(
    owner, owner_client, remember, django_assert_max_num_queries
):
    from facts.services.create import fact_bulk_create
    from teams.services import Actor

    remember(owner, "One first fact")
    with django_assert_max_num_queries(40) as few:
        export_of(owner_client)
    fact_bulk_create(
        actor=Actor(user=owner), items=[{"content": f"Numbered fact {n} zq"} for n in range(300)]
    )
    with django_assert_max_num_queries(len(few.captured_queries)):
        document = export_of(owner_client)
    assert len(document["facts"]) == 301


def test_the_document_comes_in_pieces(owner, owner_client, remember, monkeypatch):
    from memoryhub.surface import export

    monkeypatch.setattr(export, "STREAM_PIECE_BYTES", 200)
    for n in range(5):
        remember(owner, f"Piece number {n} of a long memory about gardening")
    response = owner_client.get("/api/export/personalization")
    pieces = list(response.streaming_content)
    assert len(pieces) >= 5
    assert len(json.loads(b"".join(pieces))["facts"]) == 5


def test_an_agent_exports_its_persons_data_with_a_read_token(owner, agent_client, world):
    agent = agent_client(owner, scopes=("read",), name="reader")
    document = export_of(agent)
    assert len(document["facts"]) == 6
    event = AuditEvent.objects.filter(action="export.personalization").latest("pk")
    assert event.actor_label == "alice via agent reader"


def test_staff_export_a_persons_data_on_request_and_it_is_audited(
    staff, staff_client, owner, world
):
    document = export_of(staff_client, user="alice")
    assert document["user"]["username"] == "alice"
    assert len(document["facts"]) == 6
    event = AuditEvent.objects.filter(action="export.personalization").latest("pk")
    assert (event.actor_id, event.target_type, event.target_id) == (staff.pk, "user", str(owner.pk))
    assert event.details == {"subject": "alice", "request": "data subject request by staff"}
    assert staff_client.get("/api/export/personalization", {"user": "nobody"}).status_code == 404


def test_a_person_who_is_not_staff_cannot_export_anyone_else(
    outsider_client, teammate_client, client, world
):
    before = AuditEvent.objects.filter(action="export.personalization").count()
    for who in (outsider_client, teammate_client):
        refused = who.get("/api/export/personalization", {"user": "alice"})
        assert refused.status_code == 403
        assert "Only staff" in refused.json()["detail"]
    assert client.get("/api/export/personalization").status_code == 401
    assert AuditEvent.objects.filter(action="export.personalization").count() == before
    # Their own export holds none of Alice's facts.
    document = export_of(outsider_client)
    assert [f["content"] for f in document["facts"]] == ["Charlie collects antique maps"]


def test_the_schema_is_published_and_refuses_what_is_not_an_export(client):
    schema = schema_of(client)
    assert schema["title"] == "MemoryHub personal data export"
    validator = jsonschema_rs.validator_for(schema)
    assert not validator.is_valid({"format": "memoryhub.personalization", "facts": "all"})


# --- Import ------------------------------------------------------------------------------


def test_an_export_imported_into_an_empty_memory_exports_the_same_facts_layers_and_links(
    owner, owner_client, make_user, world
):
    """Alice leaves with her export and comes back to an empty account of her name."""
    from django.test import Client

    document = export_of(owner_client)
    owner.delete()
    newcomer = make_user("alice")
    erin = Client()
    erin.force_login(newcomer)
    answer = post(erin, "/api/memories/import", document)
    assert answer.status_code == 200, answer.content
    # The new account is in no team: the team fact is hers, private.
    assert answer.json() == {
        "created": 6,
        "skipped": 0,
        "already_readable": 0,
        "merged": 0,
        "made_private": 1,
        "links": 5,
        "not_yours": 0,
        "format": "memoryhub.personalization v1",
    }
    again = export_of(erin)

    def shape(doc: dict) -> dict:
        by_id = {f["id"]: f["content"] for f in doc["facts"]}
        return {
            f["content"]: (
                f["category"],
                f["layer"],
                f["status"],
                f["tags"],
                f["created_at"],
                f["valid_until"],
                f["provenance"]["origin"],
                sorted(by_id[i] for i in f["provenance"]["derived_from"]),
                by_id.get(f["superseded_by"]),
                f["import_key"],
            )
            for f in doc["facts"]
        }

    assert shape(again) == shape(document)
    assert {f["owner"] for f in again["facts"]} == {"alice"}
    assert facts_by_content(again)["Alice works at a standing desk in Lisbon"]["visibility"] == (
        "private"
    )
    # Written as facts are: searchable, embedded, recalled.
    found = erin.get("/api/memories/search", {"q": "green tea"}).json()
    assert "Alice drinks green tea every morning" in [f["content"] for f in found["items"]]
    assert Fact.objects.filter(owner=newcomer).exclude(embedding_model="").count() == 6
    recalled = post(erin, "/api/recall", {"query": "Where does Alice live?"}).json()
    assert "Alice lives in Lisbon now" in recalled["block"]
    assert "Porto" not in recalled["block"]  # superseded, as it was


def test_importing_twice_adds_nothing(teammate, teammate_client, owner_client, world):
    document = export_of(owner_client)
    first = post(teammate_client, "/api/memories/import", document).json()
    count = Fact.objects.filter(owner=teammate).count()
    second = post(teammate_client, "/api/memories/import", document).json()
    assert (first["created"], second["created"], second["skipped"]) == (5, 0, 5)
    assert (first["already_readable"], second["already_readable"]) == (1, 1)
    assert Fact.objects.filter(owner=teammate).count() == count
    # The teammate is in Platform and reads Alice's team fact already: no second copy.
    assert not Fact.objects.filter(owner=teammate, content__startswith="Alice works").exists()


def test_an_import_never_republishes_what_its_reader_can_read_from_its_author(
    owner, owner_client, outsider, outsider_client, teammate_client, remember
):
    """Carol imports Alice's export on the same server: Alice's global facts are
    everyone's already and stay hers alone; what Carol does get names Alice as author."""
    shared = remember(owner, "Alice runs the Friday demo for the whole company",
                      visibility="global")  # fmt: skip
    remember(owner, "Alice keeps her bike in the basement")
    document = export_of(owner_client)
    answer = post(outsider_client, "/api/memories/import", document).json()
    assert (answer["created"], answer["already_readable"]) == (1, 1)
    # Nobody sees the global statement twice, and its author is unchanged.
    found = teammate_client.get("/api/memories/search", {"q": "Friday demo", "mode": "exact"})
    assert [f["id"] for f in found.json()["items"]] == [shared.pk]
    copy = Fact.objects.get(owner=outsider, content="Alice keeps her bike in the basement")
    assert (copy.origin, copy.created_by_id) == ("imported", owner.pk)
    shown = outsider_client.get(f"/api/memories/{copy.pk}").json()
    assert shown["provenance"]["origin"] == "imported"
    assert shown["provenance"]["created_by"] == "alice"


def test_importing_ones_own_export_back_adds_nothing(owner, owner_client, world):
    count = Fact.objects.filter(owner=owner).count()
    answer = post(owner_client, "/api/memories/import", export_of(owner_client)).json()
    assert (answer["created"], answer["merged"], answer["skipped"]) == (0, 0, 6)
    assert Fact.objects.filter(owner=owner).count() == count


def test_an_imported_fact_repeating_a_stored_one_merges_into_it(
    teammate, teammate_client, remember
):
    stored = remember(teammate, "Bob drinks green tea every morning", tags=["drinks"])
    dump = [{"id": "m-1", "memory": "Bob drinks green tea every morning!", "categories": ["food"]}]
    answer = post(teammate_client, "/api/memories/import", dump).json()
    assert (answer["created"], answer["merged"]) == (0, 1)
    stored.refresh_from_db()
    assert stored.content == "Bob drinks green tea every morning!"
    assert stored.tags == ["drinks", "food"]
    again = post(teammate_client, "/api/memories/import", dump).json()
    assert (again["created"], again["merged"], again["skipped"]) == (0, 0, 1)


def test_a_mem0_dump_imports_with_its_categories_and_times(teammate, teammate_client):
    dump = {
        "results": [
            {
                "id": "0b1d8f6e-1",
                "memory": "Prefers window seats on long flights",
                "hash": "3f2a",
                "metadata": {"source": "chat"},
                "categories": ["user_preferences", "travel"],
                "created_at": "2024-07-26T10:29:36.630547-07:00",
                "updated_at": "2024-07-27T08:00:00-07:00",
                "user_id": "bob",
                "run_id": "trip-planning",
            },
            {"id": 7, "memory": "Is allergic to peanuts", "user_id": "bob"},
        ]
    }
    answer = post(teammate_client, "/api/memories/import", dump)
    assert answer.status_code == 200, answer.content
    assert (answer.json()["created"], answer.json()["format"]) == (2, "mem0")
    seats = Fact.objects.get(owner=teammate, content="Prefers window seats on long flights")
    assert seats.category == "preference" and seats.tags == ["user_preferences", "travel"]
    assert seats.created_at.isoformat() == "2024-07-26T17:29:36.630547+00:00"
    assert (seats.origin, seats.source, seats.session_id) == ("extracted", "extracted",
                                                              "trip-planning")  # fmt: skip
    assert seats.import_key == "mem0:0b1d8f6e-1"
    # A plain list (older Mem0 versions) is the same dump: nothing new.
    again = post(teammate_client, "/api/memories/import", dump["results"]).json()
    assert (again["created"], again["skipped"]) == (0, 2)


def test_the_bulk_fact_export_imports_only_the_persons_own_facts(
    owner_client, teammate, teammate_client, world
):
    bulk = json.loads(b"".join(teammate_client.get("/api/memories/export").streaming_content))
    assert any(f["owner"] == "alice" for f in bulk["facts"])  # visible to Bob: team facts
    answer = post(teammate_client, "/api/memories/import", bulk).json()
    assert answer["format"] == "memoryhub.facts v1"
    assert answer["created"] == 0 and answer["skipped"] == 1  # his own fact, already there
    assert answer["not_yours"] == len(bulk["facts"]) - 1
    assert not Fact.objects.filter(owner=teammate, content__contains="Alice").exists()


def test_a_large_document_is_imported_by_a_job(teammate, teammate_client, settings):
    settings.MEMORYHUB_IMPORT_INLINE_FACTS = 2
    dump = [{"id": f"m{n}", "memory": f"Visited museum number {n} in Vienna"} for n in range(5)]
    answer = post(teammate_client, "/api/memories/import", dump)
    assert answer.status_code == 202
    job = teammate_client.get(f"/api/jobs/{answer.json()['job']}").json()
    assert (job["kind"], job["state"], job["progress"]) == ("import", "done", 1.0)
    assert job["result"]["created"] == 5
    assert "document" not in Job.objects.get(pk=job["id"]).arguments  # the input goes
    assert Fact.objects.filter(owner=teammate).count() == 5


def test_a_running_import_shows_its_progress_before_its_one_transaction_commits(
    teammate, teammate_client, settings, monkeypatch
):
    from memoryhub.surface import tasks

    settings.MEMORYHUB_IMPORT_INLINE_FACTS = 2
    monkeypatch.setattr("facts.services.importing.IMPORT_PIECE", 2)
    reported, release = threading.Event(), threading.Event()
    report = tasks.job_progress

    def report_then_wait(**progress) -> None:
        report(**progress)
        if not reported.is_set():
            reported.set()
            release.wait(60)

    monkeypatch.setattr(tasks, "job_progress", report_then_wait)
    dump = [{"id": f"m{n}", "memory": f"Visited museum number {n} in Vienna"} for n in range(5)]
    watcher = Client()  # logged in before the import takes the database's write lock
    watcher.force_login(teammate)
    # The job runs (eagerly) inside this request, on its own thread and connection.
    importing = threading.Thread(target=post, args=(teammate_client, "/api/memories/import", dump))
    importing.start()
    try:
        assert reported.wait(60)
        job_id = Job.objects.get(kind="import").pk
        job = watcher.get(f"/api/jobs/{job_id}").json()
        assert (job["state"], job["progress"]) == ("running", 0.4)
        card = watcher.get(f"/jobs/{job_id}/").content.decode()
        assert 'value="40"' in card and "every 1s" in card
        # Nothing of it is visible yet: it is written all at once or not at all.
        assert not Fact.objects.filter(owner=teammate).exists()
    finally:
        release.set()
        importing.join(60)
    job = teammate_client.get(f"/api/jobs/{job_id}").json()
    assert (job["state"], job["progress"], job["result"]["created"]) == ("done", 1.0, 5)


# --- Bad input ---------------------------------------------------------------------------


@pytest.fixture
def nothing_written(teammate):
    """Asserts, after the test, that no fact and no import was written."""
    before = Fact.objects.count()
    yield
    assert Fact.objects.count() == before
    assert not AuditEvent.objects.filter(action="fact.import").exists()


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not JSON"),
        (b"", 400, "empty"),
        (b'["caf\xc3("]', 400, "UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
        (b'{"format": "memoryhub.personalization", "format_version": 2, "facts": []}', 400,
         "version 2"),
        (b'{"format": "memoryhub.personalization", "format_version": "1", "facts": []}', 400,
         "format_version must be"),
        (b'{"format": "someone.else", "facts": []}', 400, "Not a MemoryHub export"),
        (b'{"format": "memoryhub.personalization", "format_version": 1}', 400, "no list of facts"),
        (b'"just text"', 400, "Send a MemoryHub export"),
        (b'[{"id": "1", "memory": "\\ud800"}]', 400, "lone surrogate"),
        (b'[{"id": "1", "memory": ["a list"]}]', 400, "[0].memory"),
        (b'{"results": "none"}', 400, "results"),
    ],
)  # fmt: skip
def test_bad_documents_are_refused_with_a_reason_and_nothing_is_written(
    teammate_client, nothing_written, body, status, says
):
    answer = teammate_client.post("/api/memories/import", body, content_type="application/json")
    assert answer.status_code == status, answer.content
    assert says in answer.json()["detail"]


def test_one_bad_fact_refuses_the_whole_export(owner_client, teammate_client, world, settings):
    document = export_of(owner_client)
    document["facts"][3]["importance"] = "very"
    answer = post(teammate_client, "/api/memories/import", document)
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "facts[3].importance"
    document = export_of(owner_client)
    document["facts"][2]["content"] = "x" * 5000
    answer = post(teammate_client, "/api/memories/import", document)
    assert answer.status_code == 400
    assert "Item 2" in answer.json()["detail"] and "maximum is 2000" in answer.json()["detail"]
    document["facts"][2]["content"] = "fine"
    document["facts"][4]["category"] = "gossip"
    assert post(teammate_client, "/api/memories/import", document).status_code == 400
    assert (
        not Fact.objects.filter(owner__username="bob").exclude(content__startswith="Bob").exists()
    )


def test_an_oversized_document_is_refused_before_it_is_read(
    teammate_client, settings, nothing_written
):
    settings.MEMORYHUB_IMPORT_MAX_BYTES = 100
    dump = [{"id": str(n), "memory": f"Fact number {n}"} for n in range(20)]
    answer = post(teammate_client, "/api/memories/import", dump)
    assert answer.status_code == 413
    assert "MEMORYHUB_IMPORT_MAX_BYTES" in answer.json()["detail"]


def test_an_import_needs_a_writer(owner, client, agent_client, nothing_written):
    dump = [{"id": "1", "memory": "Anything"}]
    assert post(client, "/api/memories/import", dump).status_code == 401
    reader = agent_client(owner, scopes=("read",), name="reader")
    assert post(reader, "/api/memories/import", dump).status_code == 403


# --- The command -------------------------------------------------------------------------


def test_the_command_imports_a_file_with_a_progress_bar(teammate, tmp_path):
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps([{"id": f"c{n}", "memory": f"Owns {n} bicycles"} for n in range(3)]))
    out, err = io.StringIO(), io.StringIO()
    call_command("import_memories", str(path), "--user", "bob", stdout=out, stderr=err)
    assert out.getvalue().startswith("3 created, 0 merged, 0 already there (mem0)")
    assert "import" in err.getvalue() and "fact" in err.getvalue()
    call_command("import_memories", str(path), "--user", "bob", "--no-progress", stdout=out)
    assert "0 created, 0 merged, 3 already there" in out.getvalue()
    assert Fact.objects.filter(owner=teammate).count() == 3


def test_the_command_refuses_a_bad_file_and_writes_nothing(teammate, tmp_path, nothing_written):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "memoryhub.personalization", "format_version": 99, "facts": []}')
    with pytest.raises(CommandError, match="version 99"):
        call_command("import_memories", str(path), "--user", "bob", "--no-progress")
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_memories", str(tmp_path / "missing.json"), "--user", "bob")
    with pytest.raises(CommandError, match="No user"):
        call_command("import_memories", str(path), "--user", "nobody")


# --- The dashboard -----------------------------------------------------------------------


def test_the_memory_and_settings_pages_offer_the_export(owner_client, staff_client):
    for path in ("/memory/", "/settings/"):
        html = owner_client.get(path).content.decode()
        assert 'href="/api/export/personalization" download' in html, path
    # Staff alone get the form that exports someone else's data.
    assert 'id="export-person"' not in owner_client.get("/settings/").content.decode()
    assert 'id="export-person"' in staff_client.get("/settings/").content.decode()


def upload(client, content: bytes, name: str = "memories.json"):
    return client.post(
        "/memory/import/",
        {"file": SimpleUploadedFile(name, content, content_type="application/json")},
        headers={"HX-Request": "true"},
    )


def test_the_settings_page_imports_an_uploaded_file(teammate, teammate_client):
    assert 'id="import-form"' in teammate_client.get("/settings/").content.decode()
    dump = json.dumps([{"id": f"c{n}", "memory": f"Owns {n} bicycles"} for n in range(3)])
    answer = upload(teammate_client, dump.encode())
    assert answer.status_code == 200
    assert "3 facts written, 0 already here, 0 merged into yours" in answer.content.decode()
    again = upload(teammate_client, dump.encode()).content.decode()
    assert "0 facts written, 3 already here" in again
    assert Fact.objects.filter(owner=teammate).count() == 3


def test_a_large_upload_is_imported_by_a_job_whose_card_the_page_polls(
    teammate, teammate_client, settings
):
    settings.MEMORYHUB_IMPORT_INLINE_FACTS = 2
    dump = [{"id": f"m{n}", "memory": f"Visited museum number {n} in Vienna"} for n in range(5)]
    html = upload(teammate_client, json.dumps(dump).encode()).content.decode()
    job = Job.objects.get(kind="import")
    assert f'id="job-{job.pk}"' in html
    card = teammate_client.get(f"/jobs/{job.pk}/").content.decode()
    assert "5 facts written" in card and "every 1s" not in card


@pytest.mark.parametrize(
    ("content", "status", "says"),
    [
        (b"{not json", 400, "not JSON"),
        (b'{"format": "memoryhub.personalization", "format_version": 2, "facts": []}', 400,
         "version 2"),
        (b'[{"id": "1", "memory": "\\ud800"}]', 400, "lone surrogate"),
        (b"[" + b'{"id": "1", "memory": "x"},' * 40 + b'{"id": "2", "memory": "y"}]', 413,
         "MEMORYHUB_IMPORT_MAX_BYTES"),
    ],
)  # fmt: skip
def test_a_bad_upload_is_refused_on_the_page_and_nothing_is_written(
    teammate_client, settings, nothing_written, content, status, says
):
    settings.MEMORYHUB_IMPORT_MAX_BYTES = 1000
    answer = upload(teammate_client, content)
    assert answer.status_code == status
    assert says in answer.content.decode()


def test_an_upload_without_a_file_or_a_login_is_refused(client, teammate_client, nothing_written):
    page = teammate_client.get("/memory/import/").content.decode()
    assert 'id="import-form"' in page and 'enctype="multipart/form-data"' in page
    answer = teammate_client.post("/memory/import/", {}, headers={"HX-Request": "true"})
    assert answer.status_code == 400 and "Choose a JSON file" in answer.content.decode()
    anonymous = upload(client, b'[{"id": "1", "memory": "Anything"}]')
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


@pytest.mark.browser
def test_a_person_downloads_their_export_from_the_memory_page(
    page, live_server, login, owner, world, tmp_path
):
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    with page.expect_download() as download_info:
        page.click("text=Export my data")
    download = download_info.value
    assert download.suggested_filename == f"memoryhub-export-{owner.pk}.json"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    document = json.loads(saved.read_text())
    assert document["user"]["username"] == "alice"
    assert "Alice drinks green tea every morning" in facts_by_content(document)


@pytest.mark.browser
def test_a_person_imports_a_file_from_the_settings_page(
    page, live_server, login, teammate, tmp_path
):
    dump = tmp_path / "mem0.json"
    dump.write_text(json.dumps([{"id": f"c{n}", "memory": f"Owns {n} kayaks"} for n in range(3)]))
    login(teammate)
    page.goto(f"{live_server.url}/settings/")
    page.set_input_files("#import-file", str(dump))
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#import-result [role=status]")
    assert "3 facts written" in page.inner_text("#import-result")
    assert page.url.endswith("/settings/")  # the answer came in place
    assert Fact.objects.filter(owner=teammate, content__startswith="Owns").count() == 3


def test_odd_values_in_an_export_are_refused_or_bounded_never_a_server_error(
    owner_client, teammate, teammate_client, world
):
    document = export_of(owner_client)
    document["facts"][0]["created_at"] = "0001-01-01T00:00:00+14:00"
    answer = post(teammate_client, "/api/memories/import", document)
    assert answer.status_code == 400 and "out of range" in answer.json()["detail"]
    document = export_of(owner_client)
    document["facts"][0]["access_count"] = 10**30
    document["facts"][1]["id"] = 10**30
    document["facts"][2]["project"] = "p" * 300
    answer = post(teammate_client, "/api/memories/import", document)
    assert answer.status_code == 400 and "project key" in answer.json()["detail"]
    document["facts"][2]["project"] = ""
    assert post(teammate_client, "/api/memories/import", document).status_code == 200
    assert Fact.objects.filter(owner=teammate, access_count=2**31 - 1).count() == 1


AUXIORA = [
    {
        "id": "m-1",
        "content": "Prefers TypeScript over JavaScript",
        "category": "preference",
        "source": "explicit",
        "importance": 0.8,
        "confidence": 0.9,
        "sentiment": "positive",
        "tags": ["typescript", "languages"],
        "accessCount": 7,
        "createdAt": "2026-03-01T10:00:00Z",
        "updatedAt": "2026-03-02T10:00:00Z",
        "provenance": {
            "origin": "user_stated",
            "sessionId": "s-42",
            "createdBy": "memory-extractor",
            "sourceExcerpt": "Remember that I prefer TypeScript",
            "extractionConfidence": 0.95,
            "derivedFrom": [],
        },
        "partitionId": "global",
    },
    {
        "id": "m-2",
        "content": "Currently working on a database migration project",
        "category": "context",
        "source": "extracted",
        "partitionId": "private:bob",
    },
    {
        "id": "m-3",
        "content": "Works with the platform team on the deploy pipeline",
        "category": "fact",
        "source": "observed",
        "partitionId": "shared:Platform",
        "provenance": {"origin": "merged", "derivedFrom": ["m-1", "m-2", "gone"]},
    },
]


def test_auxioras_memories_json_imports_field_by_field(teammate, teammate_client, team):
    answer = post(teammate_client, "/api/memories/import", AUXIORA)
    assert answer.status_code == 200, answer.content
    assert (answer.json()["format"], answer.json()["created"]) == ("auxiora", 3)
    facts = {f.content: f for f in Fact.objects.filter(owner=teammate)}
    first = facts["Prefers TypeScript over JavaScript"]
    assert (first.category, first.source, first.importance, first.confidence) == (
        "preference", "explicit", 0.8, 0.9
    )  # fmt: skip
    assert (first.sentiment, first.tags, first.access_count) == (
        "positive", ["typescript", "languages"], 7
    )  # fmt: skip
    assert (first.origin, first.session_id, first.agent) == (
        "user_stated",
        "s-42",
        "memory-extractor",
    )
    assert (first.source_excerpt, first.extraction_confidence) == (
        "Remember that I prefer TypeScript", 0.95
    )  # fmt: skip
    assert first.created_at.isoformat().startswith("2026-03-01T10:00")
    # Partitions: Auxiora's default "global" is the importer's default (private here),
    # a private partition private, a shared one the importer's team of that name.
    assert first.visibility == "private"
    assert facts["Currently working on a database migration project"].visibility == "private"
    merged = facts["Works with the platform team on the deploy pipeline"]
    assert (merged.visibility, merged.team.name, merged.origin) == ("team", "Platform", "merged")
    assert sorted(p.content for p in merged.derived_from.all()) == sorted(
        [first.content, "Currently working on a database migration project"]
    )
    again = post(teammate_client, "/api/memories/import", {"memories": AUXIORA}).json()
    assert (again["created"], again["skipped"]) == (0, 3)


def test_a_bad_auxiora_entry_is_named_by_its_index_and_nothing_is_written(
    teammate, teammate_client
):
    broken = [AUXIORA[0], {**AUXIORA[1], "importance": 7}, {**AUXIORA[2], "category": "mood"}]
    answer = post(teammate_client, "/api/memories/import", broken)
    assert answer.status_code == 400
    fields = [e["field"] for e in answer.json()["errors"]]
    assert "memories[1].importance" in fields and "memories[2].category" in fields
    assert not Fact.objects.filter(owner=teammate).exists()


def test_staff_export_a_persons_data_from_settings_and_an_unknown_name_is_said_there(
    staff_client, owner_client, owner
):
    found = staff_client.get("/settings/export-person/", {"user": owner.get_username()})
    assert found.status_code == 200
    assert (
        found["Content-Disposition"] == f'attachment; filename="memoryhub-export-{owner.pk}.json"'
    )
    assert json.loads(b"".join(found.streaming_content))["user"]["username"] == "alice"

    unknown = staff_client.get("/settings/export-person/", {"user": "nobody-here"}, follow=True)
    assert unknown.redirect_chain[-1][0].startswith("/settings/")
    page = unknown.content.decode()
    assert "nobody-here" in page and 'class="msg-error"' in page
    assert not page.lstrip().startswith("{")

    refused = owner_client.get("/settings/export-person/", {"user": "bob"}, follow=True)
    assert 'class="msg-error"' in refused.content.decode()
