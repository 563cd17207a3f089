"""Distillation without a chat model, on a labelled set of one user's facts: summaries
state every fact they cite, grouped by topic; the profile is about the user; every row
the rules wrote says so (API, fact page, the job's result)."""

import pytest

from facts.models import Fact
from facts.services.distillation import facts_distill
from memoryhub.engine.llm.tests.test_offline_distillation import LABELLED
from memoryhub.engine.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def labelled(owner, remember):
    """The labelled facts, stored in order: (fact, topic, the words a summary states)."""
    return [
        (remember(owner, text, category=category, visibility="private"), topic, words)
        for topic, category, text, words in LABELLED
    ]


def active(owner, layer: int):
    return Fact.objects.filter(owner=owner, layer=layer, status="active").order_by("pk")


def test_summaries_state_every_fact_they_cite_grouped_by_topic(owner, labelled):
    result = facts_distill()

    assert result["providers"] == ["offline"]
    summaries = list(active(owner, 2))
    assert 1 <= len(summaries) <= 5
    words = {fact.pk: said for fact, _, said in labelled}
    cited = []
    for summary in summaries:
        sources = list(summary.derived_from.values_list("pk", flat=True))
        cited += sources
        for pk in sources:
            assert words[pk] in summary.content, summary.content
    assert sorted(cited) == sorted(words)  # every fact stated once
    ledgerd = {fact.pk for fact, topic, _ in labelled if topic == "ledgerd"}
    (home,) = [s for s in summaries if ledgerd & set(s.derived_from.values_list("pk", flat=True))]
    assert ledgerd <= set(home.derived_from.values_list("pk", flat=True))
    assert "Ledgerd: written in Rust; runs on Kubernetes in us-east-1" in home.content


def test_the_profile_is_about_the_user(owner, labelled):
    facts_distill()

    (profile,) = active(owner, 3)
    assert "Works as a backend engineer at Acme." in profile.content
    for words in ("Prefers minimal UIs", "structured logging", "Builds Rust backends", "Neovim"):
        assert words in profile.content
    for unrelated in ("Ledgerd", "Envoy", "Alice", "Bob", "PostgreSQL"):
        assert unrelated not in profile.content


def test_a_later_run_restates_the_earlier_facts_with_the_new_ones_in_place(
    owner, labelled, remember
):
    facts_distill()
    (profile,) = active(owner, 3)
    before = {s.pk for s in active(owner, 2)}
    for text in [
        "Ledgerd is deployed every Tuesday.",
        "I prefer tabs over spaces.",
        "Ledgerd exports metrics to Prometheus.",
        "I use Grafana for dashboards.",
        "The API gateway retries failed calls twice.",
        "Ledgerd pages the payments team on errors.",
        "I like short meetings.",
        "Bob manages the release train.",
        "Alice prefers written proposals.",
        "I drink coffee every morning.",
        "Ledgerd was rewritten from Go in 2024.",
        "I dislike long stand-ups.",
    ]:
        remember(owner, text, visibility="private")

    facts_distill()

    summaries = list(active(owner, 2))
    assert len(summaries) <= 5 and not before & {s.pk for s in summaries}
    assert Fact.objects.filter(pk__in=before, status="archived").count() == len(before)
    said = " ".join(s.content for s in summaries)
    assert "written in Rust" in said and "deployed every Tuesday" in said
    assert said.count("Ledgerd:") == 1
    (again,) = active(owner, 3)
    assert again.pk == profile.pk
    assert "tabs over spaces" in again.content and "Ledgerd" not in again.content
    assert "Alice" not in again.content  # her preference is hers


def test_offline_rows_are_labelled_in_the_api_the_fact_page_and_the_job(
    owner, owner_client, agent_client, labelled
):
    from facts.services.distillation import facts_distill_request
    from teams.services import Actor

    job = facts_distill_request(actor=Actor(user=owner))
    job = Job.objects.get(pk=job.pk)
    assert job.result["providers"] == ["offline"]
    page = owner_client.get(f"/jobs/{job.pk}/").content.decode()
    assert "(offline)" in page

    api = agent_client(owner)
    for fact in [*active(owner, 2), *active(owner, 3)]:
        body = api.get(f"/api/memories/{fact.pk}").json()
        assert body["provenance"]["provider"] == "offline"
        page = owner_client.get(f"/memory/{fact.pk}/").content.decode()
        assert '<span class="badge">offline</span> built-in rules' in page
    listed = api.get("/api/memories?layer=2").json()["items"]
    assert listed and {item["provenance"]["provider"] for item in listed} == {"offline"}
    fact = labelled[0][0]
    assert api.get(f"/api/memories/{fact.pk}").json()["provenance"]["provider"] == ""
    assert "built-in rules" not in owner_client.get(f"/memory/{fact.pk}/").content.decode()
