"""An entity is named to its readers by its ref, a keyed hash of its name: the same
whether or not anyone else's facts name it. Its row id would tell: one row serves every
fact naming the name, numbered as names are first written, so a reader writing a name
that someone's private fact holds would get an older number than for a fresh name."""

import re
from collections.abc import Iterator
from typing import Any

import pytest

from concepts.models import Entity, EntityRefKey
from concepts.normalise import entity_key, entity_ref
from concepts.tools import concept_query
from facts.models import Fact
from facts.services.update import fact_delete
from teams.services import Actor

pytestmark = pytest.mark.django_db

API = "/api/concept-graph"
REF = re.compile(r"[a-z2-7]{26}")
# The outsider's facts: fresh names first, then the name Alice's private fact may hold,
# so numbering would put that one before the others (with her fact) or after them
# (without). Two paths as short lead from Ashfold to Brindle.
STATEMENTS = (
    "Ashfold uses Quillgate.",
    "Quillgate calls Brindle.",
    "Ashfold uses Kestrelvault.",
    "Kestrelvault calls Brindle.",
)
NAMES = ("Ashfold", "Quillgate", "Brindle", "Kestrelvault")


def entities_in(value: Any) -> Iterator[dict[str, Any]]:
    """Every entity an answer names: each object with a name and a type."""
    if isinstance(value, dict):
        if "name" in value and "type" in value:
            yield value
        for item in value.values():
            yield from entities_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from entities_in(item)


def with_fact_words(value: Any, words: dict[int, str]) -> Any:
    """``value`` with each fact id written as the fact's words (the two worlds number
    facts differently; that is not what is compared)."""
    if isinstance(value, dict):
        return {
            key: [words[i] for i in item]
            if key == "source_fact_ids"
            else words[item]
            if key == "id" and "content" in value
            else with_fact_words(item, words)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [with_fact_words(item, words) for item in value]
    if isinstance(value, str):
        value = re.sub(
            r"facts (\d+(?:, \d+)*)",
            lambda m: "facts " + ", ".join(words[int(i)] for i in m.group(1).split(", ")),
            value,
        )
        return re.sub(
            r"(/memory/|fact )(\d+)", lambda m: m.group(1) + words[int(m.group(2))], value
        )
    return value


def everything_seen(user, client) -> dict[str, Any]:
    """What the concept graph answers ``user`` everywhere it names entities: the API,
    the page's data and entity panels, and the agent tool."""
    actor = Actor(user=user)
    seen: dict[str, Any] = {
        "nodes": client.get(f"{API}/nodes", {"limit": 200}).json(),
        "edges": client.get(f"{API}/edges", {"limit": 200}).json(),
        "stats": client.get(f"{API}/stats").json(),
        "query": client.get(f"{API}/query", {"entity": "Kestrelvault"}).json(),
        "path": client.get(f"{API}/path", {"from": "Ashfold", "to": "Brindle", "limit": 1}).json(),
        "graph": client.get("/graph/data/").json(),
        "neighbourhood": client.get("/graph/data/", {"center": "Brindle", "hops": 1}).json(),
        "tool": vars(concept_query(actor=actor, entity="Kestrelvault")),
        "tool path": vars(concept_query(actor=actor, entity="Ashfold", to="Brindle", limit=1)),
    }
    for node in seen["nodes"]["items"]:
        ref = node["ref"]
        seen[f"entity {node['name']}"] = client.get(f"{API}/entities/{ref}").json()
        seen[f"panel {node['name']}"] = client.get(f"/graph/entities/{ref}/").content.decode()
    words = dict(Fact.objects.filter(owner=user).values_list("pk", "content"))
    return with_fact_words(seen, words)


def test_the_refs_an_outsider_sees_tell_nothing_of_names_in_others_private_facts(
    owner, outsider, outsider_client, remember
):
    def world(*, alice_names_it: bool) -> dict[str, Any]:
        secret = "Kestrelvault runs on Ossory." if alice_names_it else "Zarnwick runs on Ossory."
        facts = [remember(owner, secret, visibility="private")]
        facts += [remember(outsider, s, visibility="private") for s in STATEMENTS]
        seen = everything_seen(outsider, outsider_client)
        for fact in facts:
            fact_delete(actor=Actor(user=fact.owner), fact=fact)
        assert not Entity.objects.exists()
        return seen

    without_alice = world(alice_names_it=False)
    with_alice = world(alice_names_it=True)

    # Refs, names, counts, orders, the paths kept and the layout: all the same.
    assert with_alice == without_alice
    # A ref is the install's keyed hash of the name, nothing else.
    secret = EntityRefKey.current()
    refs = {node["name"]: node["ref"] for node in with_alice["nodes"]["items"]}
    assert refs == {name: entity_ref(entity_key(name), secret=secret) for name in NAMES}
    # And an entity is named by its ref everywhere: no row id in any answer.
    for label, answer in with_alice.items():
        for entity in entities_in(answer):
            assert "id" not in entity and entity["ref"] in refs.values(), (label, entity)
        if isinstance(answer, str):
            named = re.findall(r'data-(?:entity|focus)="([^"]*)"', answer)
            assert named and set(named) <= set(refs.values()), (label, named)
    graph = with_alice["graph"]
    assert {e[end] for e in graph["edges"] for end in "so"} == set(refs.values())
    assert with_alice["neighbourhood"]["center"] == refs["Brindle"]


def test_an_entity_is_found_by_its_ref_and_never_by_its_row_id(
    owner, owner_client, outsider_client, remember
):
    remember(owner, "Kestrelvault runs on Ossory.", visibility="private")
    entity = Entity.objects.get(key="kestrelvault")
    assert entity.ref == entity_ref("kestrelvault", secret=EntityRefKey.current())

    assert owner_client.get(f"{API}/entities/{entity.ref}").json()["entity"]["mentions"] == 1
    assert owner_client.get(f"/graph/entities/{entity.ref}/").status_code == 200
    for path in (f"{API}/entities/{entity.pk}", f"/graph/entities/{entity.pk}/"):
        answer = owner_client.get(path)
        assert answer.status_code == 404, (path, answer.content)
    detail = owner_client.get(f"{API}/entities/{entity.pk}").json()["detail"]
    assert "ref" in detail
    # Another reader's ref of a name only her private facts hold names nothing.
    assert outsider_client.get(f"{API}/entities/{entity.ref}").status_code == 404
    assert outsider_client.get(f"/graph/entities/{entity.ref}/").status_code == 404
