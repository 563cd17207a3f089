"""The Knowledge graph page: the graph data it draws, the entity panel, the build button
and the alias table, all through the access rule."""

import pytest

from concepts.models import Alias, Entity
from memoryhub.engine.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(owner, outsider, team, remember):
    remember(owner, "The billing service depends on Ledgerd.", visibility="team")
    remember(owner, "Ledgerd runs on Postgres.", visibility="team")
    remember(owner, "Ledgerd calls Nightjar.", visibility="private")
    remember(outsider, "Grafana uses Prometheus.", visibility="private")


def names(body) -> set[str]:
    return {n["name"] for n in body["nodes"]}


def test_the_page_is_linked_from_the_navigation_and_counts_the_visible_graph(world, owner_client):
    page = owner_client.get("/graph/").content.decode()
    assert 'href="/graph/" aria-current="page">Knowledge graph</a>' in page
    assert "4 entities, 3 relations from 3 facts" in page
    assert 'src="/static/js/graph.js"' in page


def test_the_memory_manager_shows_the_graph_card_with_the_visible_counts(
    world, owner_client, teammate_client, outsider_client
):
    manager = owner_client.get("/memory/").content.decode()
    assert 'id="graph-stats"' in manager and 'hx-get="/graph/stats/"' in manager
    card = owner_client.get("/graph/stats/").content.decode()
    assert "<strong>4</strong> entities and <strong>3</strong> relations from 3" in card
    assert 'href="/graph/?type=' in card
    # The teammate sees the team facts' part of it; the outsider only their own.
    assert "<strong>3</strong> entities and <strong>2</strong> relations" in (
        teammate_client.get("/graph/stats/").content.decode()
    )
    outsider = outsider_client.get("/graph/stats/").content.decode()
    assert "<strong>2</strong> entities and <strong>1</strong> relation from 1" in outsider
    assert "Ledgerd" not in outsider


def test_a_link_to_the_page_chooses_the_type_shown(world, owner_client):
    page = owner_client.get("/graph/", {"type": "tool", "relation": "runs_on"}).content.decode()
    assert '<option value="tool" selected>' in page


def test_the_graph_card_needs_a_login(client):
    answer = client.get("/graph/stats/")
    assert answer.status_code == 302 and "/login/" in answer["Location"]


def test_the_graph_data_holds_positions_of_visible_nodes_only(
    world, owner_client, teammate_client, outsider_client
):
    mine = owner_client.get("/graph/data/").json()
    assert names(mine) == {"billing service", "Ledgerd", "Postgres", "Nightjar"}
    assert all(-1.01 <= n["x"] <= 1.01 and -1.01 <= n["y"] <= 1.01 for n in mine["nodes"])
    assert len(mine["edges"]) == 3
    assert names(teammate_client.get("/graph/data/").json()) == {
        "billing service",
        "Ledgerd",
        "Postgres",
    }
    theirs = outsider_client.get("/graph/data/").json()
    assert names(theirs) == {"Grafana", "Prometheus"}


def test_a_neighbourhood_is_the_entities_within_n_hops(world, owner_client):
    near = owner_client.get("/graph/data/", {"center": "Postgres", "hops": 1}).json()
    assert names(near) == {"Postgres", "Ledgerd"}
    assert near["center"] == Entity.objects.get(key="postgres").ref
    wider = owner_client.get("/graph/data/", {"center": "Postgres", "hops": 2}).json()
    assert names(wider) == {"Postgres", "Ledgerd", "billing service", "Nightjar"}
    typed = owner_client.get("/graph/data/", {"relation": "runs_on"}).json()
    assert [(e["r"], e["w"]) for e in typed["edges"]] == [("runs_on", 1)]


def test_a_neighbourhood_may_be_asked_for_by_ref_as_a_click_does(
    world, owner_client, outsider_client
):
    postgres = Entity.objects.get(key="postgres")
    near = owner_client.get("/graph/data/", {"ref": postgres.ref, "hops": 1}).json()
    assert names(near) == {"Postgres", "Ledgerd"} and near["center"] == postgres.ref
    hidden = outsider_client.get("/graph/data/", {"ref": postgres.ref, "hops": 1})
    assert hidden.status_code == 404
    assert owner_client.get("/graph/data/", {"ref": postgres.pk}).status_code == 404


