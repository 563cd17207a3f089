"""Every dashboard page, checked by axe-core (from its npm package, installed by
``make test``) in a real browser: no serious or critical accessibility violation, and
nothing wider than a 390 px phone screen."""

from pathlib import Path

import pytest

from conftest import REPO_ROOT
from tests.test_crawl import read, urls, world  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

AXE = REPO_ROOT / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed: run make test (npm ci in {AXE.parents[2]})")
    return Path(AXE).read_text()


def test_no_page_has_a_serious_accessibility_violation_or_overflows_a_phone(
    page,
    live_server,
    login,
    staff,
    world,  # noqa: F811
    client,
):
    client.force_login(staff)
    # Whole pages (what HTMX swaps into one is checked as part of it).
    pages = [
        url
        for url in urls(world)
        if (found := read(client, url))[:2] == (200, "text/html; charset=utf-8")
        and "<html" in found[2]
    ]
    source = axe_source()
    login(staff)
    found: dict[str, list[str]] = {}
    for url in pages:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{live_server.url}{url}")
            page.wait_for_load_state("load")
            if width == 390:
                if page.evaluate("document.documentElement.scrollWidth > innerWidth + 1"):
                    found.setdefault(url, []).append("wider than 390 px")
                continue
            page.evaluate(source)
            violations = page.evaluate(
                "async () => (await axe.run(document, {resultTypes: ['violations']}))"
                ".violations.map(v => [v.impact, v.id, v.nodes.length,"
                " v.nodes[0].target.join(' ')])"
            )
            serious = [f"{v[1]} x{v[2]} ({v[3]})" for v in violations if v[0] in SERIOUS]
            if serious:
                found.setdefault(url, []).extend(serious)
    assert len(pages) >= 20 and found == {}, found
