"""Role presets: each agent role's default recall, shipped with the defaults and edited
by staff in the admin; recall(role=...) and the per-turn recall of a role's token apply
it (on a fixed clock)."""

import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client

from facts.learnings import learning_create
from facts.models import Fact
from memoryhub.engine.errors import InvalidInput, NotFound
from memoryhub.surface.models import RolePreset
from memoryhub.surface.recall import tiered_recall
from teams.models import AuditEvent
from teams.services import Actor
from wiki.models import Page
from wiki.services import wiki_page_upsert

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("role_presets")]

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_the_shipped_presets_follow_the_roles_defaults():
    presets = dict(RolePreset.objects.values_list("role", "entries"))
    assert presets["scout"] == presets["sentry"] == presets["concierge"] == []
    assert presets["architect"] == [
        {"tier": "org", "include": ["pattern"]},
        {"tier": "project", "include": ["pdd"]},
    ]
    assert presets["reviewer"] == [
        {"tier": "org", "include": ["anti-pattern"]},
        {"tier": "project", "include": ["adr"]},
    ]
    assert presets["diagnostician"] == [
        {"tier": "skill", "fingerprint": "*"},
        {"tier": "org", "include": ["environment"]},
    ]
    assert presets["strategist"] == [
        {"tier": "org"},
        {"tier": "skill", "since": "90d", "scope": "cross"},
    ]


@pytest.fixture
def library(owner):
    """Pages of every kind the presets read, and learnings of two fleets."""
    actor = Actor(user=owner)
    for title, kind, project in (
        ("Retry with backoff", "pattern", ""),
        ("Shared mutable config", "anti-pattern", ""),
        ("Staging DNS flaps", "environment", ""),
        ("Vendor quirks", "note", ""),
        ("Checkout PDD", "pdd", "CAND-1"),
        ("Checkout ADR 1", "adr", "CAND-1"),
    ):
        wiki_page_upsert(actor=actor, title=title, content=f"{title}.", kind=kind, project=project)
    Page.objects.update(updated_at=NOW)
    learnings = {}
    for key, fleet, fingerprint, days in (
        ("blue-fp", "blue", "rollout-stall", 1),
        ("blue-plain", "blue", "", 1),
        ("red-recent", "red", "", 10),
        ("red-old", "red", "", 120),
    ):
        fact = learning_create(
            actor=actor,
            data={"skill": "deploy", "content": f"Learning {key}", "fleet": fleet,
                  "fingerprint": fingerprint},
        )  # fmt: skip
        Fact.objects.filter(pk=fact.pk).update(created_at=NOW - timedelta(days=days))
        learnings[key] = fact.pk
    return learnings


def paths(items):
    return [item["path"] for item in items]


def test_an_architect_reads_the_patterns_that_worked_and_the_projects_pdd(owner, library):
    items = tiered_recall(actor=Actor(user=owner), role="architect", project="CAND-1", now=NOW)
    assert paths(items) == ["wiki/-/retry-with-backoff", "wiki/CAND-1/checkout-pdd"]
    assert items[0]["score"] == pytest.approx(0.5 + 0.15)
    # Without a project the project read is left out.
    alone = tiered_recall(actor=Actor(user=owner), role="architect", now=NOW)
    assert paths(alone) == ["wiki/-/retry-with-backoff"]


def test_a_reviewer_reads_anti_patterns_and_the_projects_adrs(owner, library):
    items = tiered_recall(actor=Actor(user=owner), role="reviewer", project="CAND-1", now=NOW)
    assert paths(items) == ["wiki/-/shared-mutable-config", "wiki/CAND-1/checkout-adr-1"]


def test_a_diagnostician_reads_fingerprinted_learnings_and_environment_issues(
    owner, make_token, library
):
    token, _ = make_token(owner, fleet="blue", role="diagnostician")
    items = tiered_recall(actor=Actor(user=owner, token=token), role="diagnostician", now=NOW)
    assert paths(items) == ["wiki/-/staging-dns-flaps", f"skill/deploy/{library['blue-fp']}"]
    assert items[1]["score"] == pytest.approx(0.5 * 0.5 ** (1 / 30) + 0.15, abs=1e-4)


