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
from memoryhub.engine.errors import NotFound
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


def node_names(user) -> set[str]:
    nodes, _ = concept_nodes_visible(user=user)
    return {n.name for n in nodes}


def test_a_word_capitalised_by_opening_a_sentence_is_no_entity(owner, remember, owner_client):
    remember(owner, "Deploys go through Argo CD.")
    remember(owner, "Prefers dark mode in every editor.")
    remember(owner, "Uses Vim for editing.")
    remember(owner, "Notes: Releases wait for the QA review.\n- Builds run at night.")

    argo = concept_entity_find_visible(user=owner, name="Argo CD")
    assert argo.mentions == 1
    assert node_names(owner) == {"Argo CD", "Vim", "QA"}
    for noise in ("Deploys", "Prefers", "Uses", "Uses Vim", "Releases", "Builds", "Notes"):
        assert not Entity.objects.filter(key=entity_key(noise)).exists(), noise
    # Nor on the knowledge graph page, nor through the API.
    page = owner_client.get("/graph/data/").json()
    assert {n["name"] for n in page["nodes"]} == {"Argo CD", "Vim", "QA"}
    listed = owner_client.get("/api/concept-graph/nodes").json()
    assert {n["name"] for n in listed["items"]} == {"Argo CD", "Vim", "QA"}


@pytest.mark.parametrize(
    "texts",
    [
        ("Atlas is down.", "We moved Atlas to k8s."),
        ("We moved Atlas to k8s.", "Atlas is down."),
        ("Atlas is down. We moved Atlas to k8s.",),
        ("Atlas is down.", "Marta works on Atlas."),
    ],
)
def test_a_word_opening_a_sentence_and_written_as_a_name_elsewhere_is_one(owner, remember, texts):
    for text in texts:
        remember(owner, text)

    atlas = concept_entity_find_visible(user=owner, name="Atlas")
    assert atlas.mentions == len(texts)


def test_a_word_only_ever_opening_a_sentence_is_no_entity(owner, remember):
    remember(owner, "Atlas is down.")
    remember(owner, "Atlas was slow this morning.")
    remember(owner, "Lately the atlas of our services got long.")

    assert "Atlas" not in node_names(owner)
    with pytest.raises(NotFound):
        concept_entity_find_visible(user=owner, name="Atlas")


def test_what_decides_a_name_is_only_what_the_readers_of_its_fact_may_read(
    owner, teammate, outsider, team, remember
):
    # Another user's facts never decide what the owner's name.
    remember(teammate, "We moved Hermes to k8s.", visibility="private")
    remember(owner, "Hermes is down.", visibility="private")
    assert "Hermes" not in node_names(owner)
    # The owner's private words do not make a fact everyone reads name a thing.
    remember(owner, "We moved Orion to k8s.", visibility="private")
    remember(owner, "Orion is down.", visibility="global")
    with pytest.raises(NotFound):
        concept_entity_find_visible(user=outsider, name="Orion")
    assert concept_entity_find_visible(user=owner, name="Orion").mentions == 1
    # Nor their team's words a fact of another audience; words everyone reads decide
    # for facts of any audience of theirs.
    remember(owner, "Polaris is down.", visibility="private")
    remember(owner, "We moved Polaris to k8s.", visibility="team", team=team.pk)
    assert concept_entity_find_visible(user=owner, name="Polaris").mentions == 2
    remember(owner, "Vega is down.", visibility="team", team=team.pk)
    remember(owner, "Lyra is down.", visibility="global")
    remember(owner, "We moved Vega and Lyra to k8s.", visibility="global")
    assert concept_entity_find_visible(user=teammate, name="Vega").mentions == 2
    assert concept_entity_find_visible(user=outsider, name="Lyra").mentions == 2


def test_a_run_opening_a_sentence_loses_its_first_word_only_when_it_is_no_name(owner, remember):
    remember(owner, "Marta Kowalski joined in May.")
    remember(owner, "Wow Caroline, that is brave.")
    remember(owner, "Caroline: the talk went well.")
    remember(owner, "I met Caroline at the conference.")

    names = node_names(owner)
    assert {"Marta Kowalski", "Caroline"} <= names
    assert not {"Wow Caroline", "Kowalski", "Wow"} & names
    assert concept_entity_find_visible(user=owner, name="Caroline").mentions == 3


def test_facts_read_in_one_batch_decide_names_for_each_other(owner):
    texts = (
        "Atlas is down.",
        "We moved Atlas to k8s.",
        "Uses Zeppelin daily.",
        "Zeppelin is slow.",
    )
    facts = [Fact.objects.create(owner=owner, content=text) for text in texts]

    concept_facts_extract(fact_ids=[f.pk for f in facts])

    assert concept_entity_find_visible(user=owner, name="Atlas").mentions == 2
    assert concept_entity_find_visible(user=owner, name="Zeppelin").mentions == 2
    assert "Uses" not in node_names(owner)


def test_a_name_another_fact_decided_stands_only_while_that_fact_does(owner, outsider, remember):
    from concepts.models import Mention
    from concepts.services import concept_graph_sync
    from facts.services.update import fact_delete, fact_update

    down = remember(owner, "Orion is down.", visibility="global")
    moved = remember(owner, "We moved Orion to k8s.", visibility="global")
    assert concept_entity_find_visible(user=outsider, name="Orion").mentions == 2
    decided = Mention.objects.get(fact=down)
    assert decided.evidence_id == moved.pk

    # The fact that decided it turns private: it no longer decides for a fact everyone
    # reads, for its readers or its owner.
    fact_update(actor=Actor(user=owner), fact=moved, changes={"visibility": "private"})
    with pytest.raises(NotFound):
        concept_entity_find_visible(user=outsider, name="Orion")
    assert concept_entity_find_visible(user=owner, name="Orion").mentions == 1
    assert Mention.objects.filter(fact=down).exists()  # still stored, not read
    concept_graph_sync()  # the catch-up writes it again
    assert not Mention.objects.filter(fact=down).exists()

    # Deleted, it decides nothing: the mention is not read, then written again.
    moved.refresh_from_db()
    fact_update(actor=Actor(user=owner), fact=moved, changes={"visibility": "global"})
    concept_graph_sync()
    assert concept_entity_find_visible(user=outsider, name="Orion").mentions == 2
    moved.refresh_from_db()
    fact_delete(actor=Actor(user=owner), fact=moved)
    with pytest.raises(NotFound):
        concept_entity_find_visible(user=owner, name="Orion")
    assert Mention.objects.filter(fact=down).exists()  # still stored, not read
    concept_graph_sync()
    assert not Mention.objects.filter(fact=down).exists()
