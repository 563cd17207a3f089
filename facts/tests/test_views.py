"""The Memory manager in the dashboard: browse, search, filter, sort, page, inline edit,
delete, the counts chart, Test recall, embedding progress and Settings -> Memory.
Outsiders are refused everywhere; bad input changes nothing."""

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from facts.forms import MemoryConfigForm
from facts.models import Fact
from facts.services.config import memory_config_update
from facts.services.create import fact_create
from facts.services.embedding import facts_backfill, facts_embed_waiting
from memoryhub.engine.config import memory_config_get, memory_config_llm_error_record
from memoryhub.engine.models import MemoryConfig
from teams.models import AuditEvent
from teams.services import Actor

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:
    # The default hasher costs half a second a user; these tests are not about it.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def remember(user, content: str, **data: object) -> Fact:
    return fact_create(actor=Actor(user=user), data={"content": content, **data}).fact


def html_of(response) -> str:
    return response.content.decode()


def row_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr id="fact-(\d+)"', html)]


@pytest.fixture
def world(owner, teammate, outsider, team):
    """Alice's private, team and global facts, and Charlie's private one."""
    return {
        "private": remember(owner, "Alice deploys with Ansible on Fridays", category="context"),
        "team": remember(
            owner,
            "The platform team pins Postgres at version 16",
            visibility="team",
            category="fact",
            tags=["postgres"],
        ),
        "global": remember(
            owner,
            "Company style guide prefers British spelling",
            visibility="global",
            category="preference",
            importance=0.9,
        ),
        "theirs": remember(outsider, "Charlie keeps his notes in Obsidian"),
    }


# --- Browse, search, filter, sort, page ---------------------------------------------------


def test_owner_sees_their_facts_with_every_column(owner_client, world):
    html = html_of(owner_client.get("/memory/"))
    fact = world["team"]
    row = re.search(rf'<tr id="fact-{fact.pk}">(.*?)</tr>', html, re.S).group(1)
    for text in (
        "The platform team pins Postgres at version 16",
        "Fact",
        "0.50",
        "Team",
        "Platform",
        "Active",
        "alice",
        fact.created_at.strftime("%Y-%m-%d"),
    ):
        assert text in row
    assert set(row_ids(html)) == {world[k].pk for k in ("private", "team", "global")}
    assert "Charlie keeps" not in html


def test_outsider_never_sees_private_or_team_facts(outsider_client, world):
    html = html_of(outsider_client.get("/memory/"))
    assert set(row_ids(html)) == {world["global"].pk, world["theirs"].pk}
    assert "Ansible" not in html and "Postgres" not in html
    for query in ("Ansible", "Postgres", "postgres"):
        found = html_of(outsider_client.get("/memory/", {"q": query}, headers=HTMX))
        assert row_ids(found) == []
    # The chart counts only what the outsider can see.
    assert "(2)" in html_of(outsider_client.get("/memory/chart/"))
    # Filtering for another's visibility does not widen the view.
    filtered = html_of(outsider_client.get("/memory/", {"visibility": "team"}, headers=HTMX))
    assert row_ids(filtered) == []


def test_outsider_gets_404_for_another_users_fact_everywhere(outsider_client, world):
    for name in ("private", "team"):
        fact = world[name]
        assert outsider_client.get(f"/memory/{fact.pk}/").status_code == 404
        assert outsider_client.get(f"/memory/{fact.pk}/edit/", headers=HTMX).status_code == 404
        response = outsider_client.post(
            f"/memory/{fact.pk}/edit/",
            {
                "content": "hijacked",
                "category": "fact",
                "importance": "0.5",
                "visibility": "global",
            },
        )
        assert response.status_code == 404
        assert outsider_client.post(f"/memory/{fact.pk}/delete/", headers=HTMX).status_code == 404
        fact.refresh_from_db()
        assert fact.content != "hijacked"
    assert Fact.objects.filter(pk=world["private"].pk).exists()


