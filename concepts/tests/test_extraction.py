"""Facts become entities and triples: through the offline rules, through the real chat
client against a local protocol server, incrementally on every write, normalised and
merged by aliases, and gone with the facts that stated them."""

import pytest

from concepts.models import Alias, Entity, FactExtraction, Triple
from concepts.normalise import entity_key
from concepts.selectors import concept_entity_find_visible, concept_relations
from concepts.services import (
    concept_alias_create,
    concept_alias_delete,
    concept_facts_extract,
    concept_graph_sync,
)
from facts.models import Fact
from facts.services.create import fact_bulk_create
from facts.services.update import fact_delete, fact_update
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.llm import ChatModelError
from memoryhub.engine.llm.tests.conftest import completion, serve, user_data  # noqa: F401
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor

pytestmark = pytest.mark.django_db


def edges(user, name: str) -> set[tuple[str, str, str]]:
    entity = concept_entity_find_visible(user=user, name=name)
    return {
        (e["subject"]["name"], e["relation"], e["object"]["name"])
        for e in concept_relations(user=user, entity=entity)
    }


def test_a_fact_becomes_typed_entities_and_an_edge_with_the_offline_rules(owner, remember):
    fact = remember(owner, "Alice works at Acme Corp.")

    assert edges(owner, "acme corp") == {("Alice", "works_at", "Acme Corp")}
    acme = concept_entity_find_visible(user=owner, name="Acme Corp")
    assert (acme.type, acme.mentions) == ("organisation", 1)
    assert concept_entity_find_visible(user=owner, name="alice").type == "person"
    assert FactExtraction.objects.get(fact=fact).provider == "offline"


def test_names_differing_in_case_spacing_determiners_and_plurals_are_one_entity(owner, remember):
    remember(owner, "The billing services depend on Postgres.")
    remember(owner, "The  Billing service uses Redis.")

    billing = concept_entity_find_visible(user=owner, name="billing service")
    assert billing.mentions == 2
    assert {e["object"]["name"] for e in concept_relations(user=owner, entity=billing)} == {
        "Postgres",
        "Redis",
    }
    assert entity_key("  The Billing   Services ") == entity_key("billing service")
    # A capitalised name keeps its final s.
    assert entity_key("Jenkins") == "jenkins"
    assert entity_key("boxes") == "box"


def test_i_is_the_writer_of_the_fact_not_one_user_for_everyone(owner, teammate, remember):
    remember(owner, "I use Vim.", visibility="global")
    remember(teammate, "I use Emacs.", visibility="global")

    assert edges(owner, "alice") == {("alice", "uses", "Vim")}
    assert edges(owner, "bob") == {("bob", "uses", "Emacs")}


