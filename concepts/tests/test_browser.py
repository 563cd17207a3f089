"""The Knowledge graph page in a real browser (Debian's Chromium, headless): the graph
drawn with Cytoscape.js, zoom, hover highlighting, the entity panel and its links to
source facts, a click adding an entity's neighbours, the opening view of a graph of
1,000 facts (focused, no two labels shown overlapping) and panning a large graph."""

import random
import time

import pytest

from concepts.tests import graph_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

READY = "#graph-view[data-ready=true]"
SETTLED = "() => !window.conceptGraph.settling && !window.conceptGraph.cy.animated()"


def node_ref(page, name: str) -> str:
    return page.evaluate(
        "name => window.conceptGraph.cy.nodes().filter(n => n.data('name') === name)[0].id()",
        name,
    )


def position(page, ref: str) -> tuple[float, float]:
    point = page.evaluate("ref => window.conceptGraph.screenPosition(ref)", ref)
    return point["x"], point["y"]


def shown(page) -> int:
    return int(page.locator("#graph-view").get_attribute("data-nodes"))


def label_overlaps(page) -> tuple[int, list[dict]]:
    """The labels shown, as the library lays them out on screen, and how many pairs of
    them overlap."""
    page.wait_for_function(SETTLED)
    boxes = page.evaluate("() => window.conceptGraph.labelBoxes()")
    overlaps = sum(
        1
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]
    )
    return overlaps, boxes


def test_the_graph_is_drawn_zoomed_highlighted_and_leads_to_its_source_facts(
    page, live_server, login, owner, remember
):
    remember(owner, "The billing service depends on Ledgerd.")
    source = remember(owner, "Ledgerd runs on Postgres.")
    remember(owner, "Grafana uses Prometheus.")
    login(owner)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    page.click("nav >> text=Knowledge graph")
    view = page.locator("#graph-view")
    page.wait_for_selector(READY)
    page.wait_for_selector("#graph-view[data-first-draw]")
    assert view.get_attribute("data-nodes") == "5"
    assert view.get_attribute("data-edges") == "3"
    assert "Showing 5 entities and 3 relations" in page.locator("#graph-status").inner_text()
    # The library drew on its canvases, and every label fits.
    assert page.locator("#graph-view canvas").count() >= 1
    overlaps, boxes = label_overlaps(page)
    assert overlaps == 0 and len(boxes) >= 3

    # Scroll to zoom in, and out again past where it began.
    fitted = page.evaluate("() => window.conceptGraph.cy.zoom()")
    box = view.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -200)
    page.wait_for_function(f"() => window.conceptGraph.cy.zoom() > {fitted}")
    for _ in range(4):
        page.mouse.wheel(0, 200)
    page.wait_for_function(f"() => window.conceptGraph.cy.zoom() < {fitted}")
    page.click("#graph-fit")
    page.wait_for_function(SETTLED)

    # Hover: the node and its neighbours are highlighted, nothing else.
    ledgerd, postgres = node_ref(page, "Ledgerd"), node_ref(page, "Postgres")
    billing, grafana = node_ref(page, "billing service"), node_ref(page, "Grafana")
    page.mouse.move(*position(page, ledgerd))
    page.wait_for_function(
        f"() => document.querySelector('#graph-view').dataset.hover === '{ledgerd}'"
    )
    highlighted = set(view.get_attribute("data-highlighted").split(","))
    assert highlighted == {ledgerd, postgres, billing}
    assert grafana not in highlighted

    # Click: the panel shows its relations, each with the facts behind it.
    page.mouse.click(*position(page, ledgerd))
    panel = page.locator("#graph-panel")
    panel.locator(".graph-entity h2").wait_for()
    assert panel.locator("h2").inner_text() == "Ledgerd"
    assert "runs_on" in panel.inner_text() and "depends_on" in panel.inner_text()
    fact = panel.locator(".graph-relations > li:has-text('runs_on') a.source-fact")
    assert fact.inner_text() == "Ledgerd runs on Postgres."
    fact.click()
    page.wait_for_url(f"{live_server.url}/memory/{source.pk}/")
    assert "Ledgerd runs on Postgres." in page.content()
    assert errors == []