def test_outsider_can_read_but_not_change_a_global_fact(outsider_client, world):
    fact = world["global"]
    page = html_of(outsider_client.get("/memory/"))
    assert f'href="/memory/{fact.pk}/edit/"' not in page
    assert outsider_client.get(f"/memory/{fact.pk}/edit/").status_code == 403
    assert outsider_client.post(f"/memory/{fact.pk}/delete/").status_code == 403
    assert Fact.objects.filter(pk=fact.pk).exists()


def test_outsider_recall_never_injects_another_users_private_or_team_fact(outsider_client, world):
    response = outsider_client.post(
        "/memory/recall/", {"query": "Ansible Postgres Fridays version"}, headers=HTMX
    )
    assert response.status_code == 200
    html = html_of(response)
    assert "Ansible" not in html and "Postgres" not in html


def test_teammate_sees_team_facts_but_cannot_edit_them(teammate_client, world):
    fact = world["team"]
    html = html_of(teammate_client.get("/memory/"))
    assert fact.pk in row_ids(html)
    assert world["private"].pk not in row_ids(html)
    assert f'href="/memory/{fact.pk}/edit/"' not in html
    refused = teammate_client.get(f"/memory/{fact.pk}/edit/", headers=HTMX)
    assert refused.status_code == 403
    assert html_of(refused).lstrip().startswith(f'<tr id="fact-{fact.pk}">')
    assert teammate_client.get(f"/memory/{fact.pk}/edit/").status_code == 403
    response = teammate_client.post(
        f"/memory/{fact.pk}/edit/",
        {
            "content": "Postgres 17 now",
            "category": "fact",
            "importance": "0.5",
            "visibility": "team",
        },
        headers=HTMX,
    )
    assert response.status_code == 403
    assert "Only the owner" in html_of(response)
    response = teammate_client.post(f"/memory/{fact.pk}/delete/", headers=HTMX)
    assert response.status_code == 403
    fact.refresh_from_db()
    assert fact.content == "The platform team pins Postgres at version 16"


def test_team_admin_may_edit_a_teammates_team_fact(owner_client, teammate, team):
    fact = remember(teammate, "Bob's runbook lives in the wiki", visibility="team", team=team.name)
    assert f'href="/memory/{fact.pk}/edit/"' in html_of(owner_client.get("/memory/"))


def test_search_matches_content_and_tags_and_keeps_filters(owner_client, world):
    found = html_of(owner_client.get("/memory/", {"q": "ansible"}, headers=HTMX))
    assert row_ids(found) == [world["private"].pk]
    assert "best matches first" in found
    by_tag = html_of(owner_client.get("/memory/", {"q": "postgres"}, headers=HTMX))
    assert row_ids(by_tag) == [world["team"].pk]
    filtered = html_of(
        owner_client.get("/memory/", {"q": "postgres", "category": "context"}, headers=HTMX)
    )
    assert row_ids(filtered) == []
    # Query syntax is searched as words, never an error.
    odd = owner_client.get("/memory/", {"q": 'ansible AND "fri* (:'}, headers=HTMX)
    assert odd.status_code == 200


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"category": "preference"}, ["global"]),
        ({"visibility": "team"}, ["team"]),
        ({"visibility": "private"}, ["private", "billing"]),
        ({"visibility": "private", "status": "all"}, ["private", "billing", "archived"]),
        ({"status": "archived"}, ["archived"]),
        ({"project": "billing"}, ["billing"]),
        ({"layer": "1"}, ["private", "team", "global", "billing"]),
        ({"layer": "1", "status": "all"}, ["private", "team", "global", "billing", "archived"]),
        ({"layer": "2"}, []),
    ],
)
def test_filters_narrow_the_list(owner_client, owner, world, filters, expected):
    world["billing"] = remember(
        owner, "Invoices are generated on the first of the month", project="billing"
    )
    world["archived"] = remember(owner, "Legacy cron host was called zeus")
    Fact.objects.filter(pk=world["archived"].pk).update(status="archived")
    html = html_of(owner_client.get("/memory/", filters, headers=HTMX))
    assert sorted(row_ids(html)) == sorted(world[name].pk for name in expected)


