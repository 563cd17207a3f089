"""The dashboard in a real browser (Debian's Chromium, headless)."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_login_shows_the_dashboard_with_navigation(page, live_server, login, owner):
    page.goto(f"{live_server.url}/")
    assert page.url.startswith(f"{live_server.url}/login/")
    login(owner)
    assert page.locator("h1").inner_text() == "Memory at a glance"
    assert "alice" in page.locator("header").inner_text()
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


def test_a_new_token_is_copied_to_the_clipboard_with_ready_agent_settings(
    page, live_server, login, owner
):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    login(owner)
    page.click("nav.nav >> text=Agents")
    page.fill("#id_name", "copy-bot")
    page.click("text=Create token")
    secret = page.locator("#new-secret").inner_text()
    assert secret.startswith("mh_")

    page.get_by_role("button", name="Copy token").click()
    page.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == secret

    settings_block = page.locator("#new-token-env").inner_text()
    assert settings_block == f"MEMORYHUB_URL={live_server.url}\nMEMORYHUB_TOKEN={secret}"
    curl = page.locator("#new-token-curl").inner_text()
    assert f"'{live_server.url}/api/recall'" in curl and f"Bearer {secret}" in curl
    page.get_by_role("button", name="Copy command").click()
    page.wait_for_function("document.activeElement.textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == curl

    # Shown once: the page opened again has neither the secret nor the snippets.
    page.reload()
    assert secret not in page.content()
    assert page.locator("#new-token-env").count() == 0


def test_without_the_clipboard_the_copy_button_selects_the_token(page, live_server, login, owner):
    login(owner)
    page.goto(f"{live_server.url}/agents/")
    page.fill("#id_name", "no-clipboard-bot")
    page.click("text=Create token")
    secret = page.locator("#new-secret").inner_text()
    page.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    page.get_by_role("button", name="Copy token").click()
    page.get_by_role("button", name="Selected: press Ctrl+C to copy").wait_for()
    assert page.evaluate("window.getSelection().toString()") == secret


# --- Content-Security-Policy --------------------------------------------------------------

# Installed before any page script: every violation the browser reports is kept.
CSP_LISTENER = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} at ` +
      `${event.sourceFile}:${event.lineNumber}`
  );
});
"""
READ_VIOLATIONS = """async () => {
  await new Promise((done) => setTimeout(done, 50));  // reports are queued as tasks
  const handlers = [...document.querySelectorAll("*")].flatMap((el) =>
    [...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${el.tagName} ${a.name}`)
  );
  return [...window.cspViolations, ...handlers.map((h) => `inline handler ${h}`)];
}"""


@pytest.fixture
def dashboard_world(staff, team, owner, settings, tmp_path) -> dict:
    from codegraph import services as codegraph_services
    from codegraph.tests import test_scan as scan_helpers
    from facts.services.create import fact_create
    from teams.models import Membership, Role
    from teams.services import Actor
    from wiki.services import wiki_page_upsert

    Membership.objects.create(user=staff, team=team, role=Role.ADMIN)
    staff.is_superuser = True  # so the admin's pages open too
    staff.save(update_fields=["is_superuser"])
    actor = Actor(user=staff)
    fact = fact_create(
        actor=actor, data={"content": "Release trains leave on Tuesdays", "tags": ["ops"]}
    ).fact
    wiki = wiki_page_upsert(actor=actor, title="Runbook", content="# Steps\n\n1. Page on-call")
    wiki_page_upsert(actor=actor, title="Runbook", content="# Steps\n\n1. Page the lead")
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    project = codegraph_services.code_project_register(actor=actor, name="shop", path=str(root))
    codegraph_services.code_project_scan(project_id=project.pk)
    page_id = wiki.page.pk
    return {
        "paths": [
            "/", "/memory/", "/memory/?q=release", f"/memory/{fact.pk}/", "/memory/settings/",
            "/wiki/", "/wiki/new/", "/wiki/review/", f"/wiki/{page_id}/",
            f"/wiki/{page_id}/edit/", f"/wiki/{page_id}/history/", f"/wiki/{page_id}/diff/",
            "/codegraph/", "/codegraph/search/?q=checkout", "/teams/",
            f"/teams/{team.pk}/", "/agents/", "/audit/", "/settings/", "/no-such-page/",
            "/api/docs", "/admin/", "/admin/auth/user/", f"/admin/auth/group/{team.pk}/change/",
            "/admin/teams/auditevent/",
        ],
        "fact": fact,
    }  # fmt: skip


