"""Summaries and profiles follow their sources: a fact made private, moved, deleted or
forgotten leaves every row built from it, which is said anew from the sources left in
its own scope, or goes when none remain."""

import pytest

from facts.models import Fact
from facts.search import FACT_FTS
from facts.services.curation import facts_bulk_change, facts_bulk_undo
from facts.services.distillation import facts_distill
from facts.services.update import fact_update
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.llm.tests.conftest import completion, serve, user_data  # noqa: F401
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor

pytestmark = pytest.mark.django_db(transaction=True)

PAYROLL = [
    "The payroll export runs on the first working day.",
    "Payroll codename Heron lives in vault nine.",
    "Payroll corrections go through Maria in finance.",
]


@pytest.fixture
def quoting_model(serve):  # noqa: F811
    """A chat model whose summaries quote every fact they are given."""

    def answer(request, count):
        data = user_data(request)
        if "facts" not in data:  # the concept graph's extraction
            return completion({"triples": []})
        return completion(
            {
                "summaries": [
                    {
                        "text": " ".join(item["text"] for item in data["facts"]),
                        "source_ids": [item["id"] for item in data["facts"]],
                    }
                ]
            }
        )

    return serve(answer)


@pytest.fixture
def distilled(owner, team, remember, quoting_model):
    """alice's three team facts of project payroll, distilled into one team summary and
    one team profile that quote them all."""
    facts = [
        remember(owner, text, visibility="team", project="payroll", team=team.pk)
        for text in PAYROLL
    ]
    memory_config_get()
    MemoryConfig.objects.filter(pk=1).update(
        llm_url=quoting_model.url, llm_model="test-model", distillation_min_facts=3
    )
    facts_distill(owner_id=owner.pk)
    summary = Fact.objects.get(layer=2, project="payroll")
    profile = Fact.objects.get(layer=3, project="payroll")
    assert "vault nine" in summary.content and "vault nine" in profile.content
    return facts, summary, profile


def read_by(client, fact: Fact) -> str:
    response = client.get(f"/api/memories/{fact.pk}")
    assert response.status_code == 200, response.content
    return response.json()["content"]


def test_a_source_made_private_leaves_its_team_summary_and_a_forget_does_not_bring_it_back(
    owner, teammate, distilled, agent_client
):
    (export, vault, corrections), summary, profile = distilled
    alice, bob = agent_client(owner), agent_client(teammate, name="bob")
    moved = alice.patch(
        f"/api/memories/{vault.pk}", {"visibility": "private"}, content_type="application/json"
    )
    assert moved.status_code == 200, moved.content
    assert bob.get(f"/api/memories/{vault.pk}").status_code == 404
    for row in (summary, profile):
        assert "vault nine" not in read_by(bob, row)
    assert "Maria in finance" in read_by(bob, summary)
    assert set(summary.derived_from.values_list("pk", flat=True)) == {export.pk, corrections.pk}
    # The fact waits for a distillation of its own scope.
    vault.refresh_from_db()
    assert not vault.distilled
    searched = bob.get("/api/memories/search", {"q": "vault nine", "mode": "exact"})
    assert summary.pk not in {item["id"] for item in searched.json()["items"]}

    receipt = alice.post(
        "/api/forget", {"topic": "export", "ids": [export.pk]}, content_type="application/json"
    ).json()
    assert sorted(receipt["regenerated"]) == [summary.pk, profile.pk]
    for row in (summary, profile):
        text = read_by(bob, row)
        assert "vault nine" not in text and "first working day" not in text
        assert "Maria in finance" in text
    assert list(summary.derived_from.values_list("pk", flat=True)) == [corrections.pk]


def test_a_summary_left_with_no_source_in_its_scope_goes_and_its_profile_with_it(owner, distilled):
    facts, summary, profile = distilled
    outcome = facts_bulk_change(
        actor=Actor(user=owner), fact_ids=[f.pk for f in facts], action="visibility",
        value="private",
    )  # fmt: skip
    assert sorted(outcome.changed) == sorted(f.pk for f in facts)
    assert not Fact.objects.filter(pk__in=[summary.pk, profile.pk]).exists()
    assert FACT_FTS.content_of(summary.pk) is None and FACT_FTS.content_of(profile.pk) is None
    assert not Fact.objects.filter(pk__in=[f.pk for f in facts], distilled=True).exists()


def test_a_source_moved_to_another_project_leaves_its_summary(owner, distilled):
    (export, vault, corrections), summary, profile = distilled
    fact_update(actor=Actor(user=owner), fact=vault, changes={"project": "vaults"})
    summary.refresh_from_db()
    profile.refresh_from_db()
    assert "vault nine" not in summary.content and "vault nine" not in profile.content
    assert "vault nine" not in summary.source_excerpt
    assert set(summary.derived_from.values_list("pk", flat=True)) == {export.pk, corrections.pk}


def test_a_deleted_source_leaves_its_summary(owner, teammate, distilled, agent_client):
    (export, vault, corrections), summary, profile = distilled
    alice, bob = agent_client(owner), agent_client(teammate, name="bob")
    assert alice.delete(f"/api/memories/{vault.pk}").status_code == 204
    for row in (summary, profile):
        assert "vault nine" not in read_by(bob, row)
    assert set(summary.derived_from.values_list("pk", flat=True)) == {export.pk, corrections.pk}


def test_a_bulk_delete_leaves_the_summary_and_its_undo_brings_back_the_facts_alone(
    owner, distilled
):
    (export, vault, corrections), summary, profile = distilled
    actor = Actor(user=owner)
    outcome = facts_bulk_change(actor=actor, fact_ids=[vault.pk, export.pk], action="delete")
    summary.refresh_from_db()
    profile.refresh_from_db()
    assert "vault nine" not in summary.content and "first working day" not in summary.content
    assert "vault nine" not in profile.content
    assert list(summary.derived_from.values_list("pk", flat=True)) == [corrections.pk]
    facts_bulk_undo(actor=actor, undo_id=outcome.undo.pk)
    vault.refresh_from_db()
    summary.refresh_from_db()
    assert "vault nine" not in summary.content
    # What the summary no longer says is distilled again with the next run.
    assert vault.distilled is False