def test_the_list_search_and_chart_show_active_facts_unless_the_status_asks(
    owner_client, owner, world
):
    remember(owner, "Alice deploys with Ansible on Fridays!")  # repeats: they merge
    remember(owner, "alice deploys with ansible on fridays")
    retired = remember(owner, "Legacy cron host was called zeus")
    Fact.objects.filter(pk=retired.pk).update(status="archived")
    facts_backfill()  # archived rows embedded too: a search by meaning could meet them
    archived = set(Fact.objects.filter(owner=owner, status="archived").values_list("pk", flat=True))
    assert len(archived) == 3  # two earlier wordings and the fact archived by hand
    active = {world[name].pk for name in ("private", "team", "global")}

    def listed(**params: str) -> set[int]:
        return set(row_ids(html_of(owner_client.get("/memory/", params, headers=HTMX))))

    for sort in ("newest", "oldest", "importance", "accessed", "updated"):
        assert listed(sort=sort) == active, sort
    assert listed(status="") == listed(status="active") == active
    assert listed(q="Alice deploys with Ansible on Fridays") == {world["private"].pk}
    assert listed(q="zeus", mode="exact") == set()
    assert listed(status="archived") == archived
    assert listed(status="archived", q="zeus", mode="exact") == {retired.pk}
    assert listed(status="all") == active | archived
    assert "(3)" in html_of(owner_client.get("/memory/chart/"))
    # The filter offers every status, active first (what an empty choice shows).
    page = html_of(owner_client.get("/memory/"))
    select = re.search(r'<select name="status"[^>]*>(.*?)</select>', page, re.S).group(1)
    assert re.findall(r'<option value="([^"]*)"', select) == [
        "active",
        "pending_review",
        "archived",
        "all",
    ]


def test_unknown_filter_value_answers_400_with_a_message(owner_client, world):
    response = owner_client.get("/memory/", {"category": "gossip"}, headers=HTMX)
    assert response.status_code == 400
    assert "category" in html_of(response)
    assert row_ids(html_of(response)) == []


def test_sorting_by_importance_and_by_age(owner_client, owner, world):
    low = remember(owner, "Lunch is at noon", importance=0.1)
    by_importance = row_ids(
        html_of(owner_client.get("/memory/", {"sort": "importance"}, headers=HTMX))
    )
    assert by_importance[0] == world["global"].pk
    assert by_importance[-1] == low.pk
    newest = row_ids(html_of(owner_client.get("/memory/", headers=HTMX)))
    oldest = row_ids(html_of(owner_client.get("/memory/", {"sort": "oldest"}, headers=HTMX)))
    assert newest[0] == low.pk
    assert oldest == list(reversed(newest))
    # The column headers are real links that keep the filters.
    page = html_of(owner_client.get("/memory/", {"category": "fact"}))
    assert 'href="?category=fact&amp;sort=importance"' in page


def test_fifty_facts_a_page_with_real_links(owner_client, owner):
    facts = [remember(owner, f"Service svc{i:02d} listens on port {8000 + i}") for i in range(53)]
    first = owner_client.get("/memory/")
    html = html_of(first)
    assert len(row_ids(html)) == 50
    assert "Page 1 of 2" in html
    assert 'href="?page=2"' in html
    second = html_of(owner_client.get("/memory/", {"page": "2"}, headers=HTMX))
    assert sorted(row_ids(second)) == sorted(f.pk for f in facts[:3])
    assert second.lstrip().startswith('<section class="card" id="fact-results"')


def test_list_page_queries_do_not_grow_with_the_rows(
    teammate_client, owner, teammate, team, django_assert_max_num_queries
):
    def add(n: int, start: int) -> None:
        for i in range(start, start + n):
            remember(owner, f"Team runbook step r{i:03d} uses tool t{i:03d}", visibility="team")
            remember(teammate, f"Bob's own note n{i:03d} about topic p{i:03d}")

    add(3, 0)
    with django_assert_max_num_queries(20) as few:
        assert teammate_client.get("/memory/").status_code == 200
    add(20, 3)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = teammate_client.get("/memory/")
    assert len(row_ids(html_of(response))) == 46


