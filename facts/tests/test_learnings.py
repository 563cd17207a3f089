"""Learnings: appended over the API and the learning_write tool, never edited or merged,
read by the skill tier of tiered recall and the fingerprint index, and imported from
learnings/<YYYY-MM-DD>.jsonl files once however often the import runs."""

import io
import json
import re
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from facts.learnings import learning_create
from facts.models import Fact
from teams.models import AuditEvent
from teams.services import Actor

pytestmark = pytest.mark.django_db


def bearer(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


def post(client: Client, url: str, body: object):
    return client.post(url, json.dumps(body), content_type="application/json")


LEARNING = {
    "skill": "deploy",
    "content": "A cold cache stalls the rollout; warm it before the canary.",
    "fingerprint": "rollout-stall",
    "resolution": "INC-42",
}


def test_an_agent_appends_a_learning_that_the_skill_tier_reads(owner, make_token):
    _, secret = make_token(owner, name="builder-7", fleet="blue")
    response = post(bearer(secret), "/api/learnings", LEARNING)
    assert response.status_code == 201, response.content
    made = response.json()
    assert (made["skill"], made["fleet"], made["agent"]) == ("deploy", "blue", "builder-7")
    assert (made["fingerprint"], made["resolution"]) == ("rollout-stall", "INC-42")
    tiered = post(bearer(secret), "/api/recall/tiered", {"tier": "skill", "skill": "deploy"})
    items = tiered.json()["items"]
    assert [i["path"] for i in items] == [f"skill/deploy/{made['id']}"]
    assert items[0]["snippet"].startswith("A cold cache stalls")
    whole = bearer(secret).get(f"/api/memories/{made['id']}").json()
    assert (whole["tier"], whole["category"], whole["skill"]) == ("skill", "learning", "deploy")
    assert (whole["fingerprint"], whole["agent"], whole["resolution_ref"]) == (
        "rollout-stall",
        "builder-7",
        "INC-42",
    )


def test_the_same_learning_twice_is_two_learnings_never_a_merge(owner, make_token):
    _, secret = make_token(owner)
    first = post(bearer(secret), "/api/learnings", LEARNING).json()
    second = post(bearer(secret), "/api/learnings", LEARNING).json()
    assert first["id"] != second["id"]
    assert Fact.objects.filter(tier="skill", fingerprint="rollout-stall").count() == 2


def test_a_learning_cannot_be_edited_it_is_append_only(owner, owner_client, make_token):
    _, secret = make_token(owner)
    made = post(bearer(secret), "/api/learnings", LEARNING).json()
    response = owner_client.patch(
        f"/api/memories/{made['id']}",
        json.dumps({"content": "Something else"}),
        content_type="application/json",
    )
    assert response.status_code == 409
    assert "append-only" in response.json()["detail"]
    assert Fact.objects.get(pk=made["id"]).content == LEARNING["content"]
    assert owner_client.put("/api/learnings", {}).status_code == 405
    # Archiving it is curation, not a rewrite.
    archived = owner_client.patch(
        f"/api/memories/{made['id']}",
        json.dumps({"status": "archived"}),
        content_type="application/json",
    )
    assert archived.status_code == 200
    assert Fact.objects.get(pk=made["id"]).status == "archived"


def test_the_fingerprint_index_gives_a_clusters_learnings_and_resolution(
    owner, outsider, make_token
):
    _, secret = make_token(owner)
    client = bearer(secret)
    post(client, "/api/learnings", {**LEARNING, "resolution": ""})
    post(client, "/api/learnings", LEARNING)
    post(client, "/api/learnings", {**LEARNING, "fingerprint": "disk-full"})
    index = client.get("/api/learnings/fingerprints/rollout-stall").json()
    assert index["cluster"] == "rollout-stall"
    assert (index["resolved"], index["resolutions"]) == (True, ["INC-42"])
    assert len(index["learnings"]) == 2
    # The skill tier narrows to a cluster, or to every fingerprinted learning.
    for fingerprint, count in (("rollout-stall", 2), ("*", 3)):
        skill_tier = {"tier": "skill", "fingerprint": fingerprint}
        assert len(post(client, "/api/recall/tiered", skill_tier).json()["items"]) == count
    # An outsider's index of the same cluster is empty.
    theirs = bearer(make_token(outsider, name="theirs")[1])
    assert theirs.get("/api/learnings/fingerprints/rollout-stall").json()["learnings"] == []


def test_another_fleets_learnings_stay_out_of_an_agents_fingerprint_index(owner, make_token):
    _, red = make_token(owner, name="red", fleet="red")
    _, blue = make_token(owner, name="blue", fleet="blue")
    post(bearer(red), "/api/learnings", LEARNING)
    assert bearer(blue).get("/api/learnings/fingerprints/rollout-stall").json()["learnings"] == []
    assert len(bearer(red).get("/api/learnings/fingerprints/rollout-stall").json()["learnings"])


def test_an_outsider_and_a_read_only_token_cannot_write_learnings(owner, make_token):
    assert post(Client(), "/api/learnings", LEARNING).status_code == 401
    _, secret = make_token(owner, scopes=("read",))
    assert post(bearer(secret), "/api/learnings", LEARNING).status_code == 403
    assert not Fact.objects.exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"content": "no skill"}, "skill"),
        ({"skill": "deploy"}, "content"),
        ({"skill": "deploy", "content": "   "}, "needs its content"),
        ({**LEARNING, "fingerprint": "x" * 500}, "at most 200"),
        ({**LEARNING, "resolution": "x" * 900}, "at most 500"),
        ({**LEARNING, "visibility": "cosmic"}, "visibility"),
        ({**LEARNING, "content": "x" * 200_000}, ""),
        ({**LEARNING, "content": "\ud800 lone"}, ""),
    ],
)
def test_bad_learnings_are_refused_clearly_and_store_nothing(owner, make_token, body, message):
    _, secret = make_token(owner)
    response = bearer(secret).post(
        "/api/learnings", json.dumps(body), content_type="application/json"
    )
    assert 400 <= response.status_code < 500, response.content
    assert message.lower() in json.dumps(response.json()).lower()
    assert not Fact.objects.exists()


