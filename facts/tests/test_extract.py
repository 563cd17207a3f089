"""Extraction of facts from conversations, through the offline rules and through the real
chat-model client against a local protocol server; the review queue."""

import time

import pytest

from facts.models import Fact, MemoryReview
from facts.services.extraction import EXTRACT_INLINE_CHARS
from memoryhub.engine.llm.tests.conftest import Reply, completion, hang, serve  # noqa: F401
from memoryhub.engine.models import Job, MemoryConfig

pytestmark = pytest.mark.django_db(transaction=True)


def post(client, path: str, body: object):
    return client.post(path, body, content_type="application/json")


CONVERSATION = [
    {"role": "user", "content": "Remember that the staging database is db-stage-1."},
    {"role": "assistant", "content": "Noted: staging runs on db-stage-1."},
    {"role": "user", "content": "I prefer short answers with code first."},
]


@pytest.fixture
def alice(owner, team, agent_client):
    from memoryhub.engine.config import memory_config_get

    memory_config_get()  # the settings row the tests change
    return agent_client(owner)


def test_remember_statements_become_explicit_user_stated_facts(alice, owner):
    body = post(alice, "/api/memories/extract", {"messages": CONVERSATION, "session_id": "s-9"})
    assert body.status_code == 200, body.content
    result = body.json()
    assert (result["mode"], result["provider"]) == ("written", "offline")
    facts = Fact.objects.filter(pk__in=[f["id"] for f in result["facts"]])
    explicit = facts.get(content__icontains="db-stage-1")
    assert (explicit.source, explicit.origin, explicit.session_id) == (
        "explicit",
        "user_stated",
        "s-9",
    )
    assert len(explicit.source_excerpt) <= 200 and "db-stage-1" in explicit.source_excerpt
    preference = facts.get(category="preference")
    assert preference.origin == "extracted" and preference.extraction_confidence is not None
    # What the assistant said proposes nothing of its own.
    assert not facts.filter(content__icontains="Noted").exists()


def test_another_value_of_a_facts_subject_supersedes_it(alice, remember, owner):
    old = remember(owner, "The staging database is db-stage-1")
    body = post(
        alice,
        "/api/memories/extract",
        {"text": "Remember that the staging database is db-stage-2."},
    )
    new_id = body.json()["facts"][0]["id"]
    old.refresh_from_db()
    assert old.superseded_by_id == new_id
    assert Fact.objects.get(pk=new_id).content.endswith("db-stage-2.")


def test_with_review_required_proposals_wait_and_can_be_edited_rejected_or_approved(
    alice, owner, remember
):
    MemoryConfig.objects.filter(pk=1).update(extraction_review_required=True)
    old = remember(owner, "The staging database is db-stage-1")
    said = {"role": "user", "content": "Remember that the staging database is db-stage-3."}
    result = post(alice, "/api/memories/extract", {"messages": [*CONVERSATION, said]}).json()
    assert result["mode"] == "review" and len(result["reviews"]) >= 2
    assert not Fact.objects.exclude(pk=old.pk).exists()  # nothing written yet
    listed = alice.get("/api/memories/reviews").json()
    assert listed["count"] == len(result["reviews"])
    by_content = {item["content"]: item for item in listed["items"]}
    supersession = next(i for c, i in by_content.items() if "db-stage-3" in c)
    assert supersession["supersedes"] == old.pk
    preference = next(i for i in listed["items"] if i["category"] == "preference")

    edits = {"content": "The user prefers short answers, code first", "importance": 0.9}
    edited = post(alice, f"/api/memories/reviews/{preference['id']}/approve", edits)
    assert edited.status_code == 200
    assert (edited.json()["content"], edited.json()["importance"]) == (
        "The user prefers short answers, code first",
        0.9,
    )
    assert post(alice, f"/api/memories/reviews/{supersession['id']}/approve", {}).status_code == 200
    old.refresh_from_db()
    assert old.superseded_by_id is not None
    others = [
        i["id"] for i in listed["items"] if i["id"] not in (preference["id"], supersession["id"])
    ]
    if others:
        assert post(alice, "/api/memories/reviews/reject", {"ids": others}).json()["done"] == others
    assert alice.get("/api/memories/reviews").json()["count"] == 0
    again = post(alice, f"/api/memories/reviews/{preference['id']}/approve", {})
    assert again.status_code == 409
    for path in ("/api/memories/reviews/approve", "/api/memories/reviews/reject"):
        assert post(alice, path, {"ids": [2**64]}).status_code == 422  # no column holds it


def test_reviews_are_their_owners_alone(alice, owner, teammate, outsider, agent_client):
    MemoryConfig.objects.filter(pk=1).update(extraction_review_required=True)
    said = {"text": "Remember that the vault code is 4242.", "visibility": "team"}
    result = post(alice, "/api/memories/extract", said).json()
    review_id = result["reviews"][0]
    for user in (teammate, outsider):
        client = agent_client(user, name=f"agent-{user.pk}")
        assert client.get("/api/memories/reviews").json()["count"] == 0
        assert post(client, f"/api/memories/reviews/{review_id}/approve", {}).status_code == 404
        assert post(client, f"/api/memories/reviews/{review_id}/reject", {}).status_code == 404
    assert MemoryReview.objects.get(pk=review_id).state == "pending"


