"""The access rule, property-based: random worlds of users, teams and rows in every app,
random sequences of writes, then every read path as every user.

Each statement written carries a marker word of its own (``zq`` and hex digits). The
test keeps its own record of the scopes (owner, visibility, team) each marker was
written in, explicitly: by a create, an edit, a batch item or a visibility change.
A summary or profile distilled from facts is no such write: what it says comes from its
sources, so it holds a marker in a scope only while a fact of that scope does. A fact
deleted, forgotten or moved to another scope takes its markers out of its old scope
unless another fact there still says them; a summary still quoting them is caught.
Then:

- no read path ever shows a user a marker outside the audience of those scopes (the
  rule computed here in Python, not by ``visible_to``), whatever merges, supersessions,
  distillations, deletes, forgets, batches and membership changes happened in between;
- no write changes who can read a statement: every stored row carrying a marker has one
  of the marker's scopes, and every scope a marker still has holds a row carrying it;
- an agent of a fleet reads no marker only rows of another fleet carry, on any path but
  the justified, audited cross-fleet reads of tiered recall.

Bounded in CI; ``MEMORYHUB_PROPERTY_EXAMPLES=200`` searches deeper. A read path added
to the product joins ``READ_PATHS`` (API) or ``DASHBOARD_PATHS`` (pages).
"""

import contextlib
import os
import random
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from codegraph.models import CodeProject
from facts.models import Fact
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import ApplicationError
from memoryhub.engine.models import MemoryConfig
from teams.models import AgentToken, Membership, MemorySettings, Role, Visibility
from teams.services import Actor, agent_token_create
from wiki.models import Page, PageRevision

pytestmark = pytest.mark.django_db

# Worlds per run. Each run draws new ones (not derandomized, even in CI), so the two
# engines' runs of one CI job, and every later job, look at different worlds.
EXAMPLES = int(os.environ.get("MEMORYHUB_PROPERTY_EXAMPLES") or 10)
SEARCHED = 3  # markers searched for per user and world
CLUSTERS = ["rollout-stall", "disk-full"]  # fingerprint clusters of learnings
MARKER = re.compile(r"zq[0-9a-f]{8}")
# Twelve content words every fact shares: a fact repeating another's words plus one
# marker is a near-duplicate of it (similarity at least 13/14 > 0.92), and merges with it
# when their scopes allow.
FILLER = (
    "nightly billing export runs reporting replica backup window closes midnight sharp weekdays"
)
USERS = ("ann", "ben", "cat", "dan")
FLEETS = ["", "build", "operate"]
PROBE_FLEET = "build"  # the fleet of each user's second agent
VISIBILITIES = [v.value for v in Visibility]
# New facts a scope needs before it is distilled: small worlds get summaries too.
DISTILL_MIN_FACTS = 1


@dataclass(frozen=True)
class Scope:
    """Who may read a row: its owner, visibility and (for team rows) team, and the
    fleet of agents it belongs to ("" for none)."""

    owner: int
    visibility: str
    team: int | None
    fleet: str = ""

    @classmethod
    def of(cls, row) -> "Scope":
        team = row.team_id if row.visibility == Visibility.TEAM else None
        fleet = getattr(row, "fleet", "")
        return cls(owner=row.owner_id, visibility=row.visibility, team=team, fleet=fleet)

    def admits(
        self, user_id: int, teams: dict[int, set[int]], reading_team: int | None = None
    ) -> bool:
        """Whether ``user_id`` reads the row; as an agent reading the team rows of one
        team only (``reading_team``), of that team's."""
        if self.visibility == Visibility.GLOBAL or self.owner == user_id:
            return True
        return (
            self.visibility == Visibility.TEAM
            and self.team is not None
            and self.team in teams.get(user_id, set())
            and reading_team in (None, self.team)
        )


# Who may read a scope, narrowest first: moving a row up this list widens it.
REACH = {Visibility.PRIVATE: 0, Visibility.TEAM: 1, Visibility.GLOBAL: 2}


def widens(before: Scope, after: Scope) -> bool:
    """Whether ``after`` lets people read a row who could not read it in ``before``."""
    if REACH[before.visibility] != REACH[after.visibility]:
        return REACH[after.visibility] > REACH[before.visibility]
    return after.visibility == Visibility.TEAM and after.team != before.team


def new_marker() -> str:
    return "zq" + secrets.token_hex(4)


def markers_in(text: str) -> set[str]:
    return set(MARKER.findall(text))


