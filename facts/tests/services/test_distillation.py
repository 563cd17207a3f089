"""Layered distillation: new facts of a scope roll into linked summaries, summaries into
one profile per scope; scopes never mix; a model failure writes nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact
from facts.recall import fact_recall
from facts.services.distillation import facts_distill, facts_distill_due
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.llm.tests.conftest import Reply, completion, serve, user_data  # noqa: F401
from memoryhub.engine.models import Job, MemoryConfig
from teams.services import Actor

pytestmark = pytest.mark.django_db(transaction=True)

PRIVATE = [
    f"Alice reviews pull request {n} about the billing export before lunch" for n in range(12)
]
TEAM = [f"The platform team rotates the on-call pager for service {n} weekly" for n in range(12)]


@pytest.fixture
def facts(owner, team, remember):
    private = [remember(owner, text, visibility="private") for text in PRIVATE]
    shared = [remember(owner, text, visibility="team") for text in TEAM]
    return private, shared


def layers(owner) -> dict[int, int]:
    return {layer: Fact.objects.filter(owner=owner, layer=layer).count() for layer in (1, 2, 3)}


def test_each_scope_gets_linked_summaries_and_one_profile_from_its_own_facts(owner, facts):
    private, shared = facts
    result = facts_distill()
    assert result["scopes"] == 2 and result["providers"] == ["offline"]
    for originals in (private, shared):
        visibility = originals[0].visibility
        summaries = Fact.objects.filter(layer=2, visibility=visibility)
        assert 1 <= summaries.count() <= 5
        cited = {p.pk for s in summaries for p in s.derived_from.all()}
        # A summary is built only from facts of its own visibility and team.
        assert cited <= {f.pk for f in originals} and cited
        assert all(Fact.objects.get(pk=pk).distilled for pk in cited)
        (profile,) = Fact.objects.filter(layer=3, visibility=visibility)
        assert profile.category == "profile"
        assert {p.pk for p in profile.derived_from.all()} == {s.pk for s in summaries}
    assert layers(owner)[3] == 2


def test_summaries_are_recalled_like_any_fact_and_read_only_by_their_sources_readers(
    owner, teammate, facts, agent_client
):
    facts_distill()
    team_summary = Fact.objects.get(layer=2, visibility="team")
    private_summary = Fact.objects.filter(layer=2, visibility="private").first()
    mine = fact_recall(actor=Actor(user=owner), query=team_summary.content, max_items=50)
    shown = {item.id for item in mine.items}
    # Recalled, unless a fact it states or the profile stating it ranks above it (a
    # block holds one of them).
    restating = {
        *team_summary.derived_from.values_list("pk", flat=True),
        *team_summary.derivatives.values_list("pk", flat=True),
    }
    assert team_summary.pk in shown or mine.items[0].id in restating
    bob = agent_client(teammate)
    assert bob.get(f"/api/memories/{team_summary.pk}").status_code == 200
    assert bob.get(f"/api/memories/{private_summary.pk}").status_code == 404
    recalled = fact_recall(actor=Actor(user=teammate), query=private_summary.content, max_items=50)
    assert not Fact.objects.filter(
        pk__in=[item.id for item in recalled.items], visibility="private"
    ).exists()


def test_a_second_run_rewrites_the_profile_in_place(owner, facts, remember):
    facts_distill()
    (profile,) = Fact.objects.filter(layer=3, visibility="private")
    for n in range(12):
        remember(owner, f"Alice pairs with Bob on the invoice parser, session {n}")
    facts_distill()
    (again,) = Fact.objects.filter(layer=3, visibility="private")
    assert again.pk == profile.pk
    active = Fact.objects.filter(layer=2, visibility="private", status="active")
    assert set(again.derived_from.values_list("pk", flat=True)) == set(
        active.values_list("pk", flat=True)
    )


def test_runs_after_runs_keep_at_most_five_summaries_folding_the_earlier_ones_in(owner, remember):
    topics = ["billing export", "invoice parser", "search index", "release train", "pager"]
    for run, topic in enumerate(topics * 2):
        for n in range(12):
            remember(owner, f"Alice works on the {topic} in week {run}, task {n} of the sprint")
        facts_distill()
        summaries = Fact.objects.filter(owner=owner, layer=2)
        assert 1 <= summaries.filter(status="active").count() <= 5, f"after run {run + 1}"
    history = summaries.filter(status="archived")
    assert history.exists()
    # Each earlier summary is the history of later ones, which draw on its facts too.
    for earlier in history:
        later = Fact.objects.filter(layer=2, derived_from=earlier, status="active")
        assert later.exists()
        stated = set(earlier.derived_from.filter(layer=1).values_list("pk", flat=True))
        drawn = set(
            Fact.derived_from.through.objects.filter(from_fact__in=later).values_list(
                "to_fact_id", flat=True
            )
        )
        waiting = set(
            Fact.objects.filter(pk__in=stated, distilled=False).values_list("pk", flat=True)
        )
        assert stated <= drawn | waiting
    (profile,) = Fact.objects.filter(owner=owner, layer=3)
    assert set(profile.derived_from.values_list("pk", flat=True)) == set(
        summaries.filter(status="active").values_list("pk", flat=True)
    )


def test_forgetting_a_fact_reaches_the_summaries_that_folded_its_summary_in(owner, remember):
    from facts.services.forgetting import facts_forget

    first = [
        remember(owner, f"The billing export runs nightly at {n} am for region eu")
        for n in range(12)
    ]
    facts_distill()
    for n in range(12):
        remember(owner, f"The invoice parser handles {n} currencies for the eu region")
    facts_distill()
    said = " ".join(
        Fact.objects.filter(owner=owner, layer=2, status="active").values_list("content", flat=True)
    )
    quoted = [fact for fact in first if fact.content.removeprefix("The billing export ") in said]
    assert quoted, "a later summary states a fact of the first run"

    facts_forget(actor=Actor(user=owner), fact_ids=[quoted[0].pk])

    everything = " ".join(Fact.objects.filter(owner=owner).values_list("content", flat=True))
    assert quoted[0].content.removeprefix("The billing export ") not in everything


def test_a_scope_below_the_minimum_is_left_alone(owner, remember):
    for n in range(5):
        remember(owner, f"A lone fact number {n} about the cafeteria menu")
    assert facts_distill()["scopes"] == 0
    assert layers(owner) == {1: 5, 2: 0, 3: 0}


def test_a_model_failing_halfway_writes_nothing(owner, facts, serve, settings):  # noqa: F811
    """The model answers the first scope, then fails: no summary, no profile, and every
    source is as it was; the failure is recorded."""

    def answer(request, count):
        if count > 1:
            return Reply(status=500, body={"error": "overloaded"})
        ids = [item["id"] for item in user_data(request)["facts"]]
        return completion(
            {"summaries": [{"text": "Alice reviews billing PRs.", "source_ids": ids}]}
        )

    server = serve(answer)
    settings.LLM_RETRIES = 0
    MemoryConfig.objects.filter(pk=1).update(llm_url=server.url, llm_model="test-model")
    from memoryhub.engine.llm import ChatModelError

    with pytest.raises(ChatModelError):
        facts_distill()
    assert layers(owner) == {1: 24, 2: 0, 3: 0}
    assert not Fact.objects.filter(distilled=True).exists()
    assert MemoryConfig.objects.get(pk=1).llm_error_count >= 1


def test_distill_now_is_a_job_its_owner_follows(owner, outsider, facts, agent_client):
    client = agent_client(owner)
    response = client.post("/api/memories/distill-now", {}, content_type="application/json")
    assert response.status_code == 202
    job_id = response.json()["job"]
    body = client.get(f"/api/jobs/{job_id}").json()
    assert (body["state"], body["progress"]) == ("done", 1.0)
    assert body["result"]["scopes"] == 2 and len(body["result"]["profiles"]) == 2
    assert agent_client(outsider, name="other").get(f"/api/jobs/{job_id}").status_code == 404
    stats = {row["layer"]: row for row in client.get("/api/memories/layer-stats").json()}
    assert stats[2]["total"] >= 2 and stats[3]["total"] == 2 and stats[1]["distilled"] > 0
    assert Job.objects.get(pk=job_id).kind == "distill"


def test_the_schedule_runs_only_when_switched_on_and_due(owner, facts):
    assert facts_distill_due() is None  # off by default
    MemoryConfig.objects.filter(pk=1).update(distillation_enabled=True)
    assert facts_distill_due()["scopes"] == 2
    assert facts_distill_due() is None  # just ran: not due for 12 hours
    MemoryConfig.objects.filter(pk=1).update(distilled_at=timezone.now() - timedelta(hours=13))
    assert facts_distill_due() is not None


def test_a_summarys_sources_are_one_click_away_for_those_who_read_them(
    owner, teammate, facts, owner_client, teammate_client
):
    facts_distill()
    summary = Fact.objects.filter(layer=2, visibility="private").first()
    source = summary.derived_from.first()
    page = owner_client.get(f"/memory/{summary.pk}/").content.decode()
    assert "Drawn from" in page and f'href="/memory/{source.pk}/"' in page
    assert "Rolled into" in owner_client.get(f"/memory/{source.pk}/").content.decode()
    team_summary = Fact.objects.filter(layer=2, visibility="team").first()
    profile = Fact.objects.get(layer=3, visibility="team")
    page = teammate_client.get(f"/memory/{team_summary.pk}/").content.decode()
    assert f'href="/memory/{profile.pk}/"' in page  # the team's profile, which Bob reads


def test_a_fleets_facts_are_distilled_apart_from_those_of_no_fleet(owner, team, remember):
    memory_config_get()  # the settings row
    MemoryConfig.objects.filter(pk=1).update(distillation_min_facts=3)
    for n in range(3):
        remember(owner, f"The build fleet caches wheels on runner {n}.", fleet="build")
        remember(owner, f"The office printer on floor {n} needs toner.")
    facts_distill(owner_id=owner.pk)
    summaries = Fact.objects.filter(layer=2)
    assert sorted(summaries.values_list("fleet", flat=True)) == ["", "build"]
    for summary in summaries:
        assert {p.fleet for p in summary.derived_from.all()} == {summary.fleet}
    assert sorted(Fact.objects.filter(layer=3).values_list("fleet", flat=True)) == ["", "build"]
