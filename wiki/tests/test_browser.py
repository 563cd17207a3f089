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


def test_a_teammate_edits_a_team_page_and_the_owner_restores_the_old_text(
    page, live_server, login, owner, teammate, team
):
    from teams.services import Actor
    from wiki.services import wiki_page_upsert

    wiki_page_upsert(
        actor=Actor(user=owner),
        title="Team runbook",
        content="# Failover\n\nPromote the replica.",
        visibility="team",
    )
    login(teammate)
    page.click("nav.nav >> text=Wiki")
    page.click("#page-results >> text=Team runbook")
    assert "Members of Platform may edit this team page" in page.locator("#editors").inner_text()
    page.click("a.button:has-text('Edit')")
    assert page.locator("#id_visibility").is_disabled()
    page.locator("#id_content").fill("# Failover\n\nPromote the **standby** replica.")
    page.locator("#id_content").press("End")  # the preview follows key presses
    page.wait_for_selector("#preview strong:has-text('standby')")
    page.click("button:has-text('Save')")
    page.wait_for_selector(".wiki-body strong:has-text('standby')")
    page.click("text=History")
    assert "bob" in page.locator(".wiki-history").inner_text()

    page.context.clear_cookies()  # sign the teammate out
    login(owner)
    page.click("nav.nav >> text=Wiki")
    page.click("#page-results >> text=Team runbook")
    page.click("text=History")
    page.click("button[form=restore-1]")
    page.wait_for_selector("text=Restored r1 as r3.")
    assert "standby" not in page.locator(".wiki-body").inner_text()
