"""The Memory manager in a real browser: inline edit, refused input, delete and Test
recall, all without a page reload."""

import pytest

from facts.models import Fact
from facts.services.create import fact_create
from teams.services import Actor

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def remember(user, content: str, **data: object) -> Fact:
    return fact_create(actor=Actor(user=user), data={"content": content, **data}).fact


def mark_page(page) -> None:
    """Tag the window: the tag survives HTMX swaps but not a reload."""
    page.evaluate("window.notReloaded = true")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.notReloaded === true")


def test_edit_a_fact_inline_then_recall_it(page, live_server, login, owner):
    fact = remember(owner, "The staging database lives on host orion", category="context")
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    row = page.locator(f"#fact-{fact.pk}")
    row.get_by_role("link", name="Edit").click()
    editing = page.locator(f"#fact-{fact.pk}.editing")
    editing.locator("textarea").fill("The staging database lives on host vega")
    editing.locator("select[name=category]").select_option("fact")
    editing.get_by_role("button", name="Save").click()
    page.wait_for_selector(f"#fact-{fact.pk}:not(.editing) >> text=host vega")
    assert "Fact" in row.inner_text()
    assert_not_reloaded(page)
    fact.refresh_from_db()
    assert fact.content == "The staging database lives on host vega"

    page.locator("#recall-query").fill("Where is the staging database?")
    page.get_by_role("button", name="Test recall").click()
    block = page.locator("#recall-block")
    block.wait_for()
    assert block.inner_text().startswith(
        "## Recalled Facts\n- [fact] The staging database lives on host vega"
    )
    assert page.locator("#recall-mode").inner_text() in ("hybrid", "keyword")
    assert page.locator(".recall-table tbody tr").count() == 1
    assert_not_reloaded(page)
    fact.refresh_from_db()
    assert fact.access_count == 0


def test_refused_edit_shows_the_reason_in_the_row_and_delete_removes_it(
    page, live_server, login, owner
):
    fact = remember(owner, "Backups run nightly at 02:00")
    login(owner)
    page.goto(f"{live_server.url}/memory/")
    mark_page(page)
    page.locator(f"#fact-{fact.pk}").get_by_role("link", name="Edit").click()
    editing = page.locator(f"#fact-{fact.pk}.editing")
    # Past the browser's own range check, as a script or an old page would send it.
    editing.locator("input[name=importance]").evaluate("el => el.removeAttribute('max')")
    editing.locator("input[name=importance]").fill("7")
    editing.get_by_role("button", name="Save").click()
    page.wait_for_selector(f"#fact-{fact.pk} .error >> text=between 0 and 1")
    fact.refresh_from_db()
    assert fact.importance == 0.5
    editing.get_by_role("link", name="Cancel").click()
    page.wait_for_selector(f"#fact-{fact.pk}:not(.editing)")

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{fact.pk}").get_by_role("button", name="Delete").click()
    page.wait_for_selector(f"#fact-{fact.pk}", state="detached")
    assert_not_reloaded(page)
    assert not Fact.objects.filter(pk=fact.pk).exists()