def test_no_dashboard_page_breaks_the_content_security_policy(
    page, live_server, login, staff, dashboard_world
):
    page.context.add_init_script(CSP_LISTENER)
    console = []
    page.on("console", lambda m: console.append(m.text) if "Security Policy" in m.text else None)

    response = page.goto(f"{live_server.url}/login/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert page.evaluate(READ_VIOLATIONS) == []
    login(staff)

    found = {}
    for path in dashboard_world["paths"]:
        response = page.goto(f"{live_server.url}{path}")
        policy = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy and "unsafe" not in policy, path
        page.wait_for_load_state("load")
        if violations := page.evaluate(READ_VIOLATIONS):
            found[path] = violations
    assert found == {}
    assert console == []

    # HTMX at work (search as you type) stays within the policy too.
    page.goto(f"{live_server.url}/memory/")
    with page.expect_response(lambda r: "/memory/" in r.url and "q=trains" in r.url):
        page.locator("#id_q").press_sequentially("trains")
    assert page.evaluate(READ_VIOLATIONS) == []

    # The listener does hear a violation: an inline style added now is refused.
    page.evaluate("document.head.append(document.createElement('style'))")
    assert any(v.startswith("style-src") for v in page.evaluate(READ_VIOLATIONS))


def test_a_delete_asks_first_without_inline_script(
    page, live_server, login, staff, dashboard_world
):
    from facts.models import Fact

    fact = dashboard_world["fact"]
    login(staff)
    page.goto(f"{live_server.url}/memory/{fact.pk}/")
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("text=Delete this fact")
    page.wait_for_timeout(300)
    assert asked == ["Delete this fact? It cannot be restored."]
    assert Fact.objects.filter(pk=fact.pk).exists()

    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.click("text=Delete this fact")
    assert not Fact.objects.filter(pk=fact.pk).exists()


# --- Error pages and people -----------------------------------------------------------------


def test_a_refused_page_is_styled_and_says_why(page, live_server, login, owner):
    login(owner)
    response = page.goto(f"{live_server.url}/memory/settings/")
    assert response.status == 403
    assert page.locator("h1").inner_text() == "Not allowed"
    assert "Only staff can change the memory settings." in page.locator(".reason").inner_text()
    assert page.locator("nav.nav").is_visible()
    card = page.locator(".error-page")
    assert card.evaluate("el => getComputedStyle(el).backgroundColor") == "rgb(255, 255, 255)"
    page.click("text=Back to the dashboard")
    page.wait_for_url(f"{live_server.url}/")


def test_staff_invite_a_new_person_who_then_reads_a_team_fact(
    page, browser, live_server, login, staff, owner, team
):
    from facts.services.create import fact_create
    from teams.services import Actor

    fact_create(
        actor=Actor(user=owner),
        data={"content": "The Platform on-call phone is in the blue drawer", "visibility": "team"},
    )
    login(staff)
    page.click("nav.nav >> text=Teams")
    form = page.locator("#invite-form")
    form.locator("#id_username").fill("erin")
    form.locator("#id_email").fill("erin@example.com")
    form.locator("#id_team").select_option(label="Platform")
    form.locator("button[type=submit]").click()
    assert "erin is invited to Platform as member" in page.locator(".messages").inner_text()
    link = page.locator("#invite-link").inner_text().strip()
    assert link.startswith(f"{live_server.url}/invite/")

    erin = browser.new_context().new_page()
    erin.goto(link)
    erin.fill("#id_new_password1", "plum orchard lantern 42")
    erin.fill("#id_new_password2", "plum orchard lantern 42")
    erin.click("button[type=submit]")
    erin.wait_for_url(f"{live_server.url}/login/")
    assert "Your password is set, erin" in erin.locator(".messages").inner_text()
    erin.fill("#id_username", "erin")
    erin.fill("#id_password", "plum orchard lantern 42")
    erin.click("button[type=submit]")
    erin.wait_for_url(f"{live_server.url}/")
    erin.click("nav.nav >> text=Memory")
    assert "The Platform on-call phone is in the blue drawer" in erin.content()
    erin.context.close()
