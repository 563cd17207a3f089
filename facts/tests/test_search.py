"""Search boxes read a sentence: ``GET /api/memories/search``, ``GET /api/wiki/search``
and the dashboard's search boxes fuse every-word, any-word and nearest-meaning hits as
recall does (``mode=hybrid``, the default), or match every word (``mode=exact``).
The access rule holds in both modes; odd input gets a 4xx, never a 500."""

from html import unescape

import pytest

from facts.services.config import memory_config_update
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.search import search_query_clean
from teams.services import Actor
from wiki.models import Page, PagePassage
from wiki.search import PASSAGE_VECTORS
from wiki.services import (
    wiki_page_delete,
    wiki_page_upsert,
    wiki_pages_embed_waiting,
    wiki_quotes_forget,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def billing(owner, team, remember):
    """Alice's facts: who owns billing (a team fact), and two others."""
    return {
        "owner": remember(owner, "Alice owns billing", visibility="team"),
        "deploys": remember(owner, "Deploys happen on Tuesday"),
        "host": remember(owner, "The staging database lives on host orion"),
    }


def search(client, q, **params):
    response = client.get("/api/memories/search", {"q": q, **params})
    assert response.status_code == 200, response.content
    return response.json()


def ids(found) -> list[int]:
    return [item["id"] for item in found["items"]]


def test_a_question_finds_the_fact_its_key_words_find(agent_client, owner, billing):
    alice = agent_client(owner)
    assert ids(search(alice, "owns billing")) == [billing["owner"].pk]
    found = search(alice, "who owns billing")
    assert ids(found)[0] == billing["owner"].pk
    assert found["mode"] == "hybrid"


def test_hybrid_search_finds_a_fact_by_meaning_and_exact_mode_does_not(
    agent_client, owner, billing
):
    alice = agent_client(owner)
    found = search(alice, "who is responsible for invoices")
    assert ids(found)[0] == billing["owner"].pk
    assert search(alice, "who is responsible for invoices", mode="exact")["count"] == 0
    exact = search(alice, "who owns billing", mode="exact")
    assert (exact["count"], exact["mode"]) == (0, "exact")
    assert ids(search(alice, "owns bill", mode="exact")) == [billing["owner"].pk]


def test_with_embeddings_off_a_question_still_finds_by_its_words(
    agent_client, owner, staff, billing
):
    memory_config_update(actor=Actor(user=staff), changes={"embeddings_enabled": False})
    alice = agent_client(owner)
    found = search(alice, "who owns billing")
    assert (ids(found), found["mode"]) == ([billing["owner"].pk], "keyword")
    assert search(alice, "who is responsible for invoices")["count"] == 0


def test_a_teammate_finds_team_facts_by_meaning_and_an_outsider_nothing(
    agent_client, teammate, outsider, billing
):
    assert ids(search(agent_client(teammate), "who is responsible for invoices")) == [
        billing["owner"].pk
    ]
    charlie = agent_client(outsider)
    for mode in ("hybrid", "exact"):
        for q in ("who owns billing", "owns billing", "who is responsible for invoices"):
            assert search(charlie, q, mode=mode)["count"] == 0


def results(client, **params) -> str:
    """The list part of the Memory manager, as HTMX asks for it."""
    response = client.get("/memory/", params, headers={"HX-Request": "true"})
    assert response.status_code == 200
    return response.content.decode()


def unmarked(html: str) -> str:
    return html.replace("<mark>", "").replace("</mark>", "")


def test_the_manager_search_box_reads_a_sentence_and_keeps_its_mode(owner_client, billing):
    html = results(owner_client, q="who owns billing")
    assert "Alice owns billing" in unmarked(html)
    assert "by words and meaning" in html
    exact = results(owner_client, q="who owns billing", mode="exact")
    assert "Alice owns billing" not in unmarked(exact)
    page = owner_client.get("/memory/", {"q": "who owns billing", "mode": "exact"})
    assert '<option value="exact" selected>' in page.content.decode()


def test_keyword_hits_are_highlighted_and_hits_by_meaning_still_show(owner_client, billing):
    assert "Alice owns <mark>billing</mark>" in results(owner_client, q="billing")
    html = results(owner_client, q="who is responsible for invoices")
    assert "Alice owns billing" in html
    assert "<mark>" not in html


@pytest.fixture
def runbook(owner, django_capture_on_commit_callbacks):
    actor = Actor(user=owner)
    with django_capture_on_commit_callbacks(execute=True):
        wiki_page_upsert(actor=actor, title="Billing", content="Alice owns billing and invoices.")
        wiki_page_upsert(actor=actor, title="Deploys", content="Deploys happen on Tuesday.")


# A long page whose one passage about who owns billing shares no word with the question.
HANDBOOK = "\n\n".join(
    [
        f"Step {n}: the on-call engineer checks dashboard panel {n} and restarts worker {n}." * 6
        for n in range(12)
    ]
    + ["Alice owns billing; ask her before changing a price."]
    + [f"Appendix {n}: the release train leaves from branch main at {n} pm." * 6 for n in range(8)]
)
QUESTION = "who is responsible for invoices"


@pytest.fixture
def handbook(owner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        result = wiki_page_upsert(actor=Actor(user=owner), title="Handbook", content=HANDBOOK)
    return Page.objects.get(pk=result.page.pk)


def page_vectors_are_its_passages(page: Page) -> bool:
    passages = set(PagePassage.objects.filter(page=page).values_list("pk", flat=True))
    return bool(passages) and set(PASSAGE_VECTORS.models()) == passages


def test_the_wiki_search_finds_a_page_by_the_meaning_of_one_of_its_passages(
    agent_client, owner, handbook
):
    assert PagePassage.objects.filter(page=handbook).count() > 5
    assert page_vectors_are_its_passages(handbook)
    alice = agent_client(owner)
    found = alice.get("/api/wiki/search", {"q": QUESTION}).json()["items"]
    assert [(item["title"], item["snippet"]) for item in found] == [("Handbook", "")]
    assert wiki_titles(alice, QUESTION, mode="exact") == []


def test_the_wiki_search_by_meaning_keeps_to_what_the_reader_may_read(
    agent_client, teammate, outsider, handbook
):
    assert wiki_titles(agent_client(teammate), QUESTION) == []
    assert wiki_titles(agent_client(outsider), QUESTION) == []


def test_with_embeddings_off_the_wiki_search_is_by_words(agent_client, owner, staff, handbook):
    memory_config_update(actor=Actor(user=staff), changes={"embeddings_enabled": False})
    alice = agent_client(owner)
    assert wiki_titles(alice, QUESTION) == []
    assert wiki_titles(alice, "who owns billing") == ["Handbook"]


def test_an_edit_replaces_the_passages_so_old_meaning_no_longer_finds_the_page(
    agent_client, owner, handbook, django_capture_on_commit_callbacks
):
    before = set(PASSAGE_VECTORS.models())
    without = HANDBOOK.replace("Alice owns billing; ask her before changing a price.", "")
    with django_capture_on_commit_callbacks(execute=True):
        wiki_page_upsert(actor=Actor(user=owner), title="Handbook", content=without)
    assert page_vectors_are_its_passages(handbook)
    assert not before & set(PASSAGE_VECTORS.models())
    assert wiki_titles(agent_client(owner), QUESTION) == []


def test_a_forgotten_quote_takes_the_page_s_passages_with_it(owner, handbook):
    wiki_quotes_forget(
        actor=Actor(user=owner), texts=["Alice owns billing; ask her before changing a price."]
    )
    # The passages that held it are gone at once, before the page is embedded anew.
    assert not PagePassage.objects.filter(page=handbook).exists()
    assert PASSAGE_VECTORS.count() == 0


def test_deleting_a_page_deletes_its_passages_vectors(owner, handbook):
    wiki_page_delete(actor=Actor(user=owner), page=handbook)
    assert (PagePassage.objects.count(), PASSAGE_VECTORS.count()) == (0, 0)


def test_pages_whose_embedding_was_never_queued_are_embedded_by_the_sweep(agent_client, owner):
    # Without the on-commit callbacks the page's task is never sent, as with the broker down.
    page = wiki_page_upsert(actor=Actor(user=owner), title="Handbook", content=HANDBOOK).page
    alice = agent_client(owner)
    assert wiki_titles(alice, QUESTION) == []
    assert wiki_pages_embed_waiting() == 1
    assert page_vectors_are_its_passages(page)
    assert wiki_titles(alice, QUESTION) == ["Handbook"]
    assert wiki_pages_embed_waiting() == 0


def wiki_titles(client, q, **params) -> list[str]:
    response = client.get("/api/wiki/search", {"q": q, **params})
    assert response.status_code == 200, response.content
    return [item["title"] for item in response.json()["items"]]


def test_the_wiki_search_reads_a_sentence_too(agent_client, owner, outsider, runbook):
    alice = agent_client(owner)
    assert wiki_titles(alice, "owns billing") == ["Billing"]
    assert wiki_titles(alice, "who owns billing") == ["Billing"]
    assert wiki_titles(alice, "who owns billing", mode="exact") == []
    assert wiki_titles(alice, "owns bill", mode="exact") == ["Billing"]
    assert wiki_titles(agent_client(outsider), "who owns billing") == []


def test_the_wiki_search_box_has_the_mode_filter(owner_client, runbook):
    html = owner_client.get("/wiki/", {"q": "who owns billing"}).content.decode()
    assert "Billing" in html and "<mark>" in html
    html = owner_client.get("/wiki/", {"q": "who owns billing", "mode": "exact"}).content.decode()
    assert "No page matches." in html


@pytest.mark.parametrize("url", ["/api/memories/search", "/api/wiki/search"])
@pytest.mark.parametrize("mode", ["fuzzy", "EXACT", "x" * 5000])
def test_an_unknown_mode_is_a_400_naming_the_modes(agent_client, owner, url, mode):
    response = agent_client(owner).get(url, {"q": "billing", "mode": mode})
    assert response.status_code == 400
    assert "hybrid or exact" in response.json()["detail"]


@pytest.mark.parametrize("url", ["/api/memories/search", "/api/wiki/search", "/memory/"])
@pytest.mark.parametrize("field", ["q", "mode", "project"])
def test_a_nul_character_anywhere_in_the_query_string_is_a_400_saying_so(
    agent_client, owner_client, owner, url, field
):
    client = agent_client(owner) if url.startswith("/api/") else owner_client
    response = client.get(url, {"q": "billing", field: "bill\x00ing"})
    assert response.status_code == 400
    detail = response.json()["detail"] if url.startswith("/api/") else unescape(response.text)
    assert f"query parameter '{field}'" in detail and "NUL character" in detail


@pytest.mark.parametrize("url", ["/api/memories/search", "/api/wiki/search"])
@pytest.mark.parametrize("mode", ["hybrid", "exact"])
@pytest.mark.parametrize(
    "q", ['"', "NEAR(a b)", "title:x OR ^*", "who?", "x" * 1001, "\x00", "%ED%A0%80", "  "]
)
def test_odd_queries_get_an_answer_or_a_400(agent_client, owner, billing, url, mode, q):
    response = agent_client(owner).get(url, {"q": q, "mode": mode})
    assert response.status_code in (200, 400), response.content


def test_a_lone_surrogate_in_a_decoded_query_is_refused_with_a_message():
    with pytest.raises(InvalidInput, match="lone surrogate"):
        search_query_clean("who owns \ud800 billing")


@pytest.mark.parametrize("url", ["/memory/", "/wiki/"])
@pytest.mark.parametrize("name", ["q", "mode", "tag", "source", "created_from", "created_to"])
@pytest.mark.parametrize("value", ["\x00", "x" * 5000, "2025-13-45", "NEAR(", "%ED%A0%80"])
def test_odd_search_and_filter_values_in_the_dashboard_never_fail(
    owner_client, billing, url, name, value
):
    response = owner_client.get(url, {"q": "billing", name: value})
    assert response.status_code in (200, 400)


@pytest.mark.parametrize("url", ["/api/memories/search", "/api/wiki/search", "/memory/", "/wiki/"])
def test_a_surrogate_sent_as_raw_bytes_gets_an_answer(agent_client, owner, owner_client, url):
    client = owner_client if not url.startswith("/api/") else agent_client(owner)
    for raw in ("%ED%A0%80", "%ED%BF%BF%20billing", "%F0%9F"):
        assert client.get(f"{url}?q={raw}").status_code in (200, 400)
        assert client.get(f"{url}?q=billing&mode={raw}").status_code == 400


def test_search_queries_do_not_grow_with_the_hits(
    agent_client, owner, remember, django_assert_max_num_queries, monkeypatch
):
    from memoryhub.engine.search import fts

    # Counts read again when their time runs out would add a query to either search.
    monkeypatch.setattr(fts, "ROW_COUNT_TTL", 3600.0)
    alice = agent_client(owner)
    remember(owner, "Billing exports run at midnight", tags=["billing"])
    search(alice, "billing")  # the token's first use is recorded once
    with django_assert_max_num_queries(20) as few:
        search(alice, "billing")
    allowed = len(few.captured_queries)  # (the next request resets the query log)
    for i in range(12):
        remember(owner, f"Billing rule {i}: invoices of region {i} go out on day {i}")
    search(alice, "billing")  # the in-memory vector copy catches up with the new rows
    with django_assert_max_num_queries(allowed):
        assert search(alice, "billing")["count"] == 13