def test_the_layout_packs_components_side_by_side_within_the_square():
    from concepts.selectors import _layout

    ring = [(n, (n + 1) % 12, 1) for n in range(12)]  # one component of twelve
    pairs = [(100 + n, 101 + n, 1) for n in range(0, 20, 2)]  # ten of two
    nodes = list(range(12)) + list(range(100, 120)) + [200, 201, 202]  # three alone
    placed = _layout(nodes, ring + pairs)
    assert placed == _layout(nodes, ring + pairs)  # the same for the same graph
    assert set(placed) == set(nodes)
    xs, ys = [x for x, _ in placed.values()], [y for _, y in placed.values()]
    assert min(xs) >= -1 and max(xs) <= 1 and min(ys) >= -1 and max(ys) <= 1
    assert max(max(xs) - min(xs), max(ys) - min(ys)) == pytest.approx(2)

    def box(ids):
        return (min(placed[i][0] for i in ids), min(placed[i][1] for i in ids),
                max(placed[i][0] for i in ids), max(placed[i][1] for i in ids))  # fmt: skip

    # No component's box meets another's, and the pairs and single nodes are not flung
    # to the corners: the whole is about as wide as it is tall.
    boxes = [box(range(12))] + [box((100 + n, 101 + n)) for n in range(0, 20, 2)]
    boxes += [box((n,)) for n in (200, 201, 202)]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1]
    assert 0.4 < (max(ys) - min(ys)) / (max(xs) - min(xs)) < 2.5


def test_bad_graph_parameters_answer_400_with_a_reason(world, owner_client, outsider_client):
    for params in ({"limit": 10**9}, {"hops": 9, "center": "Postgres"}, {"type": "planet"},
                   {"limit": "many"}):  # fmt: skip
        response = owner_client.get("/graph/data/", params)
        assert response.status_code == 400, params
        assert response.json()["detail"]
    hidden = outsider_client.get("/graph/data/", {"center": "Ledgerd", "hops": 1})
    assert hidden.status_code == 404


def test_the_entity_panel_lists_relations_and_links_their_source_facts(
    world, owner_client, teammate_client, outsider_client
):
    ledgerd = Entity.objects.get(key="ledgerd")
    panel = owner_client.get(f"/graph/entities/{ledgerd.ref}/").content.decode()
    assert "runs_on" in panel and "calls" in panel
    assert 'href="/memory/' in panel
    # Each relation quotes the facts behind it; the teammate's panel not the private one.
    assert panel.count("Ledgerd runs on Postgres.") == 2  # under runs_on, and as a mention
    assert "Ledgerd calls Nightjar." in panel
    theirs = teammate_client.get(f"/graph/entities/{ledgerd.ref}/").content.decode()
    assert "Ledgerd runs on Postgres." in theirs and "Nightjar" not in theirs
    assert outsider_client.get(f"/graph/entities/{ledgerd.ref}/").status_code == 404
    assert owner_client.get(f"/graph/entities/{ledgerd.pk}/").status_code == 404


def test_the_build_button_starts_a_job_with_progress(owner_client, owner):
    response = owner_client.post("/graph/build/")
    assert response.status_code == 200
    job = Job.objects.get(owner=owner)
    assert job.kind == "concept_build"
    assert f'id="job-{job.pk}"' in response.content.decode()
    assert f"<strong>Concept graph build {job.pk}</strong>: " in response.content.decode()


def test_aliases_are_edited_on_the_page(world, owner_client, outsider_client):
    made = owner_client.post("/graph/aliases/", {"alias": "ledger", "target": "Ledgerd"})
    assert made.status_code == 200 and "ledger" in made.content.decode()
    alias = Alias.objects.get()
    refused = owner_client.post("/graph/aliases/", {"alias": "", "target": "Ledgerd"})
    assert refused.status_code == 400 and "needs a name" in refused.content.decode()
    assert outsider_client.post(f"/graph/aliases/{alias.pk}/delete/").status_code == 404
    assert "ledger" not in outsider_client.get("/graph/").content.decode().split("Aliases")[1]
    assert owner_client.post(f"/graph/aliases/{alias.pk}/delete/").status_code == 200
    assert not Alias.objects.exists()


def test_a_global_alias_from_someone_not_staff_is_refused_on_the_page(world, owner_client):
    refused = owner_client.post(
        "/graph/aliases/", {"alias": "ledger", "target": "Ledgerd", "visibility": "global"}
    )
    assert refused.status_code == 403
    assert "only staff add one" in refused.content.decode()
    assert not Alias.objects.exists()
