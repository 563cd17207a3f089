"""Facts become entities and triples: through the offline rules, through the real chat
client against a local protocol server, incrementally on every write, normalised and
merged by aliases, and gone with the facts that stated them."""

import pytest

from concepts.models import Alias, Entity, FactExtraction, Triple
from concepts.normalise import entity_key, name_stated_in
from concepts.selectors import concept_entity_find_visible, concept_relations
from concepts.services import (
    concept_alias_create,
    concept_alias_delete,
    concept_facts_extract,
    concept_graph_sync,
)
from concepts.tools import concept_query
from facts.models import Fact
from facts.services.create import fact_bulk_create, fact_create
from facts.services.update import fact_delete, fact_update
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from memoryhub.engine.llm import ChatModelError
from memoryhub.engine.llm.tests.conftest import completion, serve, user_data  # noqa: F401
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor, memory_settings_update

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


@pytest.mark.parametrize(
    ("name", "text", "stated"),
    [
        ("The Billing Services", "Our billing service's queue is full.", True),
        ("Alice", "Alice's laptop runs Vim.", True),
        ("alice's laptop", "Alice\u2019s laptop runs Vim.", True),
        ("ACME corp", "Dana works at Acme Corp.", True),
        ("user", "I use Vim.", True),
        ("张三", "张三在阿里巴巴工作", True),
        ("Privatevault", "Zephyrcore runs on Kubelet.", False),
        ("vault", "Privatevault runs on Vaultd.", False),
        ("Acme Corp", "Corp is what Acme calls it.", False),
    ],
)
def test_a_name_is_stated_by_a_text_that_writes_its_words(name, text, stated):
    assert name_stated_in(name, text) is stated


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


def test_a_staffs_global_alias_merges_names_in_every_graph(staff, owner, outsider, remember):
    remember(owner, "K8s runs on AWS.", visibility="private")
    remember(outsider, "Kubernetes depends on etcd.", visibility="global")

    concept_alias_create(
        actor=Actor(user=staff), alias="k8s", target="Kubernetes", visibility="global"
    )

    # One entity of both names in Alice's graph; the outsider's holds the global fact.
    assert edges(owner, "k8s") == {("K8s", "runs_on", "AWS"), ("K8s", "depends_on", "etcd")}
    assert edges(outsider, "k8s") == {("Kubernetes", "depends_on", "etcd")}


@pytest.mark.parametrize("default", [False, True])
def test_only_staff_add_a_global_alias(owner, remember, default):
    remember(owner, "K8s runs on AWS.", visibility="private")
    if default:
        memory_settings_update(
            actor=Actor(user=owner), active_team=None, default_visibility="global"
        )

    with pytest.raises(Forbidden, match="only staff"):
        concept_alias_create(
            actor=Actor(user=owner),
            alias="k8s",
            target="Kubernetes",
            visibility=None if default else "global",
        )
    assert not Alias.objects.exists()
    assert edges(owner, "k8s") == {("K8s", "runs_on", "AWS")}