def test_a_fact_written_in_a_batch_is_extracted_with_its_batch(
    owner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        fact_bulk_create(
            actor=Actor(user=owner),
            items=[{"content": "Dana works at Initech."}, {"content": "Initech uses Kafka."}],
        )

    assert edges(owner, "Initech") == {
        ("Dana", "works_at", "Initech"),
        ("Initech", "uses", "Kafka"),
    }


def test_an_edited_fact_is_extracted_again(owner, remember, django_capture_on_commit_callbacks):
    fact = remember(owner, "The billing service uses Redis.")
    with django_capture_on_commit_callbacks(execute=True):
        fact_update(
            actor=Actor(user=owner),
            fact=fact,
            changes={"content": "The billing service uses Kafka."},
        )

    assert edges(owner, "billing service") == {("billing service", "uses", "Kafka")}
    assert not Entity.objects.filter(key="redis").exists()


def test_a_deleted_fact_takes_its_triples_and_the_entities_only_it_named(owner, remember):
    kept = remember(owner, "Alice works at Acme Corp.")
    gone = remember(owner, "Alice uses Zanzibar.")

    fact_delete(actor=Actor(user=owner), fact=gone)

    assert not Triple.objects.filter(fact_id=gone.pk).exists()
    assert not Entity.objects.filter(key="zanzibar").exists()
    assert Triple.objects.filter(fact=kept).count() == 1


def test_an_alias_merges_two_names_and_removing_it_splits_them(owner, remember):
    remember(owner, "K8s runs on AWS.", visibility="private")
    remember(owner, "Kubernetes depends on etcd.", visibility="private")

    alias = concept_alias_create(
        actor=Actor(user=owner), alias="k8s", target="Kubernetes", visibility="private"
    )

    merged = concept_entity_find_visible(user=owner, name="k8s")
    assert merged == concept_entity_find_visible(user=owner, name="kubernetes")
    assert merged.mentions == 2
    assert {e["object"]["name"] for e in concept_relations(user=owner, entity=merged)} == {
        "AWS",
        "etcd",
    }

    concept_alias_delete(actor=Actor(user=owner), alias_id=alias.pk)

    assert concept_entity_find_visible(user=owner, name="k8s").mentions == 1
    assert edges(owner, "k8s") == {("K8s", "runs_on", "AWS")}


def test_a_private_alias_leaves_the_graph_others_see_unchanged(owner, teammate, team, remember):
    remember(teammate, "K8s runs on AWS.", visibility="global")
    remember(teammate, "Kubernetes depends on etcd.", visibility="global")

    concept_alias_create(
        actor=Actor(user=owner), alias="k8s", target="Kubernetes", visibility="private"
    )

    for user in (owner, teammate):
        assert concept_entity_find_visible(user=user, name="kubernetes").mentions == 1
    assert edges(teammate, "k8s") == {("K8s", "runs_on", "AWS")}
    # The owner's own lookups follow their alias.
    assert edges(owner, "k8s") == {("Kubernetes", "depends_on", "etcd")}


@pytest.mark.parametrize(
    ("alias", "target", "why"),
    [
        ("", "Kubernetes", "needs a name"),
        ("k8s", "   ", "needs a name"),
        ("k8s", "K8S", "already one name"),
        ("x" * 201, "Kubernetes", "at most 200"),
        (["k8s"], "Kubernetes", "must be text"),
        ("k8s\ud800", "Kubernetes", "must be text"),
    ],
)
def test_a_malformed_alias_is_refused_and_nothing_is_written(owner, alias, target, why):
    with pytest.raises(InvalidInput, match=why):
        concept_alias_create(actor=Actor(user=owner), alias=alias, target=target)
    assert not Alias.objects.exists()


def test_an_alias_of_an_alias_is_refused(owner):
    concept_alias_create(actor=Actor(user=owner), alias="k8s", target="Kubernetes")
    with pytest.raises(InvalidInput, match="itself an alias"):
        concept_alias_create(actor=Actor(user=owner), alias="kube", target="k8s")
    with pytest.raises(InvalidInput, match="already an alias"):
        concept_alias_create(actor=Actor(user=owner), alias="K8s", target="Nomad")


# --- Through a chat model -----------------------------------------------------------------


def use_chat_model(url: str) -> None:
    memory_config_get()
    MemoryConfig.objects.filter(pk=1).update(llm_url=url, llm_model="test-model")


def test_facts_are_extracted_by_the_chat_model_in_one_request_per_batch(
    owner,
    serve,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    def answer(request, count):
        texts = user_data(request)["texts"]
        return completion(
            {
                "triples": [
                    {
                        "subject": "Alice",
                        "subject_type": "Person",
                        "relation": "Works At",
                        "object": "Acme",
                        "object_type": "company",
                        "confidence": 0.9,
                        "source_id": texts[0]["id"],
                    },
                    {
                        "subject": "Acme",
                        "relation": "uses",
                        "object": "Kafka",
                        "object_type": "software",
                        "source_id": texts[1]["id"],
                    },
                ]
            }
        )

    server = serve(answer)
    use_chat_model(server.url)
    with django_capture_on_commit_callbacks(execute=True):
        fact_bulk_create(
            actor=Actor(user=owner),
            items=[{"content": "Alice is employed by Acme."}, {"content": "Acme runs Kafka."}],
        )

    assert len(server.requests) == 1
    assert edges(owner, "acme") == {("Alice", "works_at", "Acme"), ("Acme", "uses", "Kafka")}
    assert concept_entity_find_visible(user=owner, name="acme").type == "organisation"
    assert set(FactExtraction.objects.values_list("provider", flat=True)) == {"test-model"}


def test_a_chat_model_failure_writes_nothing_and_the_catch_up_extracts_later(
    owner,
    serve,  # noqa: F811
    settings,
):
    settings.LLM_RETRIES = 0
    broken = serve(lambda request, count: completion("this is not json"))
    use_chat_model(broken.url)
    fact = Fact.objects.create(owner=owner, content="Alice works at Acme Corp.")

    with pytest.raises(ChatModelError):
        concept_facts_extract(fact_ids=[fact.pk])
    assert not FactExtraction.objects.exists()
    assert not Triple.objects.exists()

    MemoryConfig.objects.filter(pk=1).update(llm_url="")
    assert concept_graph_sync().facts == 1
    assert edges(owner, "acme corp") == {("Alice", "works_at", "Acme Corp")}
    # Extracted at its current version: nothing left to do.
    assert concept_graph_sync().facts == 0
