"""Curating facts in the Memory manager: adding one (and seeing the merge), changing
many at once (delete, archive, visibility, category) under the rules of a single edit,
undoing a delete or archive for a few seconds, filters by tag, source and dates, tags
edited inline, and chart bars that link to the filtered list."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact, FactUndo, Status
from facts.search import FACT_FTS
from facts.selectors import fact_search
from facts.services import curation, update
from teams.models import AuditEvent
from teams.services import Actor

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def row_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr id="fact-(\d+)"', html)]


def listed(client, **params) -> list[int]:
    response = client.get("/memory/", params, headers=HTMX)
    assert response.status_code == 200, response.content
    return row_ids(response.content.decode())


# --- Adding a fact -------------------------------------------------------------------------


def add(client, **data):
    fields = {"content": "", "category": "fact", "importance": "0.5", "tags": ""}
    return client.post("/memory/add/", {**fields, **data}, headers=HTMX)


def test_a_fact_added_from_the_manager_is_saved_with_every_field(owner_client, owner, team):
    response = add(
        owner_client,
        content="Alice owns billing",
        category="relationship",
        importance="0.8",
        tags="Billing, owners",
        visibility="team",
        team=str(team.pk),
        project="payments",
    )
    assert response.status_code == 200
    fact = Fact.objects.get()
    assert f"Saved as #{fact.pk}." in response.content.decode()
    assert "facts-reload" in response.headers["HX-Trigger"]
    assert (fact.content, fact.category, fact.importance) == (
        "Alice owns billing",
        "relationship",
        0.8,
    )
    assert (fact.tags, fact.visibility, fact.team, fact.project) == (
        ["billing", "owners"],
        "team",
        team,
        "payments",
    )
    assert (fact.owner, fact.created_by) == (owner, owner)
    assert AuditEvent.objects.filter(action="fact.create", target_id=str(fact.pk)).exists()


def test_adding_a_repeat_says_which_fact_it_merged_into(owner_client, owner, remember):
    first = remember(owner, "Deploys happen on Tuesday afternoons")
    response = add(owner_client, content="deploys happen on tuesday afternoons")
    assert f"Merged into #{first.pk}" in response.content.decode()
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 1


def test_adding_without_javascript_redirects_with_the_message(owner_client):
    response = owner_client.post(
        "/memory/add/",
        {"content": "Backups run at 02:00", "category": "fact", "importance": "0.5"},
        follow=True,
    )
    fact = Fact.objects.get()
    assert f"Saved as #{fact.pk}." in response.content.decode()
    refused = owner_client.post(
        "/memory/add/", {"content": "x", "category": "fact", "importance": "7"}
    )
    assert refused.status_code == 400
    assert "between 0 and 1" in refused.content.decode()
    assert "x</textarea>" in refused.content.decode()  # what was typed stays
    assert Fact.objects.count() == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"content": "   "}, "Content must not be empty"),
        ({"content": "x", "importance": "7"}, "between 0 and 1"),
        ({"content": "x", "category": "gossip"}, "Category"),
        ({"content": "x", "visibility": "public"}, "Visibility"),
        ({"content": "x", "team": "999999"}, "Unknown team"),
        ({"content": "x", "team": "Elsewhere"}, "Unknown team"),
        ({"content": "x", "visibility": "team"}, "Team visibility needs a team"),
        ({"content": "x" * 2001}, "the maximum is 2000"),
        ({"content": "x", "tags": ",".join(f"t{i}" for i in range(30))}, "At most 20 tags"),
        ({"content": "x", "project": "p" * 201}, "Project"),
        ({"content": "x\x00y"}, "Null characters"),
    ],
)
def test_bad_input_to_add_is_shown_in_the_form_and_writes_nothing(
    owner_client, other_team, data, message
):
    response = add(owner_client, **data)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert 'id="add-fact"' in html and "open" in html
    assert not Fact.objects.exists()


def test_the_team_choices_are_the_users_own_teams(owner_client, team, other_team):
    html = owner_client.get("/memory/").content.decode()
    form = html.split('id="add-fact"')[1].split("</details>")[0]
    assert "Platform" in form and "Elsewhere" not in form


def test_anonymous_cannot_add(client):
    response = client.post("/memory/add/", {"content": "x"})
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert not Fact.objects.exists()


# --- Changing many facts -------------------------------------------------------------------


@pytest.fixture
def facts(owner, teammate, team, remember):
    """Alice's private and team facts, and Bob's own team fact."""
    return {
        "private": [remember(owner, f"Alice's private note number {i}") for i in range(3)],
        "team": [
            remember(owner, f"Team runbook step {i} restarts worker {i}", visibility="team")
            for i in range(2)
        ],
        "bobs": remember(
            teammate, "Bob's team note about the kafka cluster", visibility="team", team=team.pk
        ),
    }


def bulk(client, ids, action, htmx=True):
    data = {"ids": [str(i) for i in ids], "action": action}
    return client.post("/memory/bulk/", data, headers=HTMX if htmx else {})


def test_the_owner_deletes_several_facts_at_once_and_gone_means_gone(owner_client, facts):
    doomed = [f.pk for f in facts["private"][:2]]
    response = bulk(owner_client, doomed, "delete")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Deleted 2 facts." in html
    assert "Undo" in html
    assert "facts-reload" in response.headers["HX-Trigger"]
    assert not Fact.objects.filter(pk__in=doomed).exists()
    assert not FACT_FTS.ids() & set(doomed)
    assert not set(listed(owner_client)) & set(doomed)
    assert AuditEvent.objects.filter(action="fact.delete").count() == 2


def test_undo_brings_deleted_facts_back_as_they_were(
    owner, owner_client, facts, teammate, django_capture_on_commit_callbacks
):
    team_fact = facts["team"][0]
    bulk(owner_client, [team_fact.pk, facts["private"][0].pk], "delete")
    undo = FactUndo.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(f"/memory/undo/{undo.pk}/", headers=HTMX)
    assert response.status_code == 200
    assert "Restored 2 facts." in response.content.decode()
    back = Fact.objects.get(pk=team_fact.pk)
    assert (back.content, back.visibility, back.team_id) == (
        team_fact.content,
        "team",
        team_fact.team_id,
    )
    # Searchable and readable again, by its team too; and the undo is spent.
    assert [
        f.pk for f in fact_search(user=teammate, query="runbook step 0", mode="exact").facts
    ] == [back.pk]
    assert back.embedding_model  # embedded again
    assert not FactUndo.objects.exists()
    assert owner_client.post(f"/memory/undo/{undo.pk}/", headers=HTMX).status_code == 404
    assert AuditEvent.objects.filter(action="fact.restore").count() == 2


def test_only_the_person_who_deleted_can_undo(
    owner_client, teammate_client, outsider_client, facts
):
    bulk(owner_client, [facts["team"][0].pk], "delete")
    undo = FactUndo.objects.get()
    for client in (teammate_client, outsider_client):
        assert client.post(f"/memory/undo/{undo.pk}/", headers=HTMX).status_code == 404
    assert not Fact.objects.filter(pk=facts["team"][0].pk).exists()


def test_an_undo_runs_out_and_the_purge_drops_the_deleted_copy(owner, owner_client, facts):
    bulk(owner_client, [facts["private"][0].pk], "delete")
    undo = FactUndo.objects.get()
    later = timezone.now() + timedelta(seconds=curation.UNDO_SECONDS + 1)
    FactUndo.objects.filter(pk=undo.pk).update(expires_at=timezone.now())
    response = owner_client.post(f"/memory/undo/{undo.pk}/", headers=HTMX)
    assert response.status_code == 409
    assert "Too late to undo" in response.content.decode()
    assert curation.fact_undo_purge(now=later) == 1
    assert not FactUndo.objects.exists()
    assert not Fact.objects.filter(pk=facts["private"][0].pk).exists()


def test_the_purge_task_keeps_an_undo_still_in_its_time(owner_client, facts):
    from facts.tasks import fact_undo_purge

    bulk(owner_client, [facts["private"][0].pk], "delete")
    assert fact_undo_purge.delay().get() == 0
    assert FactUndo.objects.count() == 1


def test_a_teammate_cannot_bulk_delete_the_owners_facts(teammate_client, facts):
    theirs = [f.pk for f in facts["private"]] + [f.pk for f in facts["team"]]
    response = bulk(teammate_client, theirs, "delete")
    assert response.status_code == 403
    html = response.content.decode()
    assert "Deleted 0 facts. 5 refused" in html
    assert "Undo" not in html
    assert Fact.objects.filter(pk__in=theirs).count() == 5
    assert not FactUndo.objects.exists()


def test_mixed_selections_change_what_is_allowed_and_count_the_rest(teammate_client, facts):
    chosen = [facts["bobs"].pk, facts["team"][0].pk, facts["private"][0].pk]
    response = bulk(teammate_client, chosen, "archive")
    assert response.status_code == 200
    assert "Archived 1 fact. 2 refused" in response.content.decode()
    statuses = dict(Fact.objects.filter(pk__in=chosen).values_list("pk", "status"))
    assert statuses == {
        facts["bobs"].pk: "archived",
        facts["team"][0].pk: "active",
        facts["private"][0].pk: "active",
    }


def test_a_team_admin_changes_a_teammates_team_facts(owner_client, facts):
    response = bulk(owner_client, [facts["bobs"].pk], "category:pattern")
    assert "Changed the category of 1 fact." in response.content.decode()
    assert Fact.objects.get(pk=facts["bobs"].pk).category == "pattern"


def test_a_team_admin_may_narrow_a_teammates_team_facts_but_never_widen_them(
    owner_client, teammate_client, facts
):
    bobs = facts["bobs"].pk
    response = bulk(owner_client, [bobs, facts["team"][0].pk], "visibility:global")
    html = response.content.decode()
    assert "Changed the visibility of 1 fact." in html
    assert "1 refused: Only bob, who owns this fact, can let more people read it" in html
    assert Fact.objects.get(pk=bobs).visibility == "team"
    assert Fact.objects.get(pk=facts["team"][0].pk).visibility == "global"
    response = bulk(owner_client, [bobs], "visibility:private")
    assert "Changed the visibility of 1 fact." in response.content.decode()
    assert Fact.objects.get(pk=bobs).visibility == "private"
    assert bobs in listed(teammate_client)  # bob keeps his fact
    assert bobs not in listed(owner_client)


def test_an_outsider_gets_nothing_and_learns_nothing(outsider_client, facts):
    every = [f.pk for f in Fact.objects.all()]
    for action in ("delete", "archive", "visibility:global", "category:fact"):
        response = bulk(outsider_client, every, action)
        assert response.status_code == 403
        html = response.content.decode()
        assert f"{len(every)} refused" in html
        for fact in Fact.objects.all():
            assert fact.content not in html
    assert Fact.objects.count() == len(every)
    assert set(Fact.objects.values_list("status", flat=True)) == {"active"}
    assert set(Fact.objects.values_list("visibility", flat=True)) <= {"private", "team"}


def test_archive_can_be_undone_to_the_status_each_fact_had(owner, owner_client, facts):
    first, second = facts["private"][:2]
    update.fact_update(actor=Actor(user=owner), fact=second, changes={"status": "pending_review"})
    response = bulk(owner_client, [first.pk, second.pk], "archive")
    assert "Archived 2 facts." in response.content.decode()
    assert set(
        Fact.objects.filter(pk__in=[first.pk, second.pk]).values_list("status", flat=True)
    ) == {"archived"}
    undo = FactUndo.objects.get()
    assert undo.kind == "archive"
    owner_client.post(f"/memory/undo/{undo.pk}/", headers=HTMX)
    assert Fact.objects.get(pk=first.pk).status == "active"
    assert Fact.objects.get(pk=second.pk).status == "pending_review"


def test_visibility_changes_follow_the_single_edit_rules(owner, owner_client, facts, remember):
    personal = remember(owner, "A note with no team at all", team="")
    from teams.models import MemorySettings

    MemorySettings.objects.filter(user=owner).update(active_team=None)
    personal.team_id = None
    Fact.objects.filter(pk=personal.pk).update(team=None)
    response = bulk(owner_client, [facts["private"][0].pk, personal.pk], "visibility:team")
    html = response.content.decode()
    assert "Changed the visibility of 1 fact." in html
    assert "1 refused: Team visibility needs a team" in html
    assert Fact.objects.get(pk=facts["private"][0].pk).visibility == "team"
    assert Fact.objects.get(pk=personal.pk).visibility == "private"


def test_setting_what_is_already_set_counts_as_already_so(owner_client, facts):
    response = bulk(owner_client, [f.pk for f in facts["private"]], "visibility:private")
    assert "Changed the visibility of 0 facts. 3 already so." in response.content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"action": "delete"}, "Select at least one fact."),
        ({"ids": ["1"], "action": ""}, "This field is required."),
        ({"ids": ["1"], "action": "explode"}, "Select a valid choice"),
        ({"ids": ["1"], "action": "visibility:public"}, "Select a valid choice"),
        ({"ids": ["abc"], "action": "delete"}, "Not a fact id"),
        ({"ids": ["-1"], "action": "delete"}, "Not a fact id"),
        ({"ids": ["1" + "0" * 30], "action": "delete"}, "Not a fact id"),
        ({"ids": ["²"], "action": "delete"}, "Not a fact id"),
        ({"ids": [str(i) for i in range(1, 600)], "action": "delete"}, "At most 500"),
    ],
)
def test_bad_bulk_input_is_a_400_that_changes_nothing(owner_client, facts, data, message):
    before = sorted(Fact.objects.values_list("pk", "status", "visibility"))
    response = owner_client.post("/memory/bulk/", data, headers=HTMX)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert sorted(Fact.objects.values_list("pk", "status", "visibility")) == before


def test_bulk_needs_post_and_login(client, owner_client, facts):
    assert owner_client.get("/memory/bulk/").status_code == 405
    response = client.post("/memory/bulk/", {"ids": ["1"], "action": "delete"})
    assert response.status_code == 302
    assert Fact.objects.filter(pk=1).exists() == Fact.objects.filter(pk=1).exists()


def test_bulk_without_javascript_redirects_with_the_count(owner_client, facts):
    response = bulk(owner_client, [facts["private"][0].pk], "archive", htmx=False)
    assert response.status_code == 302
    page = owner_client.get(response["Location"]).content.decode()
    assert "Archived 1 fact." in page


def test_the_list_offers_boxes_only_for_facts_the_user_may_change(teammate_client, facts):
    html = teammate_client.get("/memory/").content.decode()
    boxes = {int(pk) for pk in re.findall(r'name="ids" value="(\d+)"', html)}
    assert boxes == {facts["bobs"].pk}
    assert 'data-select-all="ids"' in html


# --- Filters, inline tags, chart links ------------------------------------------------------


def test_filters_by_tag_source_and_date_range(owner, owner_client, remember):
    tagged = remember(owner, "Kafka keeps seven days", tags=["kafka", "retention"])
    observed = remember(owner, "Bob answers late at night", source="observed")
    old = remember(owner, "The old office was in Leeds")
    Fact.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=40))
    assert listed(owner_client, tag="Kafka") == [tagged.pk]
    assert listed(owner_client, tag="kaf") == []
    assert listed(owner_client, source="observed") == [observed.pk]
    day = (timezone.localdate() - timedelta(days=40)).isoformat()
    assert listed(owner_client, created_from=day, created_to=day) == [old.pk]
    recent = (timezone.localdate() - timedelta(days=1)).isoformat()
    assert set(listed(owner_client, created_from=recent)) == {tagged.pk, observed.pk}
    assert listed(owner_client, q="kafka", tag="retention") == [tagged.pk]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"source": "rumour"}, "source"),
        ({"created_from": "yesterday"}, "Enter a valid date"),
        ({"created_from": "2025-02-01", "created_to": "2025-01-01"}, "comes before its start"),
        ({"tag": "t" * 65}, "at most 64"),
    ],
)
def test_bad_filter_values_answer_400_with_a_message(owner_client, facts, params, message):
    response = owner_client.get("/memory/", params, headers=HTMX)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_tags_are_edited_inline(owner_client, facts):
    fact = facts["private"][0]
    editor = owner_client.get(f"/memory/{fact.pk}/tags/", {"edit": "1"}, headers=HTMX)
    assert 'name="tags"' in editor.content.decode()
    response = owner_client.post(
        f"/memory/{fact.pk}/tags/", {"tags": "Ops, On Call, ops"}, headers=HTMX
    )
    assert response.status_code == 200
    assert "facts-changed" in response.headers["HX-Trigger"]
    html = response.content.decode()
    assert "?tag=on%20call" in html
    assert Fact.objects.get(pk=fact.pk).tags == ["ops", "on call"]
    cancel = owner_client.get(f"/memory/{fact.pk}/tags/", headers=HTMX).content.decode()
    assert "edit tags" in cancel and 'name="tags"' not in cancel


def test_bad_tags_are_refused_in_place(owner_client, facts):
    fact = facts["private"][0]
    many = ",".join(f"t{i}" for i in range(30))
    response = owner_client.post(f"/memory/{fact.pk}/tags/", {"tags": many}, headers=HTMX)
    assert response.status_code == 400
    assert "At most 20 tags" in response.content.decode()
    assert Fact.objects.get(pk=fact.pk).tags == []


def test_tags_of_others_cannot_be_edited(teammate_client, outsider_client, facts):
    team_fact = facts["team"][0]
    assert teammate_client.post(f"/memory/{team_fact.pk}/tags/", {"tags": "x"}).status_code == 403
    editor = teammate_client.get(f"/memory/{team_fact.pk}/tags/", {"edit": "1"}, headers=HTMX)
    assert 'name="tags"' not in editor.content.decode()
    assert outsider_client.post(f"/memory/{team_fact.pk}/tags/", {"tags": "x"}).status_code == 404
    assert Fact.objects.get(pk=team_fact.pk).tags == []


def test_chart_bars_link_to_the_filtered_list_and_the_list_comes_first(owner_client, facts):
    html = owner_client.get("/memory/").content.decode()
    assert 'href="/memory/?category=fact"' in html
    assert 'href="/memory/?layer=1"' in html
    assert html.index('id="fact-results"') < html.index('id="memory-chart"')


def test_a_deleted_team_fact_is_gone_for_the_team_while_its_undo_waits(
    owner_client, teammate, teammate_client, facts
):
    team_fact = facts["team"][0]
    bulk(owner_client, [team_fact.pk], "delete")
    assert team_fact.pk not in listed(teammate_client)
    assert team_fact.pk not in listed(teammate_client, q="runbook step restarts worker")
    recalled = teammate_client.post(
        "/memory/recall/", {"query": "runbook step 0 restarts worker 0"}, headers=HTMX
    )
    assert team_fact.content not in recalled.content.decode()
    assert teammate_client.get(f"/memory/{team_fact.pk}/").status_code == 404


def test_undo_leaves_deleted_a_fact_the_undoer_may_no_longer_change(
    owner, owner_client, facts, team
):
    from teams.models import Membership

    bobs = facts["bobs"]
    bulk(owner_client, [bobs.pk, facts["private"][0].pk], "delete")
    Membership.objects.filter(user=owner, team=team).update(role="member")
    undo = FactUndo.objects.get()
    response = owner_client.post(f"/memory/undo/{undo.pk}/", headers=HTMX)
    assert "Restored 1 fact. 1 left as they are" in response.content.decode()
    assert not Fact.objects.filter(pk=bobs.pk).exists()
    assert Fact.objects.filter(pk=facts["private"][0].pk).exists()


def test_undo_restores_a_merged_facts_links_to_its_earlier_wordings(owner, owner_client, remember):
    first = remember(owner, "The release train leaves every second Thursday")
    merged = remember(owner, "the release train leaves every second thursday")
    assert merged.pk == first.pk
    parents = set(merged.derived_from.values_list("pk", flat=True))
    assert parents
    bulk(owner_client, [merged.pk], "delete")
    owner_client.post(f"/memory/undo/{FactUndo.objects.get().pk}/", headers=HTMX)
    back = Fact.objects.get(pk=merged.pk)
    assert set(back.derived_from.values_list("pk", flat=True)) == parents


def test_forgetting_drops_the_copies_a_recent_delete_kept(owner, owner_client, facts):
    bulk(owner_client, [facts["private"][0].pk], "delete")
    assert FactUndo.objects.count() == 1
    response = owner_client.post(
        "/api/forget",
        {"topic": "private note", "ids": [facts["private"][1].pk]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert not FactUndo.objects.exists()