def test_only_an_admin_of_the_team_adds_a_team_alias(owner, teammate, team, remember):
    remember(owner, "K8s runs on AWS.", visibility="team")
    remember(teammate, "Kubernetes depends on etcd.", visibility="team", team=team.pk)

    with pytest.raises(Forbidden, match="only its admins"):
        concept_alias_create(
            actor=Actor(user=teammate),
            alias="kubernetes",
            target="K8s",
            visibility="team",
            team=team.pk,
        )
    assert not Alias.objects.exists()
    assert edges(teammate, "k8s") == {("K8s", "runs_on", "AWS")}

    concept_alias_create(
        actor=Actor(user=owner), alias="k8s", target="Kubernetes", visibility="team"
    )

    for user in (owner, teammate):
        assert concept_entity_find_visible(user=user, name="k8s").mentions == 2


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
        ids = {t["text"]: t["id"] for t in user_data(request)["texts"]}
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
                        "source_id": ids["Alice is employed by Acme."],
                    },
                    {
                        "subject": "Acme",
                        "relation": "uses",
                        "object": "Kafka",
                        "object_type": "software",
                        "source_id": ids["Acme runs Kafka."],
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


# --- A model that cites the wrong fact ------------------------------------------------------


def cites_a_private_name_to_the_public_fact(request, count):
    """A model led astray (or a prompt injection in one fact): whatever it was sent, it
    says the global fact about Zephyrcore names Privatevault, a name only Alice's
    private fact holds, beside what each text does state."""
    texts = user_data(request)["texts"]
    triples = []
    for text in texts:
        if "Zephyrcore" in text["text"]:
            public = text["id"]
            triples += [
                {"subject": "Zephyrcore", "relation": "runs on", "object": "Kubelet",
                 "source_id": public},
                {"subject": "Zephyrcore", "relation": "mentioned with", "object": "Privatevault",
                 "source_id": public},
                {"subject": "the Privatevault's keys", "relation": "part of",
                 "object": "Zephyrcore", "source_id": public},
            ]  # fmt: skip
        if "Privatevault" in text["text"]:
            triples.append(
                {"subject": "Privatevault", "relation": "runs on", "object": "Vaultd",
                 "source_id": text["id"]}
            )  # fmt: skip
    if "Privatevault" not in str(triples):
        triples.append(
            {"subject": "Zephyrcore", "relation": "mentioned with", "object": "Privatevault",
             "source_id": texts[0]["id"]}
        )  # fmt: skip
    return completion({"triples": triples})


def test_a_triple_cited_to_a_global_fact_never_names_what_only_a_private_fact_says(
    owner,
    outsider,
    owner_client,
    outsider_client,
    serve,  # noqa: F811
):
    server = serve(cites_a_private_name_to_the_public_fact)
    use_chat_model(server.url)
    # Written without their on-commit extraction: one round of the catch-up reads both.
    fact_create(
        actor=Actor(user=owner),
        data={"content": "Privatevault runs on Vaultd.", "visibility": "private"},
    )
    fact_create(
        actor=Actor(user=outsider),
        data={"content": "Zephyrcore runs on Kubelet.", "visibility": "global"},
    )

    assert concept_graph_sync().facts == 2

    # No request mixed the two facts.
    for request in server.requests:
        sent = str(user_data(request))
        assert not ("Zephyrcore" in sent and "Privatevault" in sent), sent
    api = "/api/concept-graph"
    zephyrcore = outsider_client.get(f"{api}/query", {"entity": "zephyrcore"})
    assert zephyrcore.status_code == 200
    assert {
        (r["subject"]["name"], r["relation"], r["object"]["name"])
        for r in zephyrcore.json()["relations"]
    } == {("Zephyrcore", "runs_on", "Kubelet")}
    reads = [
        zephyrcore,
        outsider_client.get(f"{api}/nodes", {"limit": 200}),
        outsider_client.get(f"{api}/edges", {"limit": 200}),
        outsider_client.get(f"{api}/stats"),
        outsider_client.get("/graph/data/", {"limit": 2000}),
        outsider_client.get("/graph/data/", {"center": "Zephyrcore"}),
        outsider_client.get("/graph/"),
    ]
    for ref in Entity.objects.values_list("ref", flat=True):
        reads.append(outsider_client.get(f"{api}/entities/{ref}"))
        reads.append(outsider_client.get(f"/graph/entities/{ref}/"))
    for response in reads:
        assert response.status_code in (200, 404), response.status_code
        assert "privatevault" not in response.content.decode().casefold(), response.content
    # Asked by name, the private entity is not there (the answer echoes the name asked).
    for path, params in [
        ("/query", {"entity": "Privatevault"}),
        ("/path", {"from": "Zephyrcore", "to": "Privatevault"}),
    ]:
        response = outsider_client.get(f"{api}{path}", params)
        assert response.status_code == 404, response.content
    answer = concept_query(actor=Actor(user=outsider), entity="Zephyrcore")
    assert "privatevault" not in f"{answer.text}{answer.data}".casefold()
    with pytest.raises(NotFound):
        concept_query(actor=Actor(user=outsider), entity="Zephyrcore", to="Privatevault")
    # What each fact does state is kept, and stored only with that fact.
    assert edges(owner, "privatevault") == {("Privatevault", "runs_on", "Vaultd")}
    stored = {
        name
        for triples in FactExtraction.objects.values_list("triples", flat=True)
        for t in triples
        for name in (t["subject"], t["object"])
    }
    assert stored == {"Zephyrcore", "Kubelet", "Privatevault", "Vaultd"}
    public = FactExtraction.objects.get(fact__visibility="global")
    assert "Privatevault" not in str(public.triples)
    assert owner_client.get(f"{api}/path", {"from": "Zephyrcore", "to": "Vaultd"}).json() == {
        "paths": []
    }


def test_facts_of_different_scopes_are_sent_to_the_model_apart(
    owner,
    team,
    serve,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    def answer(request, count):
        return completion({"triples": []})

    server = serve(answer)
    use_chat_model(server.url)
    with django_capture_on_commit_callbacks(execute=True):
        fact_bulk_create(
            actor=Actor(user=owner),
            items=[
                {"content": "Mine alone.", "visibility": "private"},
                {"content": "Mine too.", "visibility": "private"},
                {"content": "For the team.", "visibility": "team"},
                {"content": "For everyone.", "visibility": "global"},
                {"content": "For the blue fleet.", "visibility": "global", "fleet": "blue"},
            ],
        )

    sent = sorted(sorted(t["text"] for t in user_data(r)["texts"]) for r in server.requests)
    assert sent == [
        ["For everyone."],
        ["For the blue fleet."],
        ["For the team."],
        ["Mine alone.", "Mine too."],
    ]
    assert FactExtraction.objects.count() == 5