def test_anonymous_is_sent_to_login(client: Client, world):
    for url in (
        "/memory/",
        "/memory/recall/",
        "/memory/settings/",
        f"/memory/{world['global'].pk}/",
        "/memory/embeddings/",
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response.url.startswith("/login/")


# --- Inline edit and delete -----------------------------------------------------------------


def test_edit_button_swaps_the_row_for_a_form(owner_client, world):
    fact = world["private"]
    response = owner_client.get(f"/memory/{fact.pk}/edit/", headers=HTMX)
    html = html_of(response)
    assert response.status_code == 200
    assert html.lstrip().startswith(f'<tr id="fact-{fact.pk}" class="editing">')
    assert "Alice deploys with Ansible on Fridays</textarea>" in html
    assert f'hx-post="/memory/{fact.pk}/edit/"' in html


def test_inline_edit_saves_and_swaps_the_row_back(owner_client, world):
    fact = world["private"]
    response = owner_client.post(
        f"/memory/{fact.pk}/edit/",
        {
            "content": "Alice deploys with Ansible on Thursdays",
            "category": "pattern",
            "importance": "0.8",
            "visibility": "global",
        },
        headers=HTMX,
    )
    assert response.status_code == 200
    html = html_of(response)
    assert html.lstrip().startswith(f'<tr id="fact-{fact.pk}">')
    assert "Thursdays" in html and "Pattern" in html and "0.80" in html
    assert "facts-changed" in json.loads(response.headers["HX-Trigger"])
    fact.refresh_from_db()
    assert (fact.content, fact.category, fact.importance, fact.visibility) == (
        "Alice deploys with Ansible on Thursdays",
        "pattern",
        0.8,
        "global",
    )
    assert AuditEvent.objects.filter(action="fact.update", target_id=str(fact.pk)).exists()


def test_inline_edit_with_importance_out_of_range_answers_400_and_changes_nothing(
    owner_client, world
):
    fact = world["private"]
    response = owner_client.post(
        f"/memory/{fact.pk}/edit/",
        {"content": "Changed text", "category": "fact", "importance": "7", "visibility": "private"},
        headers=HTMX,
    )
    assert response.status_code == 400
    html = html_of(response)
    assert html.lstrip().startswith(f'<tr id="fact-{fact.pk}" class="editing">')
    assert "Importance must be between 0 and 1" in html
    fact.refresh_from_db()
    assert fact.content == "Alice deploys with Ansible on Fridays"
    assert fact.importance == 0.5


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("content", "   ", "Content must not be empty"),
        ("category", "gossip", "Unknown category"),
        ("importance", "lots", "Enter a number"),
        ("visibility", "team", "Team visibility needs a team"),
    ],
)
def test_inline_edit_refuses_bad_input_with_a_message(
    owner_client, outsider, field, value, message
):
    fact = remember(outsider, "Charlie keeps his notes in Obsidian")
    client = Client()
    client.force_login(outsider)
    data = {
        "content": fact.content,
        "category": "fact",
        "importance": "0.5",
        "visibility": "private",
        field: value,
    }
    response = client.post(f"/memory/{fact.pk}/edit/", data, headers=HTMX)
    assert response.status_code == 400
    assert message in html_of(response)
    fact.refresh_from_db()
    assert (fact.content, fact.category, fact.visibility) == (
        "Charlie keeps his notes in Obsidian",
        "fact",
        "private",
    )


def test_edit_without_javascript_uses_the_fact_page(owner_client, world):
    fact = world["private"]
    page = owner_client.get(f"/memory/{fact.pk}/edit/")
    assert page.status_code == 200
    assert f'action="/memory/{fact.pk}/edit/"' in html_of(page)
    response = owner_client.post(
        f"/memory/{fact.pk}/edit/",
        {
            "content": "Alice deploys with Ansible daily",
            "category": "context",
            "importance": "0.5",
            "visibility": "private",
        },
    )
    assert response.status_code == 302
    assert response.url == "/memory/"
    fact.refresh_from_db()
    assert fact.content == "Alice deploys with Ansible daily"
    bad = owner_client.post(
        f"/memory/{fact.pk}/edit/",
        {"content": "x", "category": "context", "importance": "-1", "visibility": "private"},
    )
    assert bad.status_code == 400
    assert "Importance must be between 0 and 1" in html_of(bad)