class AccessWorld(RuleBasedStateMachine):
    """One world per example, rolled back at its end."""

    facts = Bundle("facts")
    pages = Bundle("pages")

    def __init__(self) -> None:
        super().__init__()
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.folder = Path(tempfile.mkdtemp(prefix="access-world-"))
        user_model = get_user_model()
        self.users = [
            user_model.objects.create_user(username=name, is_staff=(name == "dan"))
            for name in USERS
        ]
        self.teams = [Group.objects.create(name=name) for name in ("red", "blue")]
        memory_config_get()  # the settings row, rolled back with the world
        MemoryConfig.objects.filter(pk=1).update(distillation_min_facts=DISTILL_MIN_FACTS)
        self.scopes: dict[str, set[Scope]] = {}
        self.rng = random.Random(0)
        self.clients: dict[int, tuple[Client, Client]] = {}
        self.fleet_agents: dict[int, tuple[Client, Actor]] = {}
        for user in self.users:
            _, secret = agent_token_create(
                actor=Actor(user=user), name="probe", scopes=["read", "write"], role="strategist"
            )
            session = Client()
            session.force_login(user)
            self.clients[user.pk] = (bearer_client(secret), session)
            token, secret = agent_token_create(
                actor=Actor(user=user),
                name="fleet-probe",
                scopes=["read", "write"],
                fleet=PROBE_FLEET,
            )
            agent = get_user_model().objects.get(pk=user.pk)
            agent.agent_fleet = PROBE_FLEET  # as its token's authentication sets it
            self.fleet_agents[user.pk] = (
                bearer_client(secret),
                Actor(user=agent, token=token),
            )

    def teardown(self) -> None:
        try:
            self.check_every_read_path()
        finally:
            transaction.set_rollback(True)
            self._atomic.__exit__(None, None, None)

    # --- the model ---------------------------------------------------------------

    def memberships(self) -> dict[int, set[int]]:
        found: dict[int, set[int]] = {}
        for user_id, team_id in Membership.objects.values_list("user_id", "team_id"):
            found.setdefault(user_id, set()).add(team_id)
        return found

    def wrote(self, text: str, scope: Scope) -> None:
        for marker in markers_in(text):
            self.scopes.setdefault(marker, set()).add(scope)

    def audience(
        self,
        marker: str,
        teams: dict[int, set[int]],
        fleet: str | None = None,
        reading_team: dict[int, int | None] | None = None,
    ) -> set[int]:
        """Who may read ``marker``: as a person, or (``fleet``) as an agent of a fleet
        that reads the team rows of one team (``reading_team``, by user; None: of every
        team of theirs)."""
        reading_team = reading_team or {}
        return {
            user.pk
            for user in self.users
            if any(
                scope.admits(user.pk, teams, reading_team.get(user.pk))
                and (fleet is None or scope.fleet in ("", fleet))
                for scope in self.scopes.get(marker, ())
            )
        }

    def reading_teams(self, token: str) -> dict[int, int | None]:
        """The team each user's agent token named ``token`` reads the team rows of: the
        team the token names, else its user's active team (None: every team of theirs)."""
        active = dict(MemorySettings.objects.values_list("user_id", "active_team_id"))
        named = dict(AgentToken.objects.filter(name=token).values_list("user_id", "team_id"))
        return {
            user.pk: named.get(user.pk) if named.get(user.pk) is not None else active.get(user.pk)
            for user in self.users
        }

    def stored(self, *, derived: bool = True) -> list[tuple[str, Scope]]:
        """(text, scope) of every stored row that carries statements; with
        ``derived=False``, without the summaries and profiles, which only repeat them."""
        facts = Fact.objects.all() if derived else Fact.objects.filter(layer=1)
        rows = [(f.content, Scope.of(f)) for f in facts]
        rows += [(p.content, Scope.of(p)) for p in Page.objects.all()]
        rows += [(r.content, Scope.of(r.page)) for r in PageRevision.objects.select_related("page")]
        rows += [(p.name + " " + p.root_path, Scope.of(p)) for p in CodeProject.objects.all()]
        return rows

    def forget_scope_unless_stored(self, text: str, scope: Scope, *, derived: bool = True) -> None:
        """A delete, a forget or a visibility change removes a statement from a scope
        explicitly, unless another row of that scope still carries it; a summary or
        profile counts only for an edit (``derived``), which keeps what the fact said in
        its scope: a summary quoting what a fact said before it left is no such row."""
        still = {m for t, s in self.stored(derived=derived) if s == scope for m in markers_in(t)}
        for marker in markers_in(text) - still:
            self.scopes.get(marker, set()).discard(scope)

    def facts_stored(self) -> dict[int, tuple[str, Scope]]:
        return {f.pk: (f.content, Scope.of(f)) for f in Fact.objects.all()}

    def forget_removed(self, before: dict[int, tuple[str, Scope]]) -> None:
        """What the facts that went since ``before`` said leaves their scopes."""
        after = set(Fact.objects.values_list("pk", flat=True))
        for pk, (text, scope) in before.items():
            if pk not in after:
                self.forget_scope_unless_stored(text, scope, derived=False)

    def widened_by(self, user, before: Scope, after: Scope) -> None:
        """Only a row's owner, or staff, lets more people read it (a team admin may
        narrow a member's row, never widen it)."""
        if widens(before, after):
            assert user.pk == before.owner or user.is_staff, (user.username, before, after)

    def act(self, call) -> object | None:
        """Run a write; a refusal (not a member, not the owner, ...) is an answer."""
        try:
            with transaction.atomic():
                return call()
        except ApplicationError:
            return None

    # --- writes ------------------------------------------------------------------

    @initialize()
    def start_with_memberships(self) -> None:
        ann, ben, cat, _ = self.users
        red, blue = self.teams
        # ann administers red: she edits ben's red team rows, and may only narrow them.
        for user, team, role in (
            (ann, red, Role.ADMIN),
            (ben, red, Role.MEMBER),
            (cat, blue, Role.MEMBER),
        ):
            Membership.objects.create(user=user, team=team, role=role)
        # ann's fleet probe names red: it reads red's team rows whatever she makes active.
        AgentToken.objects.filter(user=ann, name="fleet-probe").update(team=red)

    @rule(user=st.integers(0, 3), team=st.integers(-1, 1))
    def set_active_team(self, user: int, team: int) -> None:
        member = self.users[user]
        group = self.teams[team] if team >= 0 else None
        if group is not None and not Membership.objects.filter(user=member, team=group).exists():
            return  # Settings offer only a team one belongs to
        MemorySettings.objects.update_or_create(user=member, defaults={"active_team": group})

    @rule(user=st.integers(0, 3), team=st.integers(0, 1), join=st.booleans(), admin=st.booleans())
    def change_membership(self, user: int, team: int, join: bool, admin: bool) -> None:
        member, group = self.users[user], self.teams[team]
        if join:
            Membership.objects.update_or_create(
                user=member, team=group, defaults={"role": Role.ADMIN if admin else Role.MEMBER}
            )
        else:
            Membership.objects.filter(user=member, team=group).delete()

    def _fact_data(self, *, visibility: str, team: int, repeats: str | None) -> dict:
        base = repeats or FILLER
        return {
            "content": f"{base} {new_marker()}",
            "visibility": visibility,
            "team": self.teams[team].pk if visibility == Visibility.TEAM else None,
        }

    @rule(
        target=facts,
        user=st.integers(0, 3),
        visibility=st.sampled_from(VISIBILITIES),
        team=st.integers(0, 1),
        repeat=st.none() | st.integers(0, 7),
    )
    def write_fact(self, user: int, visibility: str, team: int, repeat: int | None):
        """A new statement, or (``repeat``) one that repeats an active fact of the writer,
        which merges when the scopes allow it."""
        from facts.services.create import fact_create

        repeats = None
        if repeat is not None:
            own = list(
                Fact.objects.filter(owner=self.users[user], status="active")
                .order_by("pk")
                .values_list("content", flat=True)
            )
            repeats = own[repeat % len(own)] if own else None
        data = self._fact_data(visibility=visibility, team=team, repeats=repeats)
        result = self.act(lambda: fact_create(actor=Actor(user=self.users[user]), data=data))
        if result is None:
            return -1
        self.wrote(data["content"], Scope.of(result.fact))
        return result.fact.pk

    @rule(
        user=st.integers(0, 3),
        items=st.lists(
            st.tuples(st.sampled_from(VISIBILITIES), st.integers(0, 1), st.booleans()),
            min_size=1,
            max_size=4,
        ),
    )
    def write_batch(self, user: int, items: list) -> None:
        from facts.services.create import fact_bulk_create

        data, previous = [], None
        for visibility, team, repeat in items:
            data.append(
                self._fact_data(
                    visibility=visibility, team=team, repeats=previous if repeat else None
                )
            )
            previous = data[-1]["content"]
        results = self.act(lambda: fact_bulk_create(actor=Actor(user=self.users[user]), items=data))
        for item, result in zip(data, results or [], strict=False):
            # Each item was written in the scope it asked for (the target of a merge
            # has the same one).
            self.wrote(item["content"], Scope.of(result.fact))

    @rule(
        target=facts,
        user=st.integers(0, 3),
        visibility=st.sampled_from(VISIBILITIES),
        team=st.integers(0, 1),
        other=facts,
    )
    def write_relation(self, user: int, visibility: str, team: int, other: int):
        """A statement relating a new thing to one an earlier fact named: the concept
        graph then holds one node that facts of several scopes mention."""
        from facts.services.create import fact_create

        row = Fact.objects.filter(pk=other).first()
        known = sorted(markers_in(row.content))[0] if row is not None else new_marker()
        data = {
            **self._fact_data(visibility=visibility, team=team, repeats=None),
            "content": f"{new_marker()} depends on {known}.",
        }
        result = self.act(lambda: fact_create(actor=Actor(user=self.users[user]), data=data))
        if result is None:
            return -1
        self.wrote(data["content"], Scope.of(result.fact))
        return result.fact.pk

    @rule(
        target=facts,
        user=st.integers(0, 3),
        visibility=st.sampled_from(VISIBILITIES),
        team=st.integers(0, 1),
        cluster=st.sampled_from(CLUSTERS),
        fleet=st.sampled_from(FLEETS),
    )
    def write_learning(self, user: int, visibility: str, team: int, cluster: str, fleet: str):
        """A learning of a skill with a fingerprint cluster (append-only, never merged),
        of a fleet or of none."""
        from facts.learnings import learning_create

        data = {
            **self._fact_data(visibility=visibility, team=team, repeats=None),
            "skill": "deploy",
            "fingerprint": cluster,
            "resolution": "INC-1",
            "fleet": fleet,
        }
        fact = self.act(lambda: learning_create(actor=Actor(user=self.users[user]), data=data))
        if fact is None:
            return -1
        self.wrote(data["content"], Scope.of(fact))
        return fact.pk

    @rule(fact=facts, user=st.integers(0, 3), visibility=st.sampled_from(VISIBILITIES))
    def change_fact_visibility(self, fact: int, user: int, visibility: str) -> None:
        from facts.services.update import fact_update

        row = Fact.objects.filter(pk=fact).first()
        if row is None:
            return
        before = Scope.of(row)
        changes = {"visibility": visibility}
        if visibility == Visibility.TEAM and row.team_id is None:
            changes["team"] = self.teams[0].pk
        stored = self.facts_stored()
        updated = self.act(
            lambda: fact_update(actor=Actor(user=self.users[user]), fact=row, changes=changes)
        )
        if updated is not None:
            self.widened_by(self.users[user], before, Scope.of(updated))
            self.wrote(updated.content, Scope.of(updated))
            self.forget_scope_unless_stored(row.content, before, derived=False)
            self.forget_removed(stored)

    @rule(fact=facts, user=st.integers(0, 3))
    def edit_fact(self, fact: int, user: int) -> None:
        from facts.services.update import fact_update

        row = Fact.objects.filter(pk=fact).first()
        if row is None:
            return
        content = f"{row.content} {new_marker()}"
        updated = self.act(
            lambda: fact_update(
                actor=Actor(user=self.users[user]), fact=row, changes={"content": content}
            )
        )
        if updated is not None:
            self.wrote(content, Scope.of(updated))
            self.forget_scope_unless_stored(row.content, Scope.of(row))

    @rule(
        target=facts,
        fact=facts,
        user=st.integers(0, 3),
        visibility=st.sampled_from(VISIBILITIES),
    )
    def supersede_fact(self, fact: int, user: int, visibility: str):
        from facts.services.create import fact_create

        data = self._fact_data(visibility=visibility, team=0, repeats=None)
        data["supersedes"] = fact
        old = Fact.objects.filter(pk=fact).first()
        result = self.act(lambda: fact_create(actor=Actor(user=self.users[user]), data=data))
        if result is None:
            return -1
        # A supersede never hides a fact from its own owner.
        assert Scope.of(result.fact).admits(old.owner_id, self.memberships())
        self.wrote(data["content"], Scope.of(result.fact))
        return result.fact.pk

    @rule(fact=consumes(facts), user=st.integers(0, 3))
    def delete_fact(self, fact: int, user: int) -> None:
        from facts.services.update import fact_delete

        row = Fact.objects.filter(pk=fact).first()
        if row is None:
            return
        stored = self.facts_stored()
        if self.act(lambda: fact_delete(actor=Actor(user=self.users[user]), fact=row) or True):
            self.forget_removed(stored)

    @rule(fact=consumes(facts), user=st.integers(0, 3))
    def forget_fact(self, fact: int, user: int) -> None:
        """Forgetting a fact takes its earlier wordings with it, and says anew (or
        removes) the summaries and profiles built from it."""
        from memoryhub.surface.forget import memory_forget

        if not Fact.objects.filter(pk=fact).exists():
            return
        stored = self.facts_stored()
        actor = Actor(user=self.users[user])
        if self.act(lambda: memory_forget(actor=actor, topic="this fact", ids=[fact])):
            self.forget_removed(stored)

    @rule(user=st.none() | st.integers(0, 3))
    def distil(self, user: int | None) -> None:
        """A user's due scopes (or everyone's, as the schedule does) rolled into
        summaries and profiles, offline. They say only what their sources say, in their
        sources' scope: nothing is written in a scope here."""
        from facts.services.distillation import facts_distill

        owner_id = None if user is None else self.users[user].pk
        self.act(lambda: facts_distill(owner_id=owner_id))

    @rule(
        target=pages,
        user=st.integers(0, 3),
        title=st.sampled_from(["Runbook", "Vendors", "Naming"]),
        visibility=st.sampled_from(VISIBILITIES),
        team=st.integers(0, 1),
    )
    def write_page(self, user: int, title: str, visibility: str, team: int):
        from wiki.services import wiki_page_upsert

        content = f"# {title}\n\nNotes {new_marker()}"
        before = {page.pk: Scope.of(page) for page in Page.objects.all()}
        result = self.act(
            lambda: wiki_page_upsert(
                actor=Actor(user=self.users[user]),
                title=title,
                content=content,
                visibility=visibility,
                team=self.teams[team].pk if visibility == Visibility.TEAM else None,
            )
        )
        if result is None:
            return -1
        page = result.page
        # An update keeps the page's earlier revisions: a visibility change through it
        # shows them to the new audience, explicitly.
        texts = [revision.content for revision in page.revisions.all()]
        for text in texts:
            self.wrote(text, Scope.of(page))
        self.wrote(content, Scope.of(page))
        if before.get(page.pk, Scope.of(page)) != Scope.of(page):
            self.widened_by(self.users[user], before[page.pk], Scope.of(page))
            for text in texts:
                self.forget_scope_unless_stored(text, before[page.pk])
        return page.pk

    @rule(user=st.integers(0, 3), visibility=st.sampled_from(VISIBILITIES))
    def scan_code(self, user: int, visibility: str) -> None:
        from codegraph.services import code_project_register, code_project_scan

        if CodeProject.objects.count() >= 2:  # scans are the slowest writes
            return
        marker = new_marker()
        folder = self.folder / marker
        folder.mkdir()
        (folder / "app.py").write_text(f"def {marker}():\n    return 1\n")
        project = self.act(
            lambda: code_project_register(
                actor=Actor(user=self.users[user]),
                name=marker,
                path=str(folder),
                visibility=visibility,
                team=self.teams[0].pk if visibility == Visibility.TEAM else None,
            )
        )
        if project is not None:
            code_project_scan(project_id=project.pk)
            self.wrote(marker, Scope.of(project))

    # --- checks ------------------------------------------------------------------

    @invariant()
    def stored_rows_keep_their_statements_scopes(self) -> None:
        """No write moved a statement into a scope it was not written in, and every
        scope a statement has still holds it."""
        holding: dict[str, set[Scope]] = {}
        for text, scope in self.stored():
            for marker in markers_in(text):
                holding.setdefault(marker, set()).add(scope)
                assert scope in self.scopes.get(marker, set()), (
                    f"{marker} is stored in {scope}, but was written only in "
                    f"{self.scopes.get(marker)}"
                )
        for marker, scopes in self.scopes.items():
            assert scopes <= holding.get(marker, set()), (
                f"{marker} was written in {scopes}, but only {holding.get(marker)} hold it"
            )

    def check_every_read_path(self) -> None:
        from concepts.services import concept_graph_sync

        concept_graph_sync()  # what the on-commit extraction does outside this transaction
        teams = self.memberships()
        markers = sorted(self.scopes)
        fact_ids = list(Fact.objects.values_list("pk", flat=True))
        page_ids = list(Page.objects.values_list("pk", flat=True))
        slugs = sorted(set(Page.objects.values_list("slug", flat=True)))
        for user in self.users:
            api, session = self.clients[user.pk]
            # Searches for a few markers: a search for one can only show that one.
            searched = self.rng.sample(markers, min(len(markers), SEARCHED))
            reads = read_everything(
                api, session, user, markers, searched, fact_ids, page_ids, slugs
            )
            seen: dict[str, str] = {}
            for label, text in reads:
                for marker in markers_in(text):
                    seen.setdefault(marker, label)
            for marker, label in seen.items():
                assert user.pk in self.audience(marker, teams), (
                    f"{user.username} reads {marker} through {label}; it was written only "
                    f"in {self.scopes.get(marker)}"
                )
            # The counts are the probe agent's: of its user's active team's team rows.
            probe_team = self.reading_teams("probe")[user.pk]
            visible = [
                f for f in Fact.objects.all() if Scope.of(f).admits(user.pk, teams, probe_team)
            ]
            stats = api.get("/api/memories/stats", {"status": "all"}).json()
            assert stats["total"] == len(visible), (user.username, stats, len(visible))
            active = sum(1 for f in visible if f.status == "active")
            stats = api.get("/api/memories/stats").json()
            assert stats["total"] == active, (user.username, stats, active)
            # The user's agent of a fleet, on every path but the cross-fleet reads, reading
            # the team rows of its token's team or its user's active team.
            agent, actor = self.fleet_agents[user.pk]
            reading = self.reading_teams("fleet-probe")
            actor.user.agent_team_id = reading[user.pk]  # as its token's authentication sets it
            reads = read_everything(
                agent, None, user, markers, searched, fact_ids, page_ids, slugs, actor=actor
            )
            for label, text in reads:
                for marker in markers_in(text):
                    audience = self.audience(marker, teams, fleet=PROBE_FLEET, reading_team=reading)
                    assert user.pk in audience, (
                        f"{user.username}'s {PROBE_FLEET} agent reads {marker} through {label}; "
                        f"it was written only in {self.scopes.get(marker)}"
                    )


