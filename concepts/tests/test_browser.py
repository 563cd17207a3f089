"""The Knowledge graph page in a real browser (Debian's Chromium, headless): nodes drawn,
zoom, hover highlighting, the entity panel and its links to source facts, and panning a
large graph smoothly."""

import random

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def node_ref(page, name: str) -> str:
    return page.evaluate("name => window.conceptGraph.nodes.find(n => n.name === name).ref", name)


def position(page, entity: str) -> tuple[float, float]:
    point = page.evaluate("id => window.conceptGraph.screenPosition(id)", entity)
    return point["x"], point["y"]


def test_the_graph_is_drawn_zoomed_highlighted_and_leads_to_its_source_facts(
    page, live_server, login, owner, remember
):
    remember(owner, "The billing service depends on Ledgerd.")
    source = remember(owner, "Ledgerd runs on Postgres.")
    remember(owner, "Grafana uses Prometheus.")
    login(owner)

    page.click("nav >> text=Knowledge graph")
    canvas = page.locator("#graph-canvas")
    page.wait_for_selector("#graph-canvas[data-ready=true]")
    assert canvas.get_attribute("data-nodes") == "5"
    page.wait_for_function("window.conceptGraph.frames > 0")
    # Something is painted: the canvas is not blank.
    assert page.evaluate(
        """() => { const c = document.querySelector('#graph-canvas');
                   const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                   for (let i = 3; i < d.length; i += 4) if (d[i]) return true;
                   return false; }"""
    )
    assert canvas.get_attribute("data-edges") == "3"
    assert "Showing 5 entities and 3 relations" in page.locator("#graph-status").inner_text()

    # Scroll to zoom in, and out again past where it began (so every node is in view).
    fitted = page.evaluate("() => window.conceptGraph.scale")
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -200)
    page.wait_for_function("Number(document.querySelector('#graph-canvas').dataset.scale) > 0")
    zoomed = float(canvas.get_attribute("data-scale"))
    assert zoomed > fitted
    page.mouse.wheel(0, 400)
    page.wait_for_function(
        f"Number(document.querySelector('#graph-canvas').dataset.scale) < {fitted}"
    )

    # Hover: the node and its neighbours are highlighted, nothing else.
    ledgerd, postgres = node_ref(page, "Ledgerd"), node_ref(page, "Postgres")
    billing, grafana = node_ref(page, "billing service"), node_ref(page, "Grafana")
    page.mouse.move(*position(page, ledgerd))
    page.wait_for_function(f"document.querySelector('#graph-canvas').dataset.hover === '{ledgerd}'")
    highlighted = set(canvas.get_attribute("data-highlighted").split(","))
    assert highlighted == {ledgerd, postgres, billing}
    assert grafana not in highlighted

    # Click: the panel shows its relations; a relation links to its source fact.
    page.mouse.click(*position(page, ledgerd))
    panel = page.locator("#graph-panel")
    panel.locator(".graph-entity h2").wait_for()
    assert panel.locator("h2").inner_text() == "Ledgerd"
    assert "runs_on" in panel.inner_text() and "depends_on" in panel.inner_text()
    panel.locator("li:has-text('runs_on') a.source-fact").click()
    page.wait_for_url(f"{live_server.url}/memory/{source.pk}/")
    assert "Ledgerd runs on Postgres." in page.content()


def test_the_search_box_opens_a_neighbourhood(page, live_server, login, owner, remember):
    remember(owner, "The billing service depends on Ledgerd.")
    remember(owner, "Ledgerd runs on Postgres.")
    remember(owner, "Grafana uses Prometheus.")
    login(owner)
    page.goto(f"{live_server.url}/graph/")
    page.wait_for_selector("#graph-canvas[data-ready=true]")

    page.fill("#graph-search", "Postgres")
    page.select_option("#graph-hops", "1")
    page.click("#graph-controls button[type=submit]")

    page.wait_for_selector("#graph-canvas[data-nodes='2']")
    page.locator("#graph-panel h2:has-text('Postgres')").wait_for()


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
    page.wait_for_selector("#graph-canvas[data-ready=true]", timeout=120_000)
    page.evaluate("() => window.conceptGraph.load({limit: 2000})")
    page.wait_for_selector("#graph-canvas[data-nodes='2000']", timeout=120_000)
    assert int(page.locator("#graph-canvas").get_attribute("data-edges")) >= 4900

    # Pan for two seconds, 8 pixels every frame (past the painted margin several
    # times), counting the frames drawn.
    fps = page.evaluate(
        """() => new Promise(resolve => {
            const graph = window.conceptGraph, frames = graph.frames, began = performance.now();
            function step(now) {
                graph.tx += 8; graph.ty += 2; graph.dirty = true;
                if (now - began < 2000) requestAnimationFrame(step);
                else resolve((graph.frames - frames) / ((now - began) / 1000));
            }
            requestAnimationFrame(step);
        })"""
    )
    print(f"panning 2,000 nodes and 5,000 edges: {fps:.0f} frames/s")
    assert fps >= 30, fps
