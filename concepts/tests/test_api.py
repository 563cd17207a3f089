"""The concept graph's API and agent tool: every query, the access rule (an outsider
sees no node, edge, count or weight of others' private or team facts), and bad input
answered clearly."""

import pytest
from django.test import Client

from concepts.models import Alias, Entity, Triple
from concepts.tools import concept_query
from memoryhub.engine.errors import NotFound
from memoryhub.engine.models import Job
from teams.services import Actor

pytestmark = pytest.mark.django_db

API = "/api/concept-graph"


@pytest.fixture
def world(owner, teammate, outsider, team, remember):
    """Alice's team knows how the billing service connects to Postgres; a private fact
    of hers adds weight to one edge and a secret entity; a global fact everyone sees."""
    remember(owner, "The billing service depends on Ledgerd.", visibility="team")
    remember(owner, "Ledgerd runs on Postgres.", visibility="team")
    remember(
        teammate,
        "Our billing service depends on Ledgerd for invoices.",
        visibility="team",
        team=team.pk,
    )
    remember(owner, "Ledgerd calls Nightjar.", visibility="private")
    remember(owner, "In production the billing service depends on Ledgerd.", visibility="private")
    remember(outsider, "Grafana uses Prometheus.", visibility="global")


def get(client, path: str, **params):
    return client.get(f"{API}{path}", params)


def relations(body) -> set[tuple[str, str, str, int]]:
    return {
        (r["subject"]["name"], r["relation"], r["object"]["name"], r["weight"])
        for r in body["relations"]
    }


def test_query_answers_an_entitys_relations_with_weights_and_source_facts(world, owner_client):
    body = get(owner_client, "/query", entity="ledgerd").json()

    assert body["entity"]["name"] == "Ledgerd"
    assert relations(body) == {
        ("billing service", "depends_on", "Ledgerd", 3),
        ("Ledgerd", "runs_on", "Postgres", 1),
        ("Ledgerd", "calls", "Nightjar", 1),
    }
    heaviest = body["relations"][0]
    assert len(heaviest["source_fact_ids"]) == 3
    out = get(owner_client, "/query", entity="Ledgerd", direction="out", relation="runs-on").json()
    assert relations(out) == {("Ledgerd", "runs_on", "Postgres", 1)}


def test_a_relation_names_its_ends_as_the_facts_stating_it_name_them(
    owner, teammate, team, remember, owner_client, teammate_client
):
    remember(owner, "The Ledger Daemon runs on Postgres.", visibility="team")
    remember(owner, "The billing service depends on the Ledger Daemon.", visibility="team")
    # Alice's private fact writes the name in capitals; her teammate never sees it.
    remember(owner, "LEDGER DAEMON calls Nightjar.", visibility="private")
    body = get(teammate_client, "/query", entity="postgres").json()
    (relation,) = body["relations"]
    assert relation["subject"] == {
        "ref": relation["subject"]["ref"],
        "name": "Ledger Daemon",
        "type": relation["subject"]["type"],
    }
    assert "mentions" in body["entity"] and "mentions" not in relation["subject"]
    edges = get(teammate_client, "/edges").json()["items"]
    assert {e["subject"]["name"] for e in edges} == {"billing service", "Ledger Daemon"}
    # Most of Alice's facts write "Ledger Daemon"; the one stating this relation does not.
    mine = get(owner_client, "/query", entity="nightjar").json()
    assert {r["subject"]["name"] for r in mine["relations"]} == {"LEDGER DAEMON"}
    assert get(owner_client, "/query", entity="ledger daemon").json()["entity"]["name"] == (
        "Ledger Daemon"
    )


def test_a_teammate_sees_counts_and_weights_of_team_facts_only(world, teammate_client):
    body = get(teammate_client, "/query", entity="Ledgerd").json()

    assert body["entity"]["mentions"] == 3
    assert relations(body) == {
        ("billing service", "depends_on", "Ledgerd", 2),
        ("Ledgerd", "runs_on", "Postgres", 1),
    }
    assert get(teammate_client, "/query", entity="Nightjar").status_code == 404