def test_a_strategist_reads_the_org_and_90_days_of_skill_across_fleets_audited(
    owner, make_token, library
):
    token, _ = make_token(owner, fleet="blue", role="strategist")
    agent = Actor(user=owner, token=token)
    items = tiered_recall(actor=agent, role="strategist", limit=50, now=NOW)
    learned = [p for p in paths(items) if p.startswith("skill/")]
    assert sorted(learned) == sorted(
        f"skill/deploy/{library[k]}" for k in ("blue-fp", "blue-plain", "red-recent")
    )
    assert len([p for p in paths(items) if p.startswith("wiki/-/")]) == 4
    event = AuditEvent.objects.get(action="recall.cross_fleet")
    assert event.details["justification"] == "the strategist role preset"
    assert event.actor_token_id == token.pk
    # With a tier as well, only the preset's reads of that tier.
    skill_only = tiered_recall(actor=agent, role="strategist", tier="skill", limit=50, now=NOW)
    assert sorted(paths(skill_only)) == sorted(learned)


def test_scouts_sentries_and_concierges_recall_nothing_by_default(owner, library):
    for role in ("scout", "sentry", "concierge"):
        assert tiered_recall(actor=Actor(user=owner), role=role, project="CAND-1") == []


def test_an_unknown_role_and_bad_input_are_refused_clearly(owner):
    with pytest.raises(NotFound, match="no preset for the role 'astronaut'"):
        tiered_recall(actor=Actor(user=owner), role="astronaut")
    with pytest.raises(InvalidInput, match="limit is between 1 and 50"):
        tiered_recall(actor=Actor(user=owner), role="scout", limit=0)
    with pytest.raises(InvalidInput, match="Unknown tier"):
        tiered_recall(actor=Actor(user=owner), role="scout", tier="galaxy")
    with pytest.raises(InvalidInput, match="Name a tier"):
        tiered_recall(actor=Actor(user=owner))


def test_the_per_turn_recall_of_a_role_token_adds_its_presets_hits(
    owner, make_token, remember, library
):
    remember(owner, "Retry budgets are three attempts")
    _, secret = make_token(owner, name="arch", role="architect")
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    body = {"query": "retry", "project": "CAND-1"}
    answer = client.post("/api/recall", json.dumps(body), content_type="application/json").json()
    assert answer["role"] == "architect"
    # The preset's reads, narrowed by the message as any tiered recall with a query.
    assert paths(answer["role_items"]) == ["wiki/-/retry-with-backoff"]
    assert answer["block"].startswith("## Recalled Facts")
    assert "## Recalled for the architect role\n\n- [wiki/-/retry-with-backoff]" in answer["block"]
    # A token without a role, or with a role that has no preset, adds nothing.
    for role in ("", "astronaut"):
        _, plain = make_token(owner, name=f"plain-{role}", role=role)
        client = Client(headers={"Authorization": f"Bearer {plain}"})
        answer = client.post("/api/recall", json.dumps(body), content_type="application/json")
        assert answer.status_code == 200
        assert answer.json()["role_items"] == []
        assert "role" not in answer.json()["block"]


def test_tiered_recall_by_role_over_rest_the_tool_and_the_command_line(owner, make_token, library):
    _, secret = make_token(owner, role="reviewer")
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    body = {"role": "reviewer", "project": "CAND-1"}
    rest = client.post("/api/recall/tiered", json.dumps(body), content_type="application/json")
    assert paths(rest.json()["items"]) == [
        "wiki/-/shared-mutable-config",
        "wiki/CAND-1/checkout-adr-1",
    ]
    tool = client.post(
        "/api/tools/tiered_recall", json.dumps(body), content_type="application/json"
    )
    assert paths(tool.json()["data"]["items"]) == paths(rest.json()["items"])
    out = io.StringIO()
    call_command("recall", "--role", "reviewer", "--project", "CAND-1", "--user", owner.username,
                 "--json", stdout=out)  # fmt: skip
    assert paths(json.loads(out.getvalue())) == paths(rest.json()["items"])
    for bad in ({"role": "x" * 500}, {"role": "astronaut"}, {"role": "reviewer", "limit": -1}):
        response = client.post(
            "/api/recall/tiered", json.dumps(bad), content_type="application/json"
        )
        assert 400 <= response.status_code < 500, (bad, response.status_code)