def test_cancel_brings_the_row_back(owner_client, world):
    fact = world["private"]
    html = html_of(owner_client.get(f"/memory/{fact.pk}/", headers=HTMX))
    assert html.lstrip().startswith(f'<tr id="fact-{fact.pk}">')
    assert "Alice deploys with Ansible on Fridays" in html


def test_delete_removes_the_fact_and_its_row(owner_client, world):
    fact = world["private"]
    page = html_of(owner_client.get("/memory/"))
    assert 'hx-confirm="Delete this fact?' in page
    response = owner_client.post(f"/memory/{fact.pk}/delete/", headers=HTMX)
    assert response.status_code == 200
    assert response.content == b""
    assert "facts-changed" in json.loads(response.headers["HX-Trigger"])
    assert not Fact.objects.filter(pk=fact.pk).exists()
    assert AuditEvent.objects.filter(action="fact.delete", target_id=str(fact.pk)).exists()
    other = world["team"]
    response = owner_client.post(f"/memory/{other.pk}/delete/")
    assert response.status_code == 302
    assert not Fact.objects.filter(pk=other.pk).exists()


def test_delete_needs_post(owner_client, world):
    fact = world["private"]
    assert owner_client.get(f"/memory/{fact.pk}/delete/").status_code == 405
    assert Fact.objects.filter(pk=fact.pk).exists()


# --- Chart, Test recall, embedding progress ---------------------------------------------------


def test_chart_draws_counts_by_category_and_layer_as_inline_svg(owner_client, owner, world):
    remember(owner, "Alice likes short standups", category="preference")
    html = html_of(owner_client.get("/memory/chart/"))
    assert html.lstrip().startswith('<section class="card" id="memory-chart"')
    assert html.count("<svg") == 2 and "<script" not in html
    bars = dict(
        re.findall(
            r'<text x="120" y="16" text-anchor="end">([^<]+)</text>\s*'
            r'<rect x="128" y="4" width="([\d.]+)"',
            html,
        )
    )
    assert float(bars["Preference"]) == 240.0  # the longest bar: 2 preferences
    assert float(bars["Context"]) == 120.0
    assert float(bars["Summary"]) == 0.0
    assert float(bars["Raw facts"]) == 240.0
    assert "(4)" in html


def test_test_recall_shows_the_block_and_scores_without_counting_access(owner_client, world):
    fact = world["private"]
    response = owner_client.post(
        "/memory/recall/", {"query": "How does Alice deploy?"}, headers=HTMX
    )
    assert response.status_code == 200
    html = html_of(response)
    block = re.search(r'<pre class="recall-block" id="recall-block">(.*?)</pre>', html, re.S)
    assert block.group(1).startswith("## Recalled Facts\n- [context] Alice deploys with Ansible")
    assert re.search(r'id="recall-mode">(hybrid|keyword)<', html)
    for column in (
        "BM25 rank",
        "Vector rank",
        "Similarity",
        "Fused (RRF)",
        "Importance",
        "Recency",
        "Access",
        "Score",
    ):
        assert f"<th>{column}</th>" in html
    fact.refresh_from_db()
    assert fact.access_count == 0
    assert not AuditEvent.objects.filter(action="recall.cross_scope").exists()


def test_test_recall_reports_mode_and_notes_when_memory_is_off(owner_client, staff, world):
    memory_config_update(actor=Actor(user=staff), changes={"memory_enabled": False})
    html = html_of(owner_client.post("/memory/recall/", {"query": "Ansible"}, headers=HTMX))
    assert 'id="recall-mode">disabled<' in html
    assert "memory is switched off" in html
    assert "Nothing would be injected" in html


def test_test_recall_keyword_mode_without_embeddings(owner_client, staff, world):
    memory_config_update(actor=Actor(user=staff), changes={"embeddings_enabled": False})
    html = html_of(owner_client.post("/memory/recall/", {"query": "Ansible"}, headers=HTMX))
    assert 'id="recall-mode">keyword<' in html
    assert "Alice deploys with Ansible" in html


def test_test_recall_refuses_an_empty_message(owner_client):
    response = owner_client.post("/memory/recall/", {"query": "   "}, headers=HTMX)
    assert response.status_code == 400
    assert "required" in html_of(response)


