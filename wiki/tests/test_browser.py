"""The wiki in a real browser: write with the editor, preview, save, search, history."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_write_preview_save_search_and_open_history(page, live_server, login, owner):
    login(owner)
    page.click("nav.nav >> text=Wiki")
    page.click("text=New page")
    page.fill("#id_title", "Browser runbook")
    page.fill("#id_tags", "ops")
    page.locator("#id_content").press_sequentially("# Restart\n\nRun **zebrafish** now.")
    # The preview is rendered on the server through the same sanitiser.
    page.wait_for_selector("#preview h1:has-text('Restart')")
    assert page.locator("#preview strong").inner_text() == "zebrafish"
    page.click("button:has-text('Save')")
    page.wait_for_selector("h1:has-text('Browser runbook')")
    assert page.locator(".wiki-body strong").inner_text() == "zebrafish"

    page.click("nav.nav >> text=Wiki")
    page.locator("#id_q").press_sequentially("zebrafish")
    page.wait_for_selector("#page-results mark:has-text('zebrafish')")
    page.click("#page-results >> text=Browser runbook")
    page.click("text=History")
    page.wait_for_selector("h1:has-text('History of Browser runbook')")
    assert "r1" in page.locator(".wiki-history").inner_text()