@pytest.mark.parametrize("cluster", ["x" * 300, "%20", "a'b\"c OR NOT"])
def test_an_odd_fingerprint_cluster_never_fails_the_server(owner_client, cluster):
    response = owner_client.get(f"/api/learnings/fingerprints/{cluster}")
    assert response.status_code in (200, 400, 404, 422)
    assert owner_client.get("/api/learnings/fingerprints/a", {"limit": 0}).status_code == 400


def test_the_learning_write_tool_appends_a_learning(owner, make_token):
    _, secret = make_token(owner, fleet="blue")
    response = post(bearer(secret), "/api/tools/learning_write", LEARNING)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["skill"], data["fleet"], data["fingerprint"]) == (
        "deploy",
        "blue",
        "rollout-stall",
    )
    assert Fact.objects.get(pk=data["id"]).resolution_ref == "INC-42"
    _, reader = make_token(owner, name="reader", scopes=("read",))
    assert post(bearer(reader), "/api/tools/learning_write", LEARNING).status_code == 403
    off_schema = post(bearer(secret), "/api/tools/learning_write", {"skill": "deploy"})
    assert off_schema.status_code == 400
    assert Fact.objects.count() == 1


# --- Import ------------------------------------------------------------------------------


def write_day(folder, day: str, lines: list[object]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    (folder / f"{day}.jsonl").write_text(text + "\n", encoding="utf-8")


def run_import(directory, user) -> str:
    out = io.StringIO()
    call_command(
        "import_learnings",
        str(directory),
        "--user",
        user.username,
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def test_importing_learnings_files_twice_adds_them_once(owner, tmp_path):
    folder = tmp_path / "learnings"
    write_day(folder, "2026-11-30", [LEARNING, {"skill": "triage", "content": "Logs first."}])
    write_day(
        folder,
        "2026-12-01",
        ["", {**LEARNING, "fleet": "red", "agent": "a-1", "ts": "2026-12-01T09:30:00Z"}],
    )
    assert run_import(tmp_path, owner).startswith("3 learnings created, 0 already there (2 files)")
    assert run_import(folder, owner).startswith("0 learnings created, 3 already there")
    rows = Fact.objects.filter(tier="skill").order_by("created_at")
    assert rows.count() == 3
    assert rows[0].created_at == datetime(2026, 11, 30, tzinfo=UTC)
    assert rows[2].created_at == datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    assert (rows[2].fleet, rows[2].agent, rows[2].fingerprint) == ("red", "a-1", "rollout-stall")
    event = AuditEvent.objects.filter(action="learning.import").first()
    assert event.details == {"files": 2, "created": 0, "skipped": 3}


def test_the_import_draws_a_progress_bar(owner, tmp_path):
    write_day(tmp_path, "2026-11-30", [LEARNING])
    err = io.StringIO()
    call_command("import_learnings", str(tmp_path), "--user", owner.username, stdout=io.StringIO(),
                 stderr=err)  # fmt: skip
    assert "1/1" in err.getvalue()


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        (["{not json"], "2026-12-01.jsonl:2: not JSON"),
        ([{"content": "no skill"}], "2026-12-01.jsonl:2: A learning needs a skill"),
        ([{**LEARNING, "ts": "last tuesday"}], "2026-12-01.jsonl:2: ts is an ISO 8601"),
        ([{**LEARNING, "colour": "red"}], "2026-12-01.jsonl:2: Unknown field colour"),
        (["[1, 2]"], "2026-12-01.jsonl:2: A learning is a JSON object"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line_and_nothing_is_written(owner, tmp_path, lines, where):
    write_day(tmp_path, "2026-11-30", [LEARNING])
    write_day(tmp_path, "2026-12-01", [LEARNING, *lines])
    with pytest.raises(CommandError, match=re.escape(where)):
        run_import(tmp_path, owner)
    assert not Fact.objects.exists()


def test_a_misnamed_file_or_missing_folder_is_refused(owner, tmp_path):
    (tmp_path / "notes.jsonl").write_text(json.dumps(LEARNING))
    with pytest.raises(CommandError, match=r"notes\.jsonl: a learnings file is named YYYY-MM-DD"):
        run_import(tmp_path, owner)
    with pytest.raises(CommandError, match="There is no folder"):
        run_import(tmp_path / "nowhere", owner)
    (tmp_path / "notes.jsonl").unlink()
    (tmp_path / "2026-13-45.jsonl").write_text(json.dumps(LEARNING))
    with pytest.raises(CommandError, match=r"2026-13-45\.jsonl"):
        run_import(tmp_path, owner)
    assert not Fact.objects.exists()


def test_a_memory_never_merges_into_a_learning_even_after_the_keys_are_rebuilt(owner, remember):
    from facts.dedupe import fact_keys_rebuild

    learning = learning_create(actor=Actor(user=owner), data={"skill": "deploy", **LEARNING})
    fact_keys_rebuild()
    fact = remember(owner, LEARNING["content"])
    assert fact.pk != learning.pk
    assert Fact.objects.get(pk=learning.pk).content == LEARNING["content"]
    assert Fact.objects.get(pk=learning.pk).tier == "skill"


def test_an_exported_learning_is_imported_with_its_fingerprint_and_agent(
    owner, owner_client, make_user, make_token
):
    _, secret = make_token(owner, name="builder-7")
    post(bearer(secret), "/api/learnings", LEARNING)
    response = owner_client.get("/api/export/personalization")
    document = json.loads(b"".join(response.streaming_content))
    newcomer = Client()
    newcomer.force_login(make_user("erin"))
    assert post(newcomer, "/api/memories/import", document).status_code == 200
    copy = Fact.objects.exclude(owner=owner).get()
    assert (copy.tier, copy.skill, copy.fingerprint, copy.agent, copy.resolution_ref) == (
        "skill",
        "deploy",
        "rollout-stall",
        "builder-7",
        "INC-42",
    )


# --- Observed patterns -----------------------------------------------------------------------


def test_a_statement_repeated_in_three_sessions_becomes_an_observed_pattern(owner, agent_client):
    from facts.models import Fact

    client = agent_client(owner)
    said = "The user runs the linter before every commit"
    ids = []
    for session in ("monday", "tuesday", "tuesday", "friday"):
        answer = client.post(
            "/api/memories",
            {"content": said, "session_id": session, "visibility": "private"},
            content_type="application/json",
        )
        ids.append(answer.json()["id"])
        fact = Fact.objects.get(pk=ids[0])
        if session == "tuesday":
            assert fact.category != "pattern"  # two sessions are not yet a habit

    assert len(set(ids)) == 1  # one fact: the repeats merged into it
    fact = Fact.objects.get(pk=ids[0])
    assert (fact.category, fact.source, fact.origin) == ("pattern", "observed", "inferred")
    assert fact.said_in_sessions == ["monday", "tuesday", "friday"]
    assert fact.confidence >= 0.8 and fact.visibility == "private"
    occurrences = fact.derived_from.filter(status="archived")
    assert occurrences.count() == 3  # each repeat kept the statement it merged into
    body = client.get(f"/api/memories/{fact.pk}").json()
    assert (body["category"], body["source"]) == ("pattern", "observed")

    client.post(
        "/api/forget", {"topic": "linter", "ids": [fact.pk]}, content_type="application/json"
    )
    assert not Fact.objects.filter(content=said).exists()