def test_test_recall_page_works_without_javascript(owner_client, world):
    assert owner_client.get("/memory/recall/").status_code == 200
    response = owner_client.post("/memory/recall/", {"query": "Ansible", "project": ""})
    html = html_of(response)
    assert "<h1>" not in html or "Test recall" in html
    assert "## Recalled Facts" in html and "</html>" in html


def test_embedding_progress_counts_own_facts_and_polls_while_incomplete(owner_client, world):
    html = html_of(owner_client.get("/memory/embeddings/"))
    # Facts created inside a test transaction have not been embedded yet.
    assert "<strong>0</strong> of <strong>3</strong> of your facts" in html
    assert 'hx-trigger="every 2s, facts-changed from:body"' in html
    assert "Backfill now" not in html


def test_embedding_progress_counts_the_active_facts_recall_can_use(owner_client, owner, world):
    remember(owner, "Alice deploys with Ansible on Fridays!")  # keeps an earlier wording
    retired = remember(owner, "Legacy cron host was called zeus")
    Fact.objects.filter(pk=retired.pk).update(status="archived")
    assert Fact.objects.filter(owner=owner, status="archived").count() == 2
    facts_embed_waiting()  # what the worker does after a write: the active facts
    html = html_of(owner_client.get("/memory/embeddings/"))
    assert "<strong>3</strong> of <strong>3</strong> of your facts" in html
    assert "Up to date." in html and "every 2s" not in html


def test_staff_see_instance_totals_and_backfill_embeds_everything(staff_client, world):
    html = html_of(staff_client.get("/memory/embeddings/"))
    assert "<strong>0</strong> of <strong>4</strong> facts" in html
    assert "Backfill now" in html
    response = staff_client.post("/memory/embeddings/backfill/", headers=HTMX)
    assert response.status_code == 200
    html = html_of(response)
    assert "Backfill queued." in html
    assert "<strong>4</strong> of <strong>4</strong> facts" in html
    assert "every 2s" not in html
    assert not Fact.objects.filter(embedding_model="").exists()


def test_only_staff_start_the_backfill(owner_client, world):
    assert owner_client.post("/memory/embeddings/backfill/").status_code == 403
    assert Fact.objects.filter(embedding_model="").count() == 4


def test_memory_page_links_settings_for_staff_only(owner_client, staff_client):
    assert "/memory/settings/" in html_of(staff_client.get("/memory/"))
    assert "/memory/settings/" not in html_of(owner_client.get("/memory/"))


# --- Settings -> Memory ------------------------------------------------------------------------


def settings_data(**changes: object) -> dict[str, object]:
    """The settings form as the browser posts it, from the stored values."""
    config = memory_config_get()
    form = MemoryConfigForm(instance=config)
    data: dict[str, object] = {}
    for name, field in form.fields.items():
        value = form.initial.get(name)
        if name in ("embeddings_api_key", "llm_api_key"):
            value = ""
        elif name in ("recall_category_budget", "recall_tuning"):
            value = field.prepare_value(value)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
            continue
        data[name] = value
    data.update(changes)
    return data


def test_settings_refuse_non_staff(owner_client, outsider_client):
    for client in (owner_client, outsider_client):
        assert client.get("/memory/settings/").status_code == 403
        response = client.post("/memory/settings/", settings_data(recall_max_items=3))
        assert response.status_code == 403
    assert memory_config_get().recall_max_items == 8


def test_settings_form_holds_every_setting():
    names = {f.name for f in MemoryConfig._meta.get_fields() if f.editable} - {"id", "updated_at"}
    assert set(MemoryConfigForm().fields) == names