def test_a_token_reads_by_its_own_role_only_on_every_path(owner, owner_client, make_token, library):
    from django.core.management import CommandError

    def tiered(client, body, path="/api/recall/tiered"):
        return client.post(path, json.dumps(body), content_type="application/json")

    _, plain = make_token(owner, name="plain")
    _, arch = make_token(owner, name="arch", role="architect")
    for secret, says in ((plain, "has no role"), (arch, "its role is architect")):
        client = Client(headers={"Authorization": f"Bearer {secret}"})
        for path in ("/api/recall/tiered", "/api/tools/tiered_recall"):
            refused = tiered(client, {"role": "strategist", "limit": 50}, path)
            assert refused.status_code == 403, (path, refused.content)
            assert says in refused.json()["detail"]
        with pytest.raises(CommandError, match=says):
            call_command("recall", "--role", "strategist", "--token", secret)
    assert not AuditEvent.objects.filter(action="recall.cross_fleet").exists()
    # A token with a role names it, or leaves it out: the role comes from the token.
    client = Client(headers={"Authorization": f"Bearer {arch}"})
    named = tiered(client, {"role": "architect", "project": "CAND-1"})
    assert paths(named.json()["items"]) == ["wiki/-/retry-with-backoff", "wiki/CAND-1/checkout-pdd"]
    assert tiered(client, {"project": "CAND-1"}).json()["items"] == named.json()["items"]
    # A person names any role: they read everything they may read anyway.
    assert tiered(owner_client, {"role": "strategist"}).status_code == 200
    person = tiered_recall(actor=Actor(user=owner), role="strategist", limit=50, now=NOW)
    assert len([p for p in paths(person) if p.startswith("skill/")]) == 3


# --- Staff edit presets in the admin ----------------------------------------------------------


def change_url(role: str) -> str:
    return f"/admin/surface/rolepreset/{RolePreset.objects.get(role=role).pk}/change/"


def form(entries: object, role: str = "scout") -> dict:
    return {"role": role, "description": "Looks around.", "entries": json.dumps(entries)}


@pytest.fixture
def editor(make_user) -> Client:
    user = make_user("erin", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["change_rolepreset", "view_rolepreset"])
    )
    client = Client()
    client.force_login(user)
    return client


def test_staff_change_a_preset_in_the_admin_and_the_change_is_audited(editor, owner, library):
    entries = [{"tier": "org", "include": ["environment"]}]
    response = editor.post(change_url("scout"), form(entries))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert RolePreset.objects.get(role="scout").entries == entries
    assert paths(tiered_recall(actor=Actor(user=owner), role="scout", now=NOW)) == [
        "wiki/-/staging-dns-flaps"
    ]
    assert AuditEvent.objects.filter(action="admin.change", target_type="role_preset").exists()


@pytest.mark.parametrize(
    "entries",
    [
        {"tier": "org"},
        [{"tier": "galaxy"}],
        [{"tier": "skill", "since": "yesterday"}],
        [{"tier": "org", "colour": "red"}],
        [{"tier": "skill", "scope": "everywhere"}],
        [{"tier": "org"}] * 11,
    ],
)
def test_a_bad_preset_is_refused_in_the_admin_and_changes_nothing(editor, entries):
    response = editor.post(change_url("scout"), form(entries))
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert RolePreset.objects.get(role="scout").entries == []


def test_people_who_are_not_staff_cannot_edit_presets(owner_client, staff_client):
    before = RolePreset.objects.get(role="scout").entries
    refused = owner_client.post(change_url("scout"), form([{"tier": "org"}]))
    assert refused.status_code == 302 and "/admin/login/" in refused["Location"]
    # Staff without the permission to change presets are refused too.
    assert staff_client.post(change_url("scout"), form([{"tier": "org"}])).status_code == 403
    assert RolePreset.objects.get(role="scout").entries == before