def test_the_search_box_opens_a_neighbourhood(page, live_server, login, owner, remember):
    remember(owner, "The billing service depends on Ledgerd.")
    remember(owner, "Ledgerd runs on Postgres.")
    remember(owner, "Grafana uses Prometheus.")
    login(owner)
    page.goto(f"{live_server.url}/graph/")
    page.wait_for_selector(READY)

    page.fill("#graph-search", "Postgres")
    page.select_option("#graph-hops", "1")
    page.click("#graph-controls button[type=submit]")

    page.wait_for_selector("#graph-view[data-nodes='2']")
    page.locator("#graph-panel h2:has-text('Postgres')").wait_for()
    # A link to the page may open on an entity.
    page.goto(f"{live_server.url}/graph/?center=Grafana&hops=1")
    page.locator("#graph-panel h2:has-text('Grafana')").wait_for()
    assert shown(page) == 2


def test_the_opening_view_of_1000_facts_is_focused_readable_and_grows_on_click(
    page, live_server, login, owner
):
    from concepts.models import Entity, Triple

    assert graph_world.build(owner) == 1000
    total = Entity.objects.count()
    login(owner)
    began = time.monotonic()
    page.goto(f"{live_server.url}/graph/")
    page.wait_for_selector("#graph-view[data-first-draw]")
    waited = (time.monotonic() - began) * 1000
    first_draw = int(page.locator("#graph-view").get_attribute("data-first-draw"))

    # A focused view: the most mentioned entities, not all of them; none of the labels
    # shown overlaps another, and there are enough of them to read the graph by.
    opening = shown(page)
    assert 30 <= opening < total
    overlaps, boxes = label_overlaps(page)
    print(
        f"\nopening view of 1,000 facts ({total} entities): {opening} entities shown, "
        f"{len(boxes)} labels, {overlaps} label overlaps, first draw {first_draw} ms "
        f"after navigation ({waited:.0f} ms as the test waited)"
    )
    assert overlaps == 0
    assert len(boxes) >= 25
    assert all(b["y2"] - b["y1"] >= 10 for b in boxes)  # readable, not shrunk to fit
    view = page.locator("#graph-view").bounding_box()
    assert all(b["x2"] > 0 and b["x1"] < view["width"] for b in boxes)

    # Zoomed in, labels keep their size on screen and still never overlap.
    tallest = max(b["y2"] - b["y1"] for b in boxes)
    page.evaluate(
        "() => { const cy = window.conceptGraph.cy;"
        " cy.zoom({level: cy.zoom() * 2.5, renderedPosition: {x: 400, y: 300}}); }"
    )
    page.wait_for_timeout(1000)
    overlaps, zoomed = label_overlaps(page)
    assert overlaps == 0 and zoomed
    assert max(b["y2"] - b["y1"] for b in zoomed) <= 1.6 * tallest
    page.evaluate("() => window.conceptGraph.cy.zoom(window.conceptGraph.cy.zoom() / 2.5)")
    page.wait_for_timeout(500)

    # A click on an entity with neighbours not yet shown adds them.
    refs = page.evaluate("() => window.conceptGraph.cy.nodes().map(n => n.id())")
    labelled = [b["ref"] for b in boxes]
    ids = dict(Entity.objects.filter(ref__in=refs).values_list("ref", "pk"))
    inside = set(ids.values())
    reaching = {
        s
        for s, o in Triple.objects.filter(subject_id__in=inside).values_list(
            "subject_id", "object_id"
        )
        if o not in inside
    }
    target = next(ref for ref in labelled if ids[ref] in reaching)
    page.mouse.click(*position(page, target))
    page.wait_for_function(
        f"() => Number(document.querySelector('#graph-view').dataset.nodes) > {opening}"
    )
    name = page.evaluate("ref => window.conceptGraph.cy.getElementById(ref).data('name')", target)
    page.locator(f"#graph-panel h2:has-text('{name}')").wait_for()
    grown = shown(page)
    overlaps, boxes = label_overlaps(page)
    print(f"a click on {name}: {grown - opening} entities added, {overlaps} label overlaps")
    assert overlaps == 0
    # The panel lists each relation with the facts behind it.
    panel = page.locator("#graph-panel")
    relations = panel.locator(".graph-relations > li").count()
    assert relations and panel.locator(".graph-relation-facts a.source-fact").count() >= relations

    # The search focuses an entity: its neighbourhood, its panel.
    page.fill("#graph-search", "Project Atlas")
    page.select_option("#graph-hops", "1")
    page.click("#graph-controls button[type=submit]")
    page.locator("#graph-panel h2:has-text('Project Atlas')").wait_for()
    atlas = node_ref(page, "Project Atlas")
    assert page.locator("#graph-view").get_attribute("data-selected") == atlas
    assert label_overlaps(page)[0] == 0
    # And Most mentioned goes back to the opening view.
    page.click("#graph-top")
    page.wait_for_function(
        f"() => document.querySelector('#graph-view').dataset.nodes == {opening}"
    )