def test_staff_save_settings_and_the_key_is_never_shown(staff_client):
    secret = "sk-very-secret-4242"
    response = staff_client.post(
        "/memory/settings/",
        settings_data(
            recall_max_items=5,
            rrf_k=30,
            recall_category_budget='{"preference": 2}',
            embeddings_api_key=secret,
        ),
    )
    assert response.status_code == 302
    config = memory_config_get()
    assert (config.recall_max_items, config.rrf_k) == (5, 30)
    assert config.recall_category_budget == {"preference": 2}
    assert config.embeddings_api_key == secret
    page = html_of(staff_client.get("/memory/settings/"))
    assert secret not in page
    assert "A key is stored; leave empty to keep it." in page
    # An empty key field keeps the stored key.
    staff_client.post("/memory/settings/", settings_data(weight_recency=0.2))
    config = memory_config_get()
    assert config.weight_recency == 0.2
    assert config.embeddings_api_key == secret
    # A refused form is shown again without the key that was typed.
    refused = staff_client.post(
        "/memory/settings/", settings_data(weight_access=-1, llm_api_key="sk-typed-999")
    )
    assert refused.status_code == 400
    assert "sk-typed-999" not in html_of(refused) and secret not in html_of(refused)
    assert memory_config_get().llm_api_key == ""
    logged = [e.details for e in AuditEvent.objects.filter(action="settings.instance")]
    assert {"embeddings_api_key": "(set)"}.items() <= logged[-1].items()
    assert secret not in json.dumps(logged)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("weight_importance", "-0.1"),
        ("weight_access", "-1"),
        ("recall_max_items", "0"),
        ("recall_max_items", "101"),
        ("recall_char_budget", "0"),
        ("dedupe_similarity", "1.5"),
        ("dedupe_similarity", "-0.2"),
        ("dedupe_similarity", "0.5"),
        ("rrf_k", "0"),
        ("recall_category_budget", '{"gossip": 1}'),
        ("recall_category_budget", '{"fact": -1}'),
        ("recall_category_budget", "[1, 2]"),
        ("recall_tuning", '{"weight_nope": 1}'),
        ("recall_tuning", '{"weight_time": -1}'),
        ("recall_tuning", '{"fusion": "zscore"}'),
        ("recall_tuning", "[1]"),
        ("embeddings_url", "not a url"),
    ],
)
def test_settings_refuse_values_out_of_range(staff_client, field, value):
    before = MemoryConfig.objects.filter(pk=memory_config_get().pk).values().get()
    response = staff_client.post("/memory/settings/", settings_data(**{field: value}))
    assert response.status_code == 400
    assert 'class="error"' in html_of(response)
    assert MemoryConfig.objects.filter(pk=before["id"]).values().get() == before


def chat_model_box(html: str) -> str:
    return html[html.index('id="chat-model-status"') :]


def test_settings_show_the_chat_model_in_use_and_its_errors(staff_client, staff):
    box = chat_model_box(html_of(staff_client.get("/memory/settings/")))
    assert "offline: no chat model URL is set" in box
    assert '<dd class="llm-error-count">0</dd>' in box
    assert '<dd class="llm-last-error">none</dd>' in box

    memory_config_update(
        actor=Actor(user=staff),
        changes={
            "llm_url": "http://127.0.0.1:11434/v1",
            "llm_model": "llama3.1:8b",
            "llm_api_key": "sk-chat-secret-777",
        },
    )
    at = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    memory_config_llm_error_record(kind="timeout", message="older", at=at - timedelta(hours=1))
    memory_config_llm_error_record(
        kind="invalid",
        message="The model's answer does not match the schema FactsAnswer: facts: "
        "Input should be a valid list",
        at=at,
    )

    page = html_of(staff_client.get("/memory/settings/"))
    box = chat_model_box(page)
    assert "llama3.1:8b at http://127.0.0.1:11434/v1" in box
    assert '<dd class="llm-error-count">2</dd>' in box
    assert (
        "2026-03-04 05:06:07 · invalid · The model&#x27;s answer does not match the schema "
        "FactsAnswer: facts: Input should be a valid list"
    ) in box
    assert "sk-chat-secret-777" not in page
    # The counts are shown, never offered as settings to edit.
    assert 'name="llm_error_count"' not in page


def test_settings_take_a_model_server_on_a_plain_host_name(staff_client):
    # Containers on one network reach each other as http://ollama:11434.
    response = staff_client.post(
        "/memory/settings/",
        settings_data(
            llm_url="http://ollama:11434/v1",
            llm_model="llama3.1:8b",
            embeddings_url="http://embedder:8080/v1",
        ),
    )

    assert response.status_code == 302
    config = memory_config_get()
    assert (config.llm_url, config.embeddings_url) == (
        "http://ollama:11434/v1",
        "http://embedder:8080/v1",
    )