def test_the_recall_tool_of_a_role_token_adds_its_presets_hits(owner, make_token, library):
    _, secret = make_token(owner, name="diag", fleet="blue", role="diagnostician")
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    body = {"query": "staging dns"}
    answer = client.post("/api/tools/recall", json.dumps(body), content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert paths(answer.json()["data"]["role_items"]) == ["wiki/-/staging-dns-flaps"]
    assert "## Recalled for the diagnostician role" in answer.json()["text"]


def test_auroras_org_files_import_as_the_kinds_the_role_presets_read(tmp_path, owner, team):
    aurora = {
        "org/patterns-that-worked.md": "Canary the selector change on one tenant first.\n",
        "org/patterns-that-failed.md": "Shared mutable config across agents broke twice.\n",
        "org/vendor-quirks.md": "SharePoint renames folders without notice.\n",
        "org/naming-prefs.md": "Branches are named cand-<id>.\n",
        "org/oncall.md": "---\nkind: environment\n---\nThe VPN drops at midnight.\n",
    }
    root = tmp_path / ".aurora"
    for relative, text in aurora.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    call_command("wiki_import", str(root), "--user", owner.username, stdout=io.StringIO(),
                 stderr=io.StringIO())  # fmt: skip
    assert dict(Page.objects.values_list("slug", "kind")) == {
        "patterns-that-worked": "pattern",
        "patterns-that-failed": "anti-pattern",
        "vendor-quirks": "vendor-quirk",
        "naming-prefs": "convention",
        "oncall": "environment",
    }
    me = Actor(user=owner)
    assert [i["path"] for i in tiered_recall(actor=me, role="reviewer")] == [
        "wiki/-/patterns-that-failed"
    ]
    assert [i["path"] for i in tiered_recall(actor=me, role="architect")] == [
        "wiki/-/patterns-that-worked"
    ]
    assert "wiki/-/oncall" in [i["path"] for i in tiered_recall(actor=me, role="diagnostician")]


SEED_ROLES = ["scout", "curator", "analyst", "interviewer", "strategist", "architect",
              "cartographer", "forger-rust", "reviewer", "tester", "sentry", "diagnostician",
              "surgeon", "auditor", "concierge", "conductor"]  # fmt: skip


def test_every_role_of_the_table_has_its_preset(owner):
    """Each role of AURORA's table reads what the table names for it."""
    actor = Actor(user=owner)
    for title, kind, project in (
        ("Dedup signatures", "dedup-signature", ""),
        ("Scoring priors", "scoring-prior", ""),
        ("Interview questions", "interview-question", ""),
        ("Selector quirks", "vendor-quirk", ""),
        ("Test patterns", "test-pattern", ""),
        ("Governance rules", "governance", ""),
        ("Budget policy", "policy", ""),
        ("Checkout PDD", "pdd", "CAND-1"),
        ("Checkout ADR", "adr", "CAND-1"),
        ("Checkout triage", "triage", "CAND-1"),
        ("Checkout deploys", "deploy", "CAND-1"),
    ):
        wiki_page_upsert(actor=actor, title=title, content=f"{title}.", kind=kind,
                         project=project)  # fmt: skip
    for skill, content in (("rust", "Borrow checker fights end with clones"),
                           ("go", "Go modules need GOPRIVATE for internal repos")):  # fmt: skip
        learning_create(actor=actor, data={"skill": skill, "content": content})
    learning_create(
        actor=actor,
        data={
            "skill": "ops",
            "content": "Disk full on runner",
            "fingerprint": "disk-full",
            "resolution": "PR-9",
        },
    )

    def reads(role: str) -> set[str]:
        hits = tiered_recall(actor=actor, role=role, project="CAND-1", limit=50)
        return {hit["snippet"].rstrip(".") for hit in hits}

    expected = {
        "scout": set(), "sentry": set(), "concierge": set(),
        "curator": {"Dedup signatures"},
        "analyst": {"Scoring priors", "Checkout PDD"},
        "interviewer": {"Interview questions"},
        "cartographer": {"Selector quirks", "Checkout PDD"},
        "forger-rust": {"Borrow checker fights end with clones", "Checkout PDD", "Checkout ADR"},
        "tester": {"Test patterns", "Checkout PDD"},
        "surgeon": {"Checkout triage", "Disk full on runner"},
        "auditor": {"Governance rules", "Checkout deploys"},
        "conductor": {"Budget policy"},
    }  # fmt: skip
    for role, wanted in expected.items():
        assert reads(role) == wanted, role
    # Every role of the table has a preset (none answers "no preset"), the forgers'
    # through "forger".
    for role in SEED_ROLES:
        tiered_recall(actor=actor, role=role, project="CAND-1")
    # The conductor's read across fleets is audited as the preset's.
    event = AuditEvent.objects.filter(action="recall.cross_fleet").latest("pk")
    assert event.details["justification"] == "the conductor role preset"