def test_an_outsider_sees_no_node_edge_count_or_weight_of_others(world, outsider_client):
    for path, params in [
        ("/query", {"entity": "Ledgerd"}),
        ("/query", {"entity": "billing service"}),
        ("/path", {"from": "billing service", "to": "Postgres"}),
    ]:
        response = get(outsider_client, path, **params)
        assert response.status_code == 404, (path, response.content)
    ledgerd = Entity.objects.get(key="ledgerd")
    assert get(outsider_client, f"/entities/{ledgerd.ref}").status_code == 404
    nodes = get(outsider_client, "/nodes").json()
    assert {n["name"] for n in nodes["items"]} == {"Grafana", "Prometheus"}
    assert nodes["count"] == 2
    edges = get(outsider_client, "/edges").json()
    assert [(e["subject"]["name"], e["weight"]) for e in edges["items"]] == [("Grafana", 1)]
    stats = get(outsider_client, "/stats").json()
    assert (stats["nodes"], stats["edges"], stats["triples"], stats["facts"]) == (2, 1, 1, 1)
    answer = concept_query(
        actor=Actor(user=outsider_client_user(outsider_client)), entity="Grafana"
    )
    assert "Ledgerd" not in answer.text and "Ledgerd" not in str(answer.data)
    with pytest.raises(NotFound):
        concept_query(actor=Actor(user=outsider_client_user(outsider_client)), entity="Ledgerd")


def outsider_client_user(client):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(pk=client.session["_auth_user_id"])


def test_path_finds_the_shortest_connection_either_way(world, owner_client):
    body = get(owner_client, "/path", **{"from": "billing service", "to": "Nightjar"}).json()

    assert [[(s["subject"]["name"], s["relation"], s["object"]["name"]) for s in p]
            for p in body["paths"]] == [[
        ("billing service", "depends_on", "Ledgerd"), ("Ledgerd", "calls", "Nightjar"),
    ]]  # fmt: skip
    back = get(owner_client, "/path", **{"from": "Nightjar", "to": "billing service"}).json()
    assert len(back["paths"][0]) == 2
    short = get(
        owner_client, "/path", **{"from": "billing service", "to": "Nightjar", "max_hops": 1}
    )
    assert short.json() == {"paths": []}


def test_path_bad_input_answers_clearly(world, owner_client):
    for hops in (0, 7, 10**30):
        response = get(
            owner_client, "/path", **{"from": "Ledgerd", "to": "Postgres", "max_hops": hops}
        )
        assert response.status_code in (400, 422), (hops, response.content)
        assert "max_hops" in response.json()["detail"]
    unknown = get(owner_client, "/path", **{"from": "Ledgerd", "to": "Atlantis"})
    assert unknown.status_code == 404 and "Atlantis" in unknown.json()["detail"]
    assert get(owner_client, "/path", to="Postgres").status_code == 422


def test_nodes_and_edges_are_paginated_and_filtered(world, owner_client):
    first = get(owner_client, "/nodes", limit=2).json()
    assert first["count"] == 6 and len(first["items"]) == 2
    assert first["items"][0]["name"] == "Ledgerd"  # most mentioned
    assert "offset=2" in first["next"]
    rest = owner_client.get(first["next"]).json()
    assert not {n["ref"] for n in rest["items"]} & {n["ref"] for n in first["items"]}
    typed = get(owner_client, "/nodes", type="organisation").json()
    assert typed["count"] == 0
    named = get(owner_client, "/nodes", q="billing").json()
    assert [n["name"] for n in named["items"]] == ["billing service"]
    edges = get(owner_client, "/edges", relation="depends_on").json()
    assert [(e["subject"]["name"], e["weight"]) for e in edges["items"]] == [("billing service", 3)]
    for bad in ({"limit": 0}, {"limit": 201}, {"offset": -1}, {"type": "planet"}):
        assert get(owner_client, "/nodes", **bad).status_code == 400, bad


def test_stats_count_what_the_caller_sees(world, owner_client, teammate_client):
    mine = get(owner_client, "/stats").json()
    theirs = get(teammate_client, "/stats").json()
    assert (mine["nodes"], mine["edges"], mine["triples"]) == (6, 4, 6)
    assert (theirs["nodes"], theirs["edges"], theirs["triples"]) == (5, 3, 4)
    assert theirs["by_relation"]["depends_on"] == 2


def test_an_entity_page_lists_its_relations_and_source_facts(world, owner_client, teammate_client):
    ledgerd = Entity.objects.get(key="ledgerd")
    body = get(owner_client, f"/entities/{ledgerd.ref}").json()
    assert body["entity"]["mentions"] == 5
    assert len(body["sources"]) == 5
    theirs = get(teammate_client, f"/entities/{ledgerd.ref}").json()
    assert {s["visibility"] for s in theirs["sources"]} == {"team"}
    for missing in (0, ledgerd.pk, 2**70, "a" * 26, ledgerd.ref.upper(), "x" * 5000):
        assert get(owner_client, f"/entities/{missing}").status_code == 404, missing