@pytest.mark.parametrize(
    "url", ["ftp://ollama/v1", "ollama:11434", "http://", "http://host:99999/v1", "http://a b/v1"]
)
def test_settings_refuse_a_chat_model_url_that_is_not_http(staff_client, url):
    response = staff_client.post(
        "/memory/settings/", settings_data(llm_url=url, llm_model="llama3.1:8b")
    )

    assert response.status_code == 400
    assert "Enter an http:// or https:// URL" in html_of(response)
    assert memory_config_get().llm_url == ""


def test_settings_refuse_a_chat_model_url_without_a_model_name(staff_client):
    response = staff_client.post(
        "/memory/settings/",
        settings_data(llm_url="http://127.0.0.1:11434/v1", llm_model=""),
    )

    assert response.status_code == 400
    page = html_of(response)
    assert "Name the model the chat model URL serves" in page
    # The box tells what is stored, not what the refused form held.
    assert "offline: no chat model URL is set" in chat_model_box(page)
    assert memory_config_get().llm_url == ""


def test_a_fact_page_and_the_list_say_who_said_it_and_when(owner, owner_client):
    fact = fact_create(
        actor=Actor(user=owner),
        data={
            "content": "We called the puppy Biscuit",
            "speaker": "Caroline",
            "session_id": "chat-7",
            "occurred_at": "2023-05-08T13:56:00Z",
        },
    ).fact
    page = owner_client.get(f"/memory/{fact.pk}/").content.decode()
    assert "Said by</dt><dd>Caroline" in page
    assert "2023-05-08 13:56 · session chat-7" in page
    listing = owner_client.get("/memory/").content.decode()
    assert '<span class="muted">Caroline:</span>' in listing


def test_staff_tune_a_ranking_stage(staff_client):
    response = staff_client.post(
        "/memory/settings/", settings_data(recall_tuning='{"weight_time": 0.3}')
    )
    assert response.status_code in (200, 302)
    assert memory_config_get().recall_tuning == {"weight_time": 0.3}


def test_a_fact_page_names_the_agent_that_wrote_it(owner, teammate, team, owner_client, make_token):
    token, _ = make_token(teammate, name="ci-bot")
    shared = {"visibility": "team", "team": team.pk}

    def write(content: str, token=None, **data: object) -> Fact:
        actor = Actor(user=teammate, token=token)
        return fact_create(actor=actor, data={"content": content, **shared, **data}).fact

    def origin(fact: Fact) -> str:
        page = owner_client.get(f"/memory/{fact.pk}/").content.decode()
        return re.search(r"<dt>Origin</dt><dd>(.*?)</dd>", page, re.S).group(1)

    written = write("The nightly build publishes to S3", token)
    extracted = write("Deploys wait for the canary", token, source="extracted")
    stated = write("Bob reviews on Mondays")
    assert origin(written) == "Written by agent ci-bot (bob&#x27;s token) · Explicit"
    assert origin(extracted) == "Extracted by agent ci-bot (bob&#x27;s token) · Extracted"
    assert origin(stated) == "Stated by the user · Explicit"
    # A repeat by someone else merges: the agent wrote it first.
    write("the nightly build publishes to s3!")
    expected = "Merged; first written by agent ci-bot (bob&#x27;s token) · Explicit"
    assert origin(written) == expected


def test_a_refused_settings_form_sums_up_its_errors_at_the_top(staff_client):
    response = staff_client.post(
        "/memory/settings/", settings_data(recall_max_items=0, dedupe_similarity=2)
    )
    assert response.status_code == 400
    page = html_of(response)
    summary = page[
        page.index('id="settings-errors"') : page.index("</ul>", page.index('id="settings-errors"'))
    ]
    assert page.index('id="settings-errors"') < page.index("<fieldset")
    assert "Nothing was saved" in summary
    assert 'href="#id_recall_max_items"' in summary and 'href="#id_dedupe_similarity"' in summary
    assert memory_config_get().recall_max_items == 8