def read_everything(api, session, user, markers, searched, fact_ids, page_ids, slugs, actor=None):
    """(label, text) of every read path as ``user``: the API with the agent's token, the
    dashboard with the user's session, and the agent tools (in process, over REST and MCP).
    An agent of a fleet (``actor``) reads without a session, and not across fleets."""
    across = actor is None
    from codegraph.tools import codegraph_query
    from concepts.models import Entity
    from concepts.tools import concept_query
    from facts.tools import memory_get
    from memoryhub.surface.chat import turn_messages
    from memoryhub.surface.tools import recall
    from wiki.tools import wiki_read, wiki_search

    def get(client, url, **params) -> str:
        if client is None:
            return ""
        response = client.get(url, params)
        assert response.status_code < 500, (url, response.status_code)
        echoed = params.get("q") or params.get("topic") or params.get("entity") or params.get("tag")
        return without_echo(response.content.decode(), echoed)

    def tool(client, name, **arguments) -> str:
        response = client.post(f"/api/tools/{name}", arguments, content_type="application/json")
        assert response.status_code < 500, (name, response.status_code)
        return response.content.decode()

    def mcp(client, name, **arguments) -> str:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        response = client.post(
            "/mcp",
            message,
            content_type="application/json",
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert response.status_code < 500, (name, response.status_code)
        return response.content.decode()

    actor = actor or Actor(user=user)
    yield "GET /api/memories", get(api, "/api/memories", limit=200)
    yield "GET /api/memories?status=all", get(api, "/api/memories", limit=200, status="all")
    yield "GET /api/memories/export", b"".join(api.get("/api/memories/export")).decode()
    personal = api.get("/api/export/personalization")
    assert personal.status_code == 200, personal.status_code
    yield "GET /api/export/personalization", b"".join(personal.streaming_content).decode()
    yield "GET /api/memories/layer-stats", get(api, "/api/memories/layer-stats")
    yield "GET /api/wiki", get(api, "/api/wiki", limit=200)
    yield "GET /api/wiki/stats", get(api, "/api/wiki/stats")
    yield "GET /api/codegraph/projects", get(api, "/api/codegraph/projects")
    yield "GET /api/codegraph/stats", get(api, "/api/codegraph/stats")
    yield "GET /api/concept-graph/nodes", get(api, "/api/concept-graph/nodes", limit=200)
    yield "GET /api/concept-graph/edges", get(api, "/api/concept-graph/edges", limit=200)
    yield "GET /api/concept-graph/stats", get(api, "/api/concept-graph/stats")
    yield "GET /api/concept-graph/aliases", get(api, "/api/concept-graph/aliases", limit=200)
    yield "GET /graph/", get(session, "/graph/")
    yield "GET /graph/data/", get(session, "/graph/data/", limit=2000)
    for ref in Entity.objects.values_list("ref", flat=True):
        url = f"/api/concept-graph/entities/{ref}"
        yield f"GET {url}", get(api, url)
        yield f"GET /graph/entities/{ref}/", get(session, f"/graph/entities/{ref}/")
    yield "GET /memory/", get(session, "/memory/")
    yield "GET /memory/?status=all", get(session, "/memory/", status="all")
    yield "GET /memory/chart/", get(session, "/memory/chart/")
    yield "GET /wiki/", get(session, "/wiki/")
    yield "GET /wiki/review/", get(session, "/wiki/review/")
    yield "GET /codegraph/", get(session, "/codegraph/")
    yield "GET /audit/", get(session, "/audit/")
    yield "GET /memory/reviews/", get(session, "/memory/reviews/")
    yield "GET /api/memories/reviews", get(api, "/api/memories/reviews", limit=200)
    recalled = api.post(
        "/api/recall",
        {"query": " ".join([FILLER, *markers])[:1000], "max_items": 50, "char_budget": 50_000},
        content_type="application/json",
    )
    assert recalled.status_code == 200, recalled.content
    yield "POST /api/recall", recalled.content.decode()
    answer = recall(actor=actor, query=" ".join([FILLER, *markers])[:1000], max_items=50)
    yield "recall tool", f"{answer.text}\n{answer.data}"
    # The OpenAI-compatible endpoint: what the chat model gets in its system message, for
    # the token's agent (the endpoint takes tokens only).
    said = [{"role": "user", "content": " ".join([FILLER, *markers])[:1000]}]
    sent = turn_messages(actor=token_actor(api), messages=said).messages
    assert sent[-1] == said[0]  # the user's own words (all the markers) go on as they are
    yield "POST /v1/chat/completions, the system message", str(sent[:-1])
    yield (
        "POST /api/tools/recall",
        tool(api, "recall", query=" ".join([FILLER, *markers])[:1000], max_items=50),
    )
    yield "MCP recall", mcp(api, "recall", query=" ".join([FILLER, *markers])[:1000], max_items=50)
    if fact_ids:
        answer = memory_get(actor=actor, ids=fact_ids[:50])
        yield "memory_get tool", f"{answer.text}\n{answer.data}"
        yield "POST /api/tools/memory_get", tool(api, "memory_get", ids=fact_ids[:50])
        yield "MCP memory_get", mcp(api, "memory_get", ids=fact_ids[:50])
    for tier in ("org", "skill"):
        body = {"tier": tier, "limit": 50}
        if across:
            body |= {"scope": "cross", "justification": "access test"}
        tiered = api.post("/api/recall/tiered", body, content_type="application/json")
        assert tiered.status_code == 200, tiered.content
        yield f"POST /api/recall/tiered {tier}", tiered.content.decode()
        yield f"MCP tiered_recall {tier}", mcp(api, "tiered_recall", **body)
    if across:
        # The probe token's role is strategist (it reads across fleets); a person names any.
        body = {"role": "strategist", "limit": 50}
        tiered = api.post("/api/recall/tiered", body, content_type="application/json")
        assert tiered.status_code == 200, tiered.content
        yield "POST /api/recall/tiered role strategist", tiered.content.decode()
        yield "MCP tiered_recall role strategist", mcp(api, "tiered_recall", **body)
    for role in ("diagnostician", "strategist") if session is not None else ():
        body = {"role": role, "limit": 50}
        tiered = session.post("/api/recall/tiered", body, content_type="application/json")
        assert tiered.status_code == 200, tiered.content
        yield f"POST /api/recall/tiered role {role}, in person", tiered.content.decode()
    for cluster in CLUSTERS:
        url = f"/api/learnings/fingerprints/{cluster}"
        yield f"GET {url}", get(api, url, limit=200)
        body = {"tier": "skill", "fingerprint": cluster, "limit": 50}
        yield f"POST /api/tools/tiered_recall {cluster}", tool(api, "tiered_recall", **body)
    for fact_id in fact_ids:
        yield f"GET /api/memories/{fact_id}", get(api, f"/api/memories/{fact_id}")
        yield f"GET /memory/{fact_id}/", get(session, f"/memory/{fact_id}/")
        if session is not None:
            tags = session.get(
                f"/memory/{fact_id}/tags/", {"edit": "1"}, headers={"HX-Request": "1"}
            )
            assert tags.status_code < 500
            yield f"GET /memory/{fact_id}/tags/", tags.content.decode()
    for page_id in page_ids:
        yield f"GET /wiki/{page_id}/", get(session, f"/wiki/{page_id}/")
        yield f"GET /wiki/{page_id}/history/", get(session, f"/wiki/{page_id}/history/")
        yield f"GET /wiki/{page_id}/approve/", get(session, f"/wiki/{page_id}/approve/")
    for slug in slugs:
        yield f"GET /api/wiki/{slug}", get(api, f"/api/wiki/{slug}")
        with contextlib.suppress(ApplicationError):
            yield f"wiki_read {slug}", str(wiki_read(actor=actor, title_or_slug=slug).data)
        yield f"POST /api/tools/wiki_read {slug}", tool(api, "wiki_read", title_or_slug=slug)
        yield f"MCP wiki_read {slug}", mcp(api, "wiki_read", title_or_slug=slug)
    for marker in searched:
        preview = api.post(
            "/api/forget", {"topic": marker, "dry_run": True}, content_type="application/json"
        )
        assert preview.status_code == 200, preview.content
        yield f"POST /api/forget {marker}", without_echo(preview.content.decode(), marker)
        yield f"GET /memory/forget/?topic={marker}", get(session, "/memory/forget/", topic=marker)
        for mode in ("hybrid", "exact"):
            yield (
                f"GET /api/memories/search?q={marker}&mode={mode}",
                get(api, "/api/memories/search", q=marker, mode=mode),
            )
            yield (
                f"GET /api/wiki/search?q={marker}&mode={mode}",
                get(api, "/api/wiki/search", q=marker, mode=mode),
            )
            yield (
                f"GET /memory/?q={marker}&mode={mode}",
                get(session, "/memory/", q=marker, mode=mode),
            )
            yield f"GET /wiki/?q={marker}&mode={mode}", get(session, "/wiki/", q=marker, mode=mode)
        yield f"GET /memory/?tag={marker}", get(session, "/memory/", tag=marker.lower())
        yield f"GET /api/codegraph/query?q={marker}", get(api, "/api/codegraph/query", q=marker)
        yield f"GET /codegraph/search/?q={marker}", get(session, "/codegraph/search/", q=marker)
        for name, run in (("codegraph_query", codegraph_query), ("wiki_search", wiki_search)):
            answer = run(actor=actor, query=marker)
            yield f"{name} {marker}", without_echo(f"{answer.text}\n{answer.data}", marker)
            yield (
                f"POST /api/tools/{name} {marker}",
                without_echo(tool(api, name, query=marker), marker),
            )
            yield f"MCP {name} {marker}", without_echo(mcp(api, name, query=marker), marker)
        yield (
            f"POST /api/tools/memory_forget {marker}",
            without_echo(tool(api, "memory_forget", topic=marker), marker),
        )
        yield (
            f"MCP memory_forget {marker}",
            without_echo(mcp(api, "memory_forget", topic=marker), marker),
        )
        yield (
            f"GET /api/concept-graph/query?entity={marker}",
            get(api, "/api/concept-graph/query", entity=marker),
        )
        with contextlib.suppress(ApplicationError):
            answer = concept_query(actor=actor, entity=marker)
            yield f"concept_query {marker}", f"{answer.text}\n{answer.data}"
        for other in searched:
            if other != marker:
                path = api.get("/api/concept-graph/path", {"from": marker, "to": other})
                assert path.status_code < 500, path.content
                text = without_echo(without_echo(path.content.decode(), marker), other)
                yield f"GET /api/concept-graph/path {marker} {other}", text


def bearer_client(secret: str) -> Client:
    """A client sending ``secret`` as its bearer token (kept, for the chat endpoint)."""
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    client.secret = secret
    return client


def token_actor(api: Client) -> Actor:
    """The agent of an API client's bearer token, as the chat endpoint authenticates it."""
    from teams.services import agent_token_authenticate

    token = agent_token_authenticate(secret=api.secret)
    return Actor(user=token.user, token=token)


def without_echo(text: str, query: str | None) -> str:
    """``text`` without the places that repeat the query back (a search box, a link, a
    "no match for ..." line): those show the asker's own words, not a stored row."""
    if not query:
        return text
    echoes = (
        f'value="{query}"', f"q={query}", f"topic={query}", f"tag={query}", f"'{query}'",
        f"“{query}”",
        f'"query": "{query}"', f'"topic": "{query}"',
        f'"query":"{query}"', f'"topic":"{query}"',  # compact JSON (MCP)
    )  # fmt: skip
    for echo in echoes:
        text = text.replace(echo, "")
    return text


def test_no_read_path_shows_a_statement_outside_its_audience(role_presets):
    run_state_machine_as_test(
        AccessWorld,
        settings=settings(
            max_examples=EXAMPLES,
            derandomize=False,
            stateful_step_count=30,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
