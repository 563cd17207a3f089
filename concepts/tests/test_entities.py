"""One entity per thing, as a user sees it: names resolved by case, articles,
possessives and "the X project"; every fact naming a thing counted; relations read
from the right subject; well-known tools typed as tools."""

import pytest

from concepts.models import Entity
from concepts.normalise import entity_key
from concepts.selectors import (
    concept_entity_find_visible,
    concept_nodes_visible,
    concept_paths,
    concept_relations,
)
from concepts.services import concept_facts_extract
from concepts.tools import concept_query
from facts.models import Fact
from memoryhub.engine.llm import Triples
from teams.services import Actor

pytestmark = pytest.mark.django_db


def relations(user, name: str) -> set[tuple[str, str, str]]:
    entity = concept_entity_find_visible(user=user, name=name)
    return {
        (e["subject"]["name"], e["relation"], e["object"]["name"])
        for e in concept_relations(user=user, entity=entity)
    }


def test_the_atlas_project_is_one_entity_named_by_every_fact_about_it(owner, remember):
    remember(owner, "Marta Kowalski leads the Atlas project.")
    remember(owner, "The Atlas project uses PostgreSQL.")
    remember(owner, "Atlas had an outage on Monday.")

    atlas = concept_entity_find_visible(user=owner, name="Atlas")
    assert atlas.mentions == 3
    for name in ("Atlas", "Atlas project", "the atlas project", "Project Atlas"):
        assert concept_entity_find_visible(user=owner, name=name) == atlas
        assert {(s, r, o) for s, r, o in relations(owner, name)} == {
            ("Marta Kowalski", "manages", atlas.name),
            (atlas.name, "uses", "PostgreSQL"),
        }
    marta = concept_entity_find_visible(user=owner, name="Marta Kowalski")
    postgres = concept_entity_find_visible(user=owner, name="postgresql")
    [path] = concept_paths(user=owner, start=marta, end=postgres)
    assert [(s["subject"]["name"], s["relation"], s["object"]["name"]) for s in path] == [
        ("Marta Kowalski", "manages", atlas.name),
        (atlas.name, "uses", "PostgreSQL"),
    ]
    # As an agent asks it.
    answer = concept_query(actor=Actor(user=owner), entity="Marta Kowalski", to="PostgreSQL")
    assert answer.data["paths"]


class Stated:
    """A chat model that names things as it pleases: "alice" here, "Alice's" there."""

    provider_id = "stated"

    def __init__(self, said: dict[str, list[tuple[str, str, str]]]) -> None:
        self.said = said

    def extract_triples(self, sources):
        return Triples(
            provider=self.provider_id,
            triples=[
                {"subject": s, "relation": r, "object": o, "source_id": source.id}
                for source in sources
                for s, r, o in self.said.get(source.text, [])
            ],
        )


def test_names_differing_in_case_or_a_possessive_are_one_node(owner):
    said = {
        "alice uses redis and atlas.": [("alice", "uses", "redis"), ("alice", "uses", "atlas")],
        "Alice uses Redis.": [("Alice", "uses", "Redis")],
        "Alice's manager is Bob, who runs Atlas.": [
            ("Alice's", "knows", "Bob"),
            ("Bob", "manages", "Atlas"),
        ],
    }
    facts = [Fact.objects.create(owner=owner, content=text) for text in said]

    concept_facts_extract(fact_ids=[f.pk for f in facts], provider=Stated(said))

    alice = concept_entity_find_visible(user=owner, name="alice")
    assert concept_entity_find_visible(user=owner, name="ALICE") == alice
    assert alice.mentions == 3
    assert concept_entity_find_visible(user=owner, name="Redis").mentions == 2
    assert concept_entity_find_visible(user=owner, name="atlas").mentions == 2
    nodes, count = concept_nodes_visible(user=owner)
    assert sorted(n.name.casefold() for n in nodes) == ["alice", "atlas", "bob", "redis"]
    assert Entity.objects.count() == count == 4


def test_a_thing_said_of_a_part_is_not_said_of_what_the_part_is_for(owner, remember):
    remember(owner, "The Grafana cluster for Ledgerd is located in us-east-1.")
    remember(owner, "The load balancer for the billing service is located in Frankfurt.")

    assert relations(owner, "Ledgerd") == set()
    assert relations(owner, "Grafana cluster") == {("Grafana cluster", "located_in", "us-east-1")}
    assert relations(owner, "Frankfurt") == {("load balancer", "located_in", "Frankfurt")}
    assert relations(owner, "us-east-1") == {("Grafana cluster", "located_in", "us-east-1")}


def test_well_known_tools_are_tools_whatever_the_verb_beside_them(owner, remember):
    remember(owner, "The platform team maintains Vault.")
    remember(owner, "Marta works on Snowflake.")
    remember(owner, "I work on S3.")
    remember(owner, "Elena works on Atlas.")

    for name in ("Vault", "Snowflake", "S3"):
        assert concept_entity_find_visible(user=owner, name=name).type == "tool"
    assert concept_entity_find_visible(user=owner, name="Atlas").type == "project"


def test_a_private_fact_naming_a_thing_counts_only_for_its_owner(owner, teammate, remember):
    remember(owner, "Atlas uses Kafka.", visibility="global")
    remember(owner, "Atlas had an outage on Monday.", visibility="private")

    assert concept_entity_find_visible(user=owner, name="Atlas").mentions == 2
    assert concept_entity_find_visible(user=teammate, name="atlas").mentions == 1


@pytest.mark.parametrize(
    ("names", "one"),
    [
        (("Alice", "alice", "Alice's", "ALICE"), True),
        (("Atlas", "atlas", "the Atlas project", "Project Atlas", "atlas project"), True),
        (("Redis", "redis"), True),
        (("billing services", "The Billing Service", "billing service's"), True),
        (("Grafana", "Grafana cluster"), False),
        (("Marta", "Marta's project"), False),
        (("Windows", "window"), False),
    ],
)
def test_entity_keys_fold_case_articles_possessives_and_project(names, one):
    keys = {entity_key(name) for name in names}
    assert (len(keys) == 1) is one
