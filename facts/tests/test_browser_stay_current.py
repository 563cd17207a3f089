"""The Memory manager in a real browser stays true after inline actions: a delete updates
the count and the empty state, focus lands where the user can carry on, Escape cancels an
inline edit, and a header sort moves the Sort control. All without a page reload."""

import pytest

from facts.models import Fact
from facts.services.create import fact_create
from teams.services import Actor

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def remember(user, content: str, **data: object) -> Fact:
    return fact_create(actor=Actor(user=user), data={"content": content, **data}).fact


def mark_page(page) -> None:
    """Tag the window: the tag survives HTMX swaps but not a reload."""
    page.evaluate("window.notReloaded = true")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.notReloaded === true")


def delete_row(page, fact: Fact) -> None:
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{fact.pk}").get_by_role("button", name="Delete").click()


def test_deleting_facts_updates_the_count_and_ends_on_the_empty_state(
    page, live_server, login, owner
):
    first = remember(owner, "Backups run nightly at 02:00")
    second = remember(owner, "The wiki lives on host vega")
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    count = page.locator("#fact-count")
    assert count.inner_text() == "2 facts."
    assert "2 of your facts" in page.locator("#embedding-progress").inner_text()

    delete_row(page, first)
    page.wait_for_selector("#fact-count >> text=1 fact.")
    page.wait_for_selector("#embedding-progress >> text=of 1 of your facts")
    page.wait_for_selector("#memory-chart h2 >> text=(1)")
    # The deleted row's button is gone: focus waits on the count, not at the page top.
    page.wait_for_function("document.activeElement.id === 'fact-count'")

    delete_row(page, second)
    page.wait_for_selector("#fact-count >> text=0 facts.")
    page.wait_for_selector("#fact-results >> text=No facts yet")
    assert_not_reloaded(page)
    assert not Fact.objects.filter(owner=owner).exists()


def test_escape_cancels_an_inline_edit_and_focus_follows_it(page, live_server, login, owner):
    fact = remember(owner, "The staging database lives on host orion")
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    page.locator(f"#fact-{fact.pk}").get_by_role("link", name="Edit").click()
    editor = page.locator(f"#fact-{fact.pk}.editing textarea")
    editor.wait_for()
    page.wait_for_function("document.activeElement.tagName === 'TEXTAREA'")
    page.keyboard.type(" and on host vega")  # typed into the editor, which has the focus

    page.keyboard.press("Escape")
    page.wait_for_selector(f"#fact-{fact.pk}:not(.editing)")
    assert "host orion" in page.locator(f"#fact-{fact.pk}").inner_text()
    assert "vega" not in page.locator(f"#fact-{fact.pk}").inner_text()
    page.wait_for_function(
        f"document.activeElement.closest('#fact-{fact.pk}') !== null"
        " && document.activeElement.textContent === 'Edit'"
    )
    assert_not_reloaded(page)
    fact.refresh_from_db()
    assert fact.content == "The staging database lives on host orion"

    # Enter on the focused Edit link opens the editor again: the keyboard carries on.
    page.keyboard.press("Enter")
    page.locator(f"#fact-{fact.pk}.editing").wait_for()


def test_a_header_sort_moves_the_sort_control_and_the_next_search_keeps_it(
    page, live_server, login, owner
):
    remember(owner, "Backups run nightly at 02:00", importance=0.2)
    remember(owner, "Backups are kept for thirty days", importance=0.9)
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    assert page.locator("#id_sort").input_value() == "newest"
    page.locator("#fact-results thead").get_by_role("link", name="Importance").click()
    page.wait_for_url("**/memory/?sort=importance")
    page.wait_for_function("document.querySelector('#id_sort').value === 'importance'")

    page.locator("#id_status").select_option("active")  # another filter: the sort stays
    page.wait_for_url("**status=active**")
    assert "sort=importance" in page.url
    assert page.locator("#id_sort").input_value() == "importance"
    assert_not_reloaded(page)