def test_unknown_entity_and_odd_names_answer_404_or_400_never_500(world, owner_client):
    assert get(owner_client, "/query", entity="Atlantis").status_code == 404
    for odd in ("   ", "\x00", "!!!", "x" * 5000):
        response = get(owner_client, "/query", entity=odd)
        assert response.status_code in (400, 404), (odd[:10], response.status_code)
    # A lone surrogate, as a client may percent-encode it.
    assert owner_client.get(f"{API}/query?entity=%ED%A0%80").status_code in (400, 404)
    assert get(owner_client, "/query", entity="Ledgerd", direction="sideways").status_code == 400
    assert get(owner_client, "/query", entity="Ledgerd", limit=10**9).status_code == 400


def test_a_build_is_a_job_that_extracts_what_the_graph_lacks(
    owner, agent_client, django_capture_on_commit_callbacks
):
    from facts.models import Fact

    Fact.objects.create(owner=owner, content="Alice works at Acme Corp.")  # no write service
    client = agent_client(owner)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{API}/build", {}, content_type="application/json")

    assert response.status_code == 202
    job = client.get(f"/api/jobs/{response.json()['job']}").json()
    assert job["state"] == "done" and job["result"]["facts"] == 1
    assert Triple.objects.count() == 1
    reader = agent_client(owner, scopes=("read",), name="reader")
    assert reader.post(f"{API}/build", {}, content_type="application/json").status_code == 403
    assert Job.objects.count() == 1


def test_aliases_through_the_api(world, owner_client, outsider_client):
    made = owner_client.post(
        f"{API}/aliases",
        {"alias": "ledger daemon", "target": "Ledgerd", "visibility": "private"},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    assert get(owner_client, "/query", entity="ledger daemon").json()["entity"]["name"] == "Ledgerd"
    assert get(outsider_client, "/aliases").json()["count"] == 0
    alias_id = made.json()["id"]
    assert outsider_client.delete(f"{API}/aliases/{alias_id}").status_code == 404
    bad = owner_client.post(
        f"{API}/aliases", {"alias": "", "target": "Ledgerd"}, content_type="application/json"
    )
    assert bad.status_code == 400 and "needs a name" in bad.json()["detail"]
    assert owner_client.delete(f"{API}/aliases/{alias_id}").status_code == 204
    assert not Alias.objects.exists()


def test_the_concept_query_tool_answers_relations_and_paths(world, owner):
    answer = concept_query(actor=Actor(user=owner), entity="Ledgerd", direction="out")
    assert "Ledgerd -runs_on-> Postgres" in answer.text
    path = concept_query(actor=Actor(user=owner), entity="billing service", to="Postgres")
    assert path.text == "billing service -depends_on-> Ledgerd ; Ledgerd -runs_on-> Postgres"


def test_another_users_global_alias_never_rewrites_alices_private_graph(
    owner, owner_client, make_user, remember
):
    carol = make_user("carol")
    carol_client = Client()
    carol_client.force_login(carol)
    remember(owner, "Heronbase depends on Ledgerd.", visibility="private")

    made = carol_client.post(
        f"{API}/aliases",
        {"alias": "Heronbase", "target": "Malloryhost", "visibility": "global"},
        content_type="application/json",
    )
    remember(carol, "Malloryhost runs on Evilcorpdb.", visibility="global")

    body = get(owner_client, "/query", entity="Heronbase").json()
    assert body["entity"]["name"] == "Heronbase"
    assert relations(body) == {("Heronbase", "depends_on", "Ledgerd", 1)}
    heronbase = body["entity"]["ref"]
    reads = [
        owner_client.get(f"{API}/entities/{heronbase}"),
        owner_client.get(f"/graph/entities/{heronbase}/"),
        owner_client.get("/graph/data/", {"center": "Heronbase", "hops": 1}),
        get(owner_client, "/path", **{"from": "Heronbase", "to": "Evilcorpdb"}),
    ]
    for response in reads:
        assert response.status_code == 200, response.content
        assert "Evilcorpdb" not in response.content.decode(), response.content
    assert reads[-1].json() == {"paths": []}
    edges = get(owner_client, "/edges", limit=200).json()["items"]
    assert ("Heronbase", "runs_on", "Evilcorpdb") not in {
        (e["subject"]["name"], e["relation"], e["object"]["name"]) for e in edges
    }
    answer = concept_query(actor=Actor(user=owner), entity="Heronbase")
    assert "Evilcorpdb" not in f"{answer.text}{answer.data}"
    # Carol is not staff: a global alias would merge names in everyone's graph.
    assert made.status_code == 403, made.content
    assert "staff" in made.json()["detail"]
    assert not Alias.objects.exists()
