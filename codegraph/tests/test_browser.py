"""CodeGraph in a real browser: add a folder, scan with progress, find a symbol."""

import pytest

from . import test_scan as scan_helpers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_add_scan_and_find_a_symbol(page, live_server, login, owner, tmp_path, settings):
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    login(owner)
    page.click("nav >> text=CodeGraph")
    page.fill("#id_name", "shop")
    page.fill("#id_path", str(root))
    page.click("text=Add and scan")
    row = page.locator("tr:has-text('shop')")
    row.locator(".cg-state").filter(has_text="Done").wait_for()
    assert "5 files, 8 symbols" in row.inner_text()

    # Rescan with the button: the progress partial is swapped in and ends at Done.
    (root / "shop/more.py").write_text("def checkout():\n    pass\n")
    row.get_by_role("button", name="Scan", exact=True).click()
    page.locator(".cg-progress").filter(has_text="6/6 files").wait_for()
    assert page.locator(".cg-progress .cg-state-done").count() == 1
    assert page.locator(".cg-progress progress").get_attribute("value") == "100"

    page.fill("#cg-q", "checkout")
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_selector("#symbols >> text=shop/more.py:1")
    page.click("#symbols >> text=callers")
    page.wait_for_selector("#callers >> text=No calls found.")


def test_the_progress_bar_polls_until_a_background_scan_finishes(
    page, live_server, login, owner, tmp_path, settings
):
    from codegraph import services
    from teams.services import Actor

    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    # Queued, as a project is while it waits for a worker.
    project = services.code_project_register(actor=Actor(user=owner), name="queued", path=str(root))
    login(owner)
    page.goto(f"{live_server.url}/codegraph/")
    page.evaluate("window.notReloaded = true")
    progress = page.locator(f"#progress-{project.pk}")
    assert "Queued" in progress.inner_text()
    assert progress.get_attribute("hx-trigger") == "every 1s"
    assert "not scanned yet" in page.locator(f"#languages-{project.pk}").inner_text()
    assert page.locator("#scan-banner").inner_text() == "Scanning queued…"
    services.code_project_scan(project_id=project.pk)  # the "worker" runs it now
    page.locator(f"#progress-{project.pk} .cg-state-done").wait_for()
    assert "5/5 files" in page.locator(f"#progress-{project.pk}").inner_text()
    assert page.locator(f"#progress-{project.pk}").get_attribute("hx-trigger") is None
    # The poll's last swap brought the rest of the page along: languages and banner.
    assert "5 files, 8 symbols" in page.locator(f"#languages-{project.pk}").inner_text()
    assert "not scanned yet" not in page.locator(f"#languages-{project.pk}").inner_text()
    assert page.locator("#scan-banner").inner_text() == "queued is scanned: 5 files, 8 symbols."
    assert page.evaluate("window.notReloaded === true")
