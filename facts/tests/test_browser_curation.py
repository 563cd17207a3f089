"""Curating facts in a real browser: adding one and seeing it merge, a search that
reads a sentence, and a delete of several facts taken back with Undo, all without a
page reload."""

import re

import pytest
from playwright.sync_api import expect

from facts.models import Fact
from facts.services.create import fact_create
from teams.services import Actor

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def remember(user, content: str, **data: object) -> Fact:
    return fact_create(actor=Actor(user=user), data={"content": content, **data}).fact


def mark_page(page) -> None:
    page.evaluate("window.notReloaded = true")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.notReloaded === true")


def test_add_a_fact_then_add_it_again_and_see_it_merge(page, live_server, login, owner, team):
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    page.get_by_text("Add a fact").click()
    form = page.locator("#add-fact")
    form.get_by_label("Content").fill("The billing service is owned by Alice")
    form.get_by_label("Category").select_option("relationship")
    form.get_by_label("Tags").fill("billing, owners")
    form.get_by_label("Visibility").select_option("team")
    page.locator("#add-team").select_option(label="Platform")
    form.get_by_role("button", name="Save fact").click()
    expect(page.locator("#add-fact [role=status]")).to_contain_text(re.compile(r"Saved as #\d+"))
    fact = Fact.objects.get()
    assert (fact.category, fact.tags, fact.visibility) == (
        "relationship",
        ["billing", "owners"],
        "team",
    )
    # The list reloads with the new fact, and the form is empty again.
    expect(page.locator(f"#fact-{fact.pk}")).to_contain_text("owned by Alice")
    assert page.locator("#add-content").input_value() == ""

    page.locator("#add-content").fill("the billing service is owned by alice")
    page.locator("#add-visibility").select_option("team")
    page.locator("#add-fact").get_by_role("button", name="Save fact").click()
    expect(page.locator("#add-fact [role=status]")).to_contain_text(f"Merged into #{fact.pk}")
    assert Fact.objects.filter(status="active").count() == 1

    # Refused input is shown in the form and nothing is written.
    page.locator("#add-content").fill("   ")
    page.locator("#add-fact").get_by_role("button", name="Save fact").click()
    expect(page.locator("#add-fact .error")).to_contain_text("Content")
    assert Fact.objects.filter(status="active").count() == 1
    assert_not_reloaded(page)


def test_a_sentence_search_finds_what_its_key_words_find(page, live_server, login, owner):
    owner_fact = remember(owner, "Alice owns billing")
    remember(owner, "Deploys happen on Tuesday")
    remember(owner, "The staging database lives on host orion")
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    page.locator("#id_q").fill("who owns billing")
    results = page.locator("#fact-results")
    expect(results).to_contain_text("best matches first, by words and meaning")
    expect(results.locator("tbody tr").first).to_have_id(f"fact-{owner_fact.pk}")
    expect(results.locator(f"#fact-{owner_fact.pk} mark")).to_have_text(["owns", "billing"])

    page.locator("#id_q").fill("who is responsible for invoices")
    expect(results.locator("tbody tr").first).to_have_id(f"fact-{owner_fact.pk}")

    page.locator("#id_mode").select_option("exact")
    expect(results).to_contain_text("No facts match.")
    assert "mode=exact" in page.url
    assert_not_reloaded(page)


def test_delete_several_facts_then_undo(page, live_server, login, owner):
    kept = remember(owner, "Backups run nightly at 02:00")
    doomed = [
        remember(owner, "The old VPN endpoint is vpn1.example.org"),
        remember(owner, "Lunch is at noon on Fridays"),
    ]
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    for fact in doomed:
        page.get_by_label(f"Select fact #{fact.pk}").check()
    expect(page.locator("[data-selected-count]")).to_have_text("2 selected")
    page.locator("#bulk-action").select_option("delete")
    page.locator("#bulk-form").get_by_role("button", name="Apply").click()
    notice = page.locator("#memory-notice")
    expect(notice).to_contain_text("Deleted 2 facts.")
    for fact in doomed:
        expect(page.locator(f"#fact-{fact.pk}")).to_have_count(0)
    expect(page.locator(f"#fact-{kept.pk}")).to_have_count(1)
    assert not Fact.objects.filter(pk__in=[f.pk for f in doomed]).exists()

    notice.get_by_role("button", name="Undo").click()
    expect(notice).to_contain_text("Restored 2 facts.")
    for fact in doomed:
        expect(page.locator(f"#fact-{fact.pk}")).to_contain_text(fact.content)
    assert Fact.objects.count() == 3

    # Select all on the page, archive, and the counts chart follows.
    page.get_by_label("Select all on this page").check()
    expect(page.locator("[data-selected-count]")).to_have_text("3 selected")
    page.locator("#bulk-action").select_option("archive")
    page.locator("#bulk-form").get_by_role("button", name="Apply").click()
    expect(notice).to_contain_text("Archived 3 facts.")
    # The list shows active facts: the archived ones leave it, without a reload.
    expect(page.locator(f"#fact-{kept.pk}")).to_have_count(0)
    assert set(Fact.objects.values_list("status", flat=True)) == {"archived"}
    assert_not_reloaded(page)
    page.goto(f"{live_server.url}/memory/?status=archived")
    expect(page.locator(f"#fact-{kept.pk}")).to_contain_text("Archived")


def test_tags_edited_inline_and_escape_cancels(page, live_server, login, owner):
    fact = remember(owner, "Kafka keeps seven days of events", tags=["kafka"])
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    row = page.locator(f"#fact-{fact.pk}")
    row.get_by_role("link", name="edit tags").click()
    field = row.get_by_label(re.compile("Tags of fact"))
    expect(field).to_be_focused()
    field.fill("kafka, retention")
    row.get_by_role("button", name="Save tags").click()
    expect(row.locator(".tags")).to_contain_text("retention")
    assert Fact.objects.get(pk=fact.pk).tags == ["kafka", "retention"]
    row.get_by_role("link", name="edit tags").click()
    field = row.get_by_label(re.compile("Tags of fact"))
    expect(field).to_be_focused()  # focused once the editor has settled
    field.press("Escape")
    expect(row.get_by_role("link", name="edit tags")).to_be_visible()
    assert_not_reloaded(page)
    row.get_by_role("link", name="retention").click()
    page.wait_for_url(re.compile(r"tag=retention"))
    expect(page.locator("#fact-results tbody tr")).to_have_count(1)
