"""The dashboard in a real browser (Debian's Chromium, headless)."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_shows_the_dashboard_with_navigation(page, live_server, login, owner):
    page.goto(f"{live_server.url}/")
    assert page.url.startswith(f"{live_server.url}/login/")
    login(owner)
    assert page.locator("h1").inner_text() == "Welcome, alice"
    nav = page.locator("nav.nav").inner_text()
    for item in (
        "Memory",
        "CodeGraph",
        "Wiki",
        "Knowledge graph",
        "Teams",
        "Agents",
        "Audit",
        "Settings",
    ):
        assert item in nav


def test_wrong_password_is_refused(page, live_server, owner):
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    assert "/login/" in page.url
    assert "correct username and password" in page.locator(".error").inner_text()


def test_create_and_revoke_an_agent_token_with_htmx(page, live_server, login, owner):
    login(owner)
    page.click("text=Agents")
    page.fill("#id_name", "browser-bot")
    page.click("text=Create token")
    secret = page.locator("#new-secret").inner_text()
    assert secret.startswith("mh_")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("tr:has-text('browser-bot') >> text=Revoke")
    page.wait_for_selector("tr:has-text('browser-bot') >> text=revoked")