def test_extraction_through_a_chat_model(alice, owner, serve):  # noqa: F811
    answer = {"facts": [{"content": "The user's team ships on Fridays", "category": "pattern",
                         "importance": 0.7, "confidence": 0.8, "source": "observed",
                         "excerpt": "we always ship on Fridays"}]}  # fmt: skip
    server = serve(lambda request, count: completion(answer))
    MemoryConfig.objects.filter(pk=1).update(llm_url=server.url, llm_model="test-model")
    result = post(alice, "/api/memories/extract", {"text": "We always ship on Fridays."}).json()
    assert result["provider"] == "test-model"
    fact = Fact.objects.get(pk=result["facts"][0]["id"])
    assert (fact.source, fact.origin, fact.category) == ("observed", "inferred", "pattern")
    assert fact.extraction_confidence == 0.8


def test_a_chat_model_answering_garbage_writes_nothing_and_is_recorded(alice, serve, settings):  # noqa: F811
    server = serve(lambda request, count: completion("this is not json"))
    settings.LLM_RETRIES = 0
    MemoryConfig.objects.filter(pk=1).update(llm_url=server.url, llm_model="test-model")
    response = post(alice, "/api/memories/extract", {"text": "Remember that I like tea."})
    assert response.status_code in (502, 503)
    assert "chat model" in response.json()["detail"].lower()
    assert not Fact.objects.exists()
    assert MemoryConfig.objects.get(pk=1).llm_error_count == 1


@pytest.fixture
def request_limits(settings):
    """Background defaults (60 s per attempt, two retries), a short bound for requests."""
    settings.LLM_TIMEOUT_SECONDS = 60.0
    settings.LLM_RETRIES = 2
    settings.LLM_REQUEST_DEADLINE_SECONDS = 1.0
    settings.EDGE_CIRCUIT_FAILURES = 2
    settings.EDGE_CIRCUIT_RETRY_SECONDS = 0.5
    return settings


def test_a_hanging_chat_model_holds_the_request_no_longer_than_its_deadline(
    alice,
    serve,  # noqa: F811
    hang,  # noqa: F811
    request_limits,
):
    server = serve(lambda request, count: Reply(hold=hang))
    MemoryConfig.objects.filter(pk=1).update(llm_url=server.url, llm_model="test-model")
    started = time.monotonic()

    response = post(alice, "/api/memories/extract", {"text": "Remember that I like tea."})

    assert time.monotonic() - started < 3  # the 1 s deadline, not 60 s x 3 attempts
    assert response.status_code == 503
    assert response.json()["kind"] == "timeout"
    assert "1 s a request waits" in response.json()["detail"]
    assert not Fact.objects.exists()


def test_a_rate_limit_longer_than_the_deadline_is_a_503_saying_when_to_come_back(
    alice,
    serve,  # noqa: F811
    request_limits,
):
    server = serve(lambda request, count: Reply(status=429, headers={"Retry-After": "120"}))
    MemoryConfig.objects.filter(pk=1).update(llm_url=server.url, llm_model="test-model")
    started = time.monotonic()

    response = post(alice, "/api/memories/extract", {"text": "Remember that I like tea."})

    assert time.monotonic() - started < 1
    assert response.status_code == 503 and response.headers["Retry-After"] == "120"
    assert "asks to wait 120 s" in response.json()["detail"]
    assert len(server.requests) == 1 and not Fact.objects.exists()


def test_a_chat_model_failing_again_and_again_is_left_alone_until_a_probe_answers(
    alice,
    serve,  # noqa: F811
    request_limits,
):
    answer = {"facts": [{"content": "The user likes tea", "category": "preference"}]}
    state = {"up": False}

    def responder(request, count):
        return completion(answer) if state["up"] else Reply(status=502, body=b"bad gateway")

    server = serve(responder)
    MemoryConfig.objects.filter(pk=1).update(llm_url=server.url, llm_model="test-model")
    said = {"text": "Remember that I like tea."}
    for _ in range(2):
        assert post(alice, "/api/memories/extract", said).json()["kind"] == "server"
    asked = len(server.requests)
    started = time.monotonic()

    refused = post(alice, "/api/memories/extract", said)

    assert time.monotonic() - started < 0.5 and len(server.requests) == asked
    assert refused.status_code == 503 and refused.json()["kind"] == "circuit_open"
    assert int(refused.headers["Retry-After"]) >= 1
    assert "not asked again" in refused.json()["detail"]
    assert not Fact.objects.exists()
    assert MemoryConfig.objects.get(pk=1).llm_error_count == 2  # refusals are not model errors

    state["up"] = True
    time.sleep(0.6)
    assert post(alice, "/api/memories/extract", said).status_code == 200  # the probe
    assert post(alice, "/api/memories/extract", said).status_code == 200
    assert Fact.objects.filter(content="The user likes tea").exists()


