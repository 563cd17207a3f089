import importlib

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_models_and_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_facts_stored_before_near_duplicate_keys_are_keyed_by_the_first_write(owner):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from facts.dedupe import KEY_FIELDS, stored_keys, stored_signature
    from facts.models import Fact
    from facts.search import FACT_KEYS
    from facts.services.create import fact_create
    from teams.services import Actor

    before = [("facts", "0003_vector_raw_table")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_fact = executor.loader.project_state(before).apps.get_model("facts", "Fact")
    stored = old_fact.objects.create(
        owner_id=owner.pk, content="The VPN gateway is vpn2 in Frankfurt", tags=["net"]
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    with connection.cursor() as cursor:
        assert FACT_KEYS.count(cursor) == 0

    result = fact_create(
        actor=Actor(user=owner), data={"content": "the VPN gateway is vpn2 in Frankfurt!"}
    )
    assert (result.created, result.fact.pk) == (False, stored.pk)
    row = Fact.objects.values_list(*KEY_FIELDS).get(pk=stored.pk)
    assert FACT_KEYS.keys_of([stored.pk])[stored.pk] == set(stored_keys(stored_signature(row)))


@pytest.mark.django_db(transaction=True)
def test_memberships_stored_before_become_the_users_groups(owner, teammate, outsider):
    from django.contrib.auth.models import Group
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from teams.models import Membership

    before = [("teams", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_membership = executor.loader.project_state(before).apps.get_model("teams", "Membership")
    platform = Group.objects.create(name="Platform")
    research = Group.objects.create(name="Research")
    old_membership.objects.create(user_id=owner.pk, team_id=platform.pk, role="admin")
    old_membership.objects.create(user_id=teammate.pk, team_id=platform.pk, role="member")
    old_membership.objects.create(user_id=outsider.pk, team_id=research.pk, role="admin")
    # Links the admin made while the two disagreed: one of a member, one of a stranger.
    outsider.groups.add(research)
    teammate.groups.add(research)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert sorted(Membership.objects.values_list("user__username", "team__name", "role")) == [
        ("alice", "Platform", "admin"),
        ("bob", "Platform", "member"),
        ("bob", "Research", "member"),
        ("charlie", "Research", "admin"),
    ]
    assert list(owner.groups.all()) == [platform]
    assert "teams_membership" not in connection.introspection.table_names()


@pytest.mark.django_db(transaction=True)
@pytest.mark.sqlite_only("the FTS5 index of two columns that came before")
def test_facts_stored_before_sessions_had_an_order_are_dated_and_indexed_with_neighbours(owner):
    from datetime import UTC, datetime, timedelta

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from facts.models import Fact
    from facts.recall import fact_recall
    from facts.search import FACT_FTS
    from teams.services import Actor

    before = [("facts", "0015_learning_fingerprint")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_fact = executor.loader.project_state(before).apps.get_model("facts", "Fact")
    start = datetime(2024, 3, 1, 9, tzinfo=UTC)
    question, answer, alone = (
        old_fact.objects.create(
            owner_id=owner.pk,
            content=content,
            session_id=session,
            created_at=start + timedelta(minutes=i),
        )
        for i, (content, session) in enumerate(
            [
                ("Which city hosts the offsite?", "chat"),
                ("Porto, in the second week of June", "chat"),
                ("The printer jams on every job", ""),
            ]
        )
    )
    with connection.cursor() as cursor:  # as the old write services indexed them
        for fact in (question, answer, alone):
            cursor.execute(
                f"INSERT INTO {FACT_FTS.table}(rowid, content, tags) VALUES (%s, %s, '')",
                [fact.pk, fact.content],
            )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert Fact.objects.get(pk=answer.pk).occurred_at == answer.created_at
    assert FACT_FTS.content_of(answer.pk) == (answer.content, "", question.content, "")
    assert FACT_FTS.content_of(alone.pk) == (alone.content, "", "", "")
    found = fact_recall(actor=Actor(user=owner), query="offsite city", touch=False)
    assert answer.pk in [item.id for item in found.items]


@pytest.mark.postgresql_only("only PostgreSQL keeps a fact's keys in one list")
@pytest.mark.django_db(transaction=True)
def test_keys_stored_a_row_each_become_one_list_per_fact_and_still_find_duplicates(owner):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from facts.dedupe import KEY_FIELDS, KEYS_VERSION, stored_keys, stored_signature
    from facts.search import FACT_KEYS
    from facts.services.create import fact_create
    from teams.services import Actor

    before = [("facts", "0019_postgres_fact_storage")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    stored = old.get_model("facts", "Fact").objects.create(
        owner_id=owner.pk, content="The VPN gateway is vpn2 in Frankfurt", tags=["net"]
    )
    row = old.get_model("facts", "Fact").objects.values_list(*KEY_FIELDS).get(pk=stored.pk)
    keys = stored_keys(stored_signature(row))
    old.get_model("facts", "FactKey").objects.bulk_create(
        old.get_model("facts", "FactKey")(fact_id=stored.pk, key=key) for key in keys
    )
    old.get_model("facts", "MemoryConfig").objects.update_or_create(
        pk=1, defaults={"fact_keys_version": KEYS_VERSION}
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert FACT_KEYS.keys_of([stored.pk]) == {stored.pk: set(keys)}
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM facts_factkey")
        assert cursor.fetchone()[0] == 0
    result = fact_create(
        actor=Actor(user=owner), data={"content": "the VPN gateway is vpn2 in Frankfurt!"}
    )
    assert (result.created, result.fact.pk) == (False, stored.pk)


@pytest.mark.django_db(transaction=True)
def test_jobs_settings_and_role_presets_stored_before_the_move_keep_their_rows_and_grants(
    owner, staff
):
    """The jobs and the instance settings moved to the engine, the role presets to the
    surface: a database made before keeps every row, id and permission granted on them."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from memoryhub.engine.config import memory_config_get
    from memoryhub.engine.models import Job, MemoryConfig
    from memoryhub.surface.models import RolePreset

    executor = MigrationExecutor(connection)
    executor.migrate([("engine", None), ("surface", None)])
    try:
        before = [("memoryhub", "0003_role_preset_defaults"), ("facts", "0021_fact_keys_matching")]
        old = executor.loader.project_state(before).apps
        assert {"memoryhub_job", "facts_memoryconfig", "memoryhub_rolepreset"} <= set(
            connection.introspection.table_names()
        )
        job = old.get_model("memoryhub", "Job").objects.create(
            owner_id=owner.pk, kind="distill", state="done", progress=1.0, result={"summaries": 2}
        )
        old.get_model("facts", "MemoryConfig").objects.update_or_create(
            pk=1, defaults={"llm_url": "http://127.0.0.1:11434/v1", "recall_max_items": 5}
        )
        presets = old.get_model("memoryhub", "RolePreset")
        presets.objects.create(role="tester", entries=[{"tier": "org"}])
        preset_count = presets.objects.count()
        content_types = old.get_model("contenttypes", "ContentType")
        grant = old.get_model("auth", "Permission").objects.get(
            codename="change_rolepreset",
            content_type=content_types.objects.get(app_label="memoryhub", model="rolepreset"),
        )
        grant.user_set.add(staff.pk)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    tables = set(connection.introspection.table_names())
    assert {"engine_job", "engine_memoryconfig", "surface_rolepreset"} <= tables
    assert not {"memoryhub_job", "facts_memoryconfig", "memoryhub_rolepreset"} & tables
    moved = Job.objects.get(pk=job.pk)
    assert (moved.owner, moved.kind, moved.result) == (owner, "distill", {"summaries": 2})
    config = memory_config_get()
    assert (config.llm_url, config.recall_max_items) == ("http://127.0.0.1:11434/v1", 5)
    assert MemoryConfig.objects.count() == 1
    # The presets of the rest of the roles are added; the tester's own is kept as it was.
    added = importlib.import_module("memoryhub.surface.migrations.0002_every_roles_preset")
    assert RolePreset.objects.count() == preset_count + len(set(added.PRESETS) - {"tester"})
    assert RolePreset.objects.get(role="tester").entries == [{"tier": "org"}]
    assert Permission.objects.filter(codename="change_rolepreset").count() == 1
    assert get_user_model().objects.get(pk=staff.pk).has_perm("surface.change_rolepreset")
    # New rows follow the copied ones.
    assert Job.objects.create(owner=owner, kind="import").pk > job.pk


@pytest.mark.django_db(transaction=True)
def test_a_graph_stored_before_its_aliases_and_citations_were_checked_is_read_again(
    owner, outsider, make_user
):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from concepts.models import Alias, Entity, FactExtraction, Triple
    from concepts.selectors import concept_entity_find_visible, concept_relations
    from concepts.services import _graph_rows_write, concept_graph_sync
    from facts.models import Fact

    def relations(user, name: str) -> set[tuple[str, str, str]]:
        entity = concept_entity_find_visible(user=user, name=name)
        return {
            (r["subject"]["name"], r["relation"], r["object"]["name"])
            for r in concept_relations(user=user, entity=entity)
        }

    # The graph is written as it was before (the rows' shape has not changed since but
    # for refs, which going back to the first migration drops), then migrated.
    carol = make_user("carol")
    # As the graph was written before: anyone's global alias merged names in every fact,
    Alias.objects.create(
        owner=carol,
        visibility="global",
        alias_key="heronbase",
        alias_name="Heronbase",
        target_key="malloryhost",
        target_name="Malloryhost",
    )
    heronbase = Fact.objects.create(owner=owner, content="Heronbase depends on Ledgerd.")
    Fact.objects.create(owner=owner, content="Privatevault runs on Vaultd.")
    Fact.objects.create(owner=carol, content="Malloryhost runs on Evilcorpdb.", visibility="global")
    zephyrcore = Fact.objects.create(
        owner=outsider, content="Zephyrcore runs on Kubelet.", visibility="global"
    )
    concept_graph_sync()
    # and a model could cite a private fact's names to a global fact of its batch.
    stored = FactExtraction.objects.get(fact=zephyrcore)
    stored.triples.append(
        {"subject": "Zephyrcore", "relation": "mentioned_with", "object": "Privatevault"}
    )
    stored.save()
    _graph_rows_write(fact_ids=[zephyrcore.pk])
    assert ("Heronbase", "runs_on", "Evilcorpdb") in relations(owner, "heronbase")
    assert ("Zephyrcore", "mentioned_with", "Privatevault") in relations(outsider, "zephyrcore")
    executor = MigrationExecutor(connection)
    executor.migrate([("concepts", "0001_initial")])

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert Alias.objects.get().visibility == "private"
    again = [heronbase.pk, zephyrcore.pk]
    assert not FactExtraction.objects.filter(fact_id__in=again).exists()
    assert not Triple.objects.filter(fact_id__in=again).exists()
    # The catch-up reads the two facts again, and the two others, which the offline
    # rules of before read (0005 has the catch-up read those again).
    assert concept_graph_sync().facts == 4
    assert relations(owner, "heronbase") == {("Heronbase", "depends_on", "Ledgerd")}
    assert relations(outsider, "zephyrcore") == {("Zephyrcore", "runs_on", "Kubelet")}
    assert relations(owner, "privatevault") == {("Privatevault", "runs_on", "Vaultd")}
    assert Entity.objects.filter(key="privatevault").exists()


@pytest.mark.django_db(transaction=True)
def test_entities_stored_before_refs_get_the_refs_their_names_give():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from concepts.models import Entity, EntityRefKey
    from concepts.normalise import entity_ref
    from concepts.services import _entities_ensure

    before = [("concepts", "0002_graph_rows_checked_again")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_entity = executor.loader.project_state(before).apps.get_model("concepts", "Entity")
    stored = {key: old_entity.objects.create(key=key).pk for key in ("kestrelvault", "@user:7")}

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    secret = EntityRefKey.current()
    refs = dict(Entity.objects.values_list("key", "ref"))
    assert refs == {key: entity_ref(key, secret=secret) for key in stored}
    # A name written now finds its row and ref; a fresh one gets its ref the same way.
    assert _entities_ensure({"kestrelvault", "quillgate"})["kestrelvault"] == stored["kestrelvault"]
    assert Entity.objects.get(key="kestrelvault").ref == refs["kestrelvault"]
    assert Entity.objects.get(key="quillgate").ref == entity_ref("quillgate", secret=secret)


@pytest.mark.django_db(transaction=True)
def test_a_graph_keyed_before_names_folded_case_and_possessives_merges(owner):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    from concepts.models import Alias, Entity, EntityRefKey, FactExtraction, Triple
    from concepts.normalise import entity_ref
    from concepts.selectors import (
        concept_entity_find_visible,
        concept_paths,
        concept_relations,
    )
    from concepts.services import concept_graph_sync
    from facts.models import Fact

    before = [("concepts", "0004_entity_refs_required")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    # The mentions of then (later migrations add to them).
    OldMention = executor.loader.project_state(before).apps.get_model("concepts", "Mention")
    # Rows as the keys of before wrote them: "redis" was "redi", "Alice's" its own key,
    # the offline rules' "atlas project" apart from "Atlas".
    secret = EntityRefKey.current()
    entities = {
        key: Entity.objects.create(key=key, ref=entity_ref(key, secret=secret)).pk
        for key in ("alice", "alice's", "redi", "redis", "marta kowalski", "atlas",
                    "atla project", "postgresql")
    }  # fmt: skip

    def stored(content: str, provider: str, names: dict, triples: list) -> Fact:
        fact = Fact.objects.create(owner=owner, content=content)
        FactExtraction.objects.create(
            fact=fact,
            fact_updated_at=fact.updated_at,
            provider=provider,
            triples=[{"subject": s, "relation": r, "object": o} for s, r, o in triples],
        )
        for name, key in names.items():
            OldMention.objects.create(
                entity_id=entities[key], fact_id=fact.pk, name=name, raw_key=key
            )
        for s, r, o in triples:
            Triple.objects.create(
                subject_id=entities[names[s]], relation=r, object_id=entities[names[o]], fact=fact
            )
        return fact

    by_model = [
        stored("alice uses redis.", "a-model", {"alice": "alice", "redis": "redi"},
               [("alice", "uses", "redis")]),
        stored("Alice's laptop talks to Redis.", "a-model",
               {"Alice's": "alice's", "Redis": "redis"}, [("Alice's", "connects_to", "Redis")]),
    ]  # fmt: skip
    offline = [
        stored("Marta Kowalski leads the Atlas project.", "offline",
               {"Marta Kowalski": "marta kowalski", "Atlas": "atlas"},
               [("Marta Kowalski", "manages", "Atlas")]),
        stored("The Atlas project uses PostgreSQL.", "offline",
               {"atlas project": "atla project", "PostgreSQL": "postgresql"},
               [("atlas project", "uses", "PostgreSQL")]),
    ]  # fmt: skip
    # An alias whose two names are now one key.
    Alias.objects.create(
        owner=owner,
        visibility="private",
        alias_key="alice's",
        alias_name="Alice's",
        target_key="alice",
        target_name="Alice",
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert not Alias.objects.exists()
    assert not Entity.objects.filter(key__in=["redi", "alice's"]).exists()
    alice = concept_entity_find_visible(user=owner, name="Alice")
    redis = concept_entity_find_visible(user=owner, name="REDIS")
    assert (alice.mentions, redis.mentions) == (2, 2)
    assert alice.ref == entity_ref("alice", secret=secret)
    assert {
        (e["relation"], e["object"]["ref"]) for e in concept_relations(user=owner, entity=alice)
    } == {
        ("uses", redis.ref),
        ("connects_to", redis.ref),
    }
    # What a chat model said is kept; what the offline rules said is read again.
    assert set(
        FactExtraction.objects.filter(fact_id__in=[f.pk for f in by_model]).values_list(
            "fact_updated_at", flat=True
        )
    ) == {f.updated_at for f in by_model}
    assert concept_graph_sync().facts == len(offline)
    atlas = concept_entity_find_visible(user=owner, name="Atlas project")
    assert atlas.mentions == 2
    marta = concept_entity_find_visible(user=owner, name="Marta Kowalski")
    postgres = concept_entity_find_visible(user=owner, name="PostgreSQL")
    assert len(concept_paths(user=owner, start=marta, end=postgres)[0]) == 2


@pytest.mark.django_db(transaction=True)
def test_jobs_stranded_before_heartbeats_are_found_by_the_first_sweep(owner, settings):
    """A job left running by a worker that died before jobs had a heartbeat gets its task
    from its kind and its start as its last sign of life: the first sweep queues it again."""
    from datetime import timedelta

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor
    from django.utils import timezone

    from memoryhub.engine.jobs import jobs_sweep
    from memoryhub.engine.models import Job

    executor = MigrationExecutor(connection)
    executor.migrate([("engine", "0001_initial")])
    long_ago = timezone.now() - timedelta(days=1)
    try:
        old = executor.loader.project_state([("engine", "0001_initial")]).apps
        stranded = old.get_model("engine", "Job").objects.create(
            owner_id=owner.pk, kind="distill", state="running", started_at=long_ago
        )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    job = Job.objects.get(pk=stranded.pk)
    assert (job.task, job.attempts, job.heartbeat_at) == ("facts.distill", 1, long_ago)
    assert jobs_sweep()["queued_again"] == [job.pk]
    job.refresh_from_db()
    assert job.state == "done" and job.attempts == 2  # run again, here in-process