def test_panning_a_large_graph_stays_above_30_frames_a_second(page, live_server, login, owner):
    from concepts.services import concept_graph_sync
    from facts.models import Fact

    rng = random.Random(5)
    names = [f"svc{n:04d}x" for n in range(2000)]
    statements = {f"{names[n]} uses {names[(n + 1) % 2000]}." for n in range(2000)}
    while len(statements) < 5000:
        statements.add(f"{rng.choice(names)} uses {rng.choice(names)}.")
    Fact.objects.bulk_create(Fact(owner=owner, content=s) for s in sorted(statements))
    concept_graph_sync()
    login(owner)
    page.goto(f"{live_server.url}/graph/")
    page.wait_for_selector(READY, timeout=120_000)
    page.evaluate("() => window.conceptGraph.load({limit: 2000})")
    page.wait_for_selector("#graph-view[data-nodes='2000']", timeout=120_000)
    assert int(page.locator("#graph-view").get_attribute("data-edges")) >= 4900

    # Drag the background for two seconds, counting the frames the library draws.
    page.wait_for_function(SETTLED)
    view = page.locator("#graph-view").bounding_box()
    empty = page.evaluate(
        """() => {
            const cy = window.conceptGraph.cy, el = cy.container();
            const w = el.clientWidth, h = el.clientHeight;
            for (let y = 10; y < h; y += 20) for (let x = 10; x < w; x += 20) {
                const hit = cy.elements().some(e => {
                    const b = e.renderedBoundingBox();
                    return x > b.x1 - 4 && x < b.x2 + 4 && y > b.y1 - 4 && y < b.y2 + 4;
                });
                if (!hit) return {x, y};
            }
            return null;
        }"""
    )
    x, y = view["x"] + empty["x"], view["y"] + empty["y"]
    # The page's frames while the drag goes on (a frame is late while the library
    # draws): each move pans the graph, drawn in the next frame.
    page.evaluate(
        """() => { window.frames = 0; window.drawn = 0;
                   window.conceptGraph.cy.on('render', () => window.drawn++);
                   (function count() { window.frames++; requestAnimationFrame(count); })(); }"""
    )
    page.mouse.move(x, y)
    page.mouse.down()
    began, step = time.monotonic(), 0
    while time.monotonic() - began < 2:
        step += 1
        page.mouse.move(x + 8 * (step % 40), y + 2 * (step % 40))
    page.mouse.up()
    elapsed = time.monotonic() - began
    fps, drawn = page.evaluate("() => [window.frames, window.drawn]")
    fps /= elapsed
    print(f"{step} moves, {drawn} frames drawn")
    print(f"panning 2,000 nodes and 5,000 edges: {fps:.0f} frames/s")
    assert fps >= 30, fps