def test_a_long_conversation_is_extracted_by_a_job(alice, owner):
    line = "I prefer green tea in meeting {}, honestly."
    # Just past what is extracted while the request waits.
    long = [{"role": "user", "content": line.format(n)}
            for n in range(EXTRACT_INLINE_CHARS // len(line) + 1)]  # fmt: skip
    assert sum(len(m["content"]) for m in long) > EXTRACT_INLINE_CHARS
    response = post(alice, "/api/memories/extract", {"messages": long})
    assert response.status_code == 202
    job = alice.get(f"/api/jobs/{response.json()['job']}").json()
    assert job["state"] == "done" and job["result"]["mode"] == "written"
    assert "messages" not in Job.objects.get(pk=job["id"]).arguments  # the input is not kept


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"text": ""},
        {"text": "x", "messages": [{"role": "user", "content": "y"}]},
        {"messages": []},
        {"messages": [{"role": "robot", "content": "y"}]},
        {"text": "x" * 500_001},
        {"text": "Remember that I like tea.", "team": "No Such Team"},
    ],
)
def test_bad_input_is_refused_clearly_and_writes_nothing(alice, body):
    response = post(alice, "/api/memories/extract", body)
    assert 400 <= response.status_code < 500, response.content
    assert not Fact.objects.exists() and not MemoryReview.objects.exists()


# --- The dashboard ----------------------------------------------------------------------


@pytest.fixture
def proposals(alice):
    MemoryConfig.objects.filter(pk=1).update(extraction_review_required=True)
    return post(alice, "/api/memories/extract", {"messages": CONVERSATION}).json()["reviews"]


def test_the_review_page_approves_edited_rejects_and_decides_in_bulk(
    owner_client, proposals, owner
):
    page = owner_client.get("/memory/reviews/").content.decode()
    assert all(f'value="{pk}"' in page for pk in proposals)
    first, *rest = proposals
    done = owner_client.post(
        "/memory/reviews/",
        {
            "action": "approve",
            "review": first,
            "content": "Staging is db-stage-1",
            "importance": "0.8",
        },
    )
    assert "Approved proposal" in done.content.decode()
    assert Fact.objects.get(owner=owner, content="Staging is db-stage-1").importance == 0.8
    bulk = owner_client.post("/memory/reviews/", {"action": "reject-ticked", "ids": rest})
    assert f"Rejected {len(rest)} proposal" in bulk.content.decode()
    assert not MemoryReview.objects.filter(state="pending").exists()


def test_the_review_page_refuses_odd_input_and_other_peoples_proposals(
    owner_client, outsider_client, proposals
):
    assert (
        owner_client.post("/memory/reviews/", {"action": "approve", "review": "²"}).status_code
        == 400
    )
    assert owner_client.post("/memory/reviews/", {"action": "explode"}).status_code == 400
    assert (
        owner_client.post(
            "/memory/reviews/", {"action": "approve", "review": proposals[0], "importance": "lots"}
        ).status_code
        == 400
    )
    theirs = outsider_client.post("/memory/reviews/", {"action": "approve", "review": proposals[0]})
    assert theirs.status_code == 404
    assert MemoryReview.objects.filter(state="pending").count() == len(proposals)
    assert f'value="{proposals[0]}"' not in outsider_client.get("/memory/reviews/").content.decode()


def test_distill_now_from_the_page_shows_its_job(owner_client, outsider_client, owner, remember):
    for n in range(12):
        remember(owner, f"Alice reviews pull request {n} about the billing export")
    page = owner_client.post("/memory/reviews/", {"action": "distill"}).content.decode()
    job = Job.objects.get(owner=owner, kind="distill")
    assert f'Distillation {job.pk}</strong>: <span class="job-state">done</span>' in page
    assert "distilled into 1 new summary and 1 profile (offline)." in page
    assert owner_client.get(f"/jobs/{job.pk}/").status_code == 200
    assert outsider_client.get(f"/jobs/{job.pk}/").status_code == 404


@pytest.mark.browser
def test_a_person_approves_a_proposal_and_runs_distill_now(
    page, live_server, login, owner, proposals, remember
):
    for n in range(12):
        remember(owner, f"Alice reviews pull request {n} about the billing export")
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    page.click("text=review proposals and distill")
    first = page.locator("li.review").first
    first.locator("textarea").fill("The staging database is db-stage-1 (checked)")
    first.locator("button[value=approve]").click()
    page.wait_for_selector("text=Approved proposal")
    assert Fact.objects.filter(content="The staging database is db-stage-1 (checked)").exists()
    page.click("button:has-text('Distill now')")
    page.wait_for_selector(".job .job-state:text('done')")
    assert Fact.objects.filter(owner=owner, layer=3).exists()
