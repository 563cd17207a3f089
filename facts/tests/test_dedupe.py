"""Near-duplicate keys: every pair the rules call duplicates shares a key, and the
keys follow a fact through batches, merges, updates, supersession and the cap."""

import random

import pytest

from facts.dedupe import (
    MIN_SIMILARITY,
    is_near_duplicate,
    query_keys,
    signature,
    stored_keys,
)
from facts.models import Fact, Origin, Status
from facts.search import FACT_KEYS
from facts.services.config import memory_config_update
from facts.services.create import fact_bulk_create
from facts.services.update import fact_update
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor

VOCABULARY = [f"w{i}{'x' * (i % 7)}" for i in range(40)]
TAGS = [f"t{i}" for i in range(6)]


def sig(words: list[str], tags: list[str], scope: tuple = (1, None, "private", "", 1)):
    owner, team, visibility, project, layer = scope
    return signature(
        owner_id=owner,
        team_id=team,
        visibility=visibility,
        project=project,
        layer=layer,
        content=" ".join(words),
        tags=tags,
    )


@pytest.mark.parametrize("similarity", [MIN_SIMILARITY, 0.85, 0.92, 1.0])
def test_every_duplicate_pair_shares_a_key(similarity):
    """Prefix filtering is exact: no pair the rules accept can be missed by the
    key lookup (checked on many random pairs built near the thresholds)."""
    rng = random.Random(7)
    duplicates = 0
    for _ in range(4000):
        base = rng.sample(VOCABULARY, rng.randint(1, 14))
        other = [w for w in base if rng.random() > 0.2] + rng.sample(VOCABULARY, rng.randint(0, 3))
        new_tags = rng.sample(TAGS, rng.randint(0, 4))
        old_tags = rng.sample(TAGS, rng.randint(0, 4))
        new, old = sig(other or base, new_tags), sig(base, old_tags)
        if is_near_duplicate(new, old, similarity):
            duplicates += 1
            assert set(query_keys(new, similarity)) & set(stored_keys(old)), (new, old)
    assert duplicates > 300  # the sample really exercises both rules


@pytest.mark.parametrize("similarity", [MIN_SIMILARITY, 0.85, 0.92, 1.0])
def test_similar_texts_share_a_word_key(similarity):
    """Without tags only the word keys can find a duplicate: every pair similar enough
    shares one, from one word up to twenty (sizes where the keys are a word, a pair and
    triples from prefixes of many lengths)."""
    rng = random.Random(3)
    duplicates = 0
    for _ in range(6000):
        base = rng.sample(VOCABULARY, rng.randint(1, 20))
        other = [w for w in base if rng.random() > 0.08] + rng.sample(VOCABULARY, rng.randint(0, 2))
        new, old = sig(other or base, []), sig(base, [])
        if is_near_duplicate(new, old, similarity):
            duplicates += 1
            assert set(query_keys(new, similarity)) & set(stored_keys(old)), (new, old)
    assert duplicates > 1000


def test_subject_keys_leave_out_the_tags_own_words():
    """Tags made of content words (as "rosa-quinn" for a fact naming Rosa Quinn): the
    keys skip those words, and still no same-subject pair is missed."""
    rng = random.Random(11)
    vocabulary = VOCABULARY[:16]
    tags = [f"{a}-{b}" for a, b in zip(vocabulary[::2], vocabulary[1::2], strict=True)]
    duplicates = 0
    for _ in range(4000):
        base = rng.sample(vocabulary, rng.randint(1, 9))
        other = [w for w in base if rng.random() > 0.45] + rng.sample(vocabulary, rng.randint(0, 4))
        new_tags = rng.sample(tags, rng.randint(1, 3))
        old_tags = new_tags[: rng.randint(1, len(new_tags))] + rng.sample(tags, rng.randint(0, 2))
        new, old = sig(other or base, new_tags), sig(base, old_tags)
        if is_near_duplicate(new, old, 1.0):  # the same-subject rule alone
            duplicates += 1
            assert set(query_keys(new, 1.0)) & set(stored_keys(old)), (new, old)
    assert duplicates > 300


@pytest.mark.parametrize(
    "other",
    [
        (2, None, "private", "", 1),  # another owner
        (1, 7, "private", "", 1),  # another team
        (1, None, "global", "", 1),  # another visibility
        (1, None, "private", "web", 1),  # another project
        (1, None, "private", "", 2),  # another layer
    ],
)
def test_keys_depend_on_the_scope(other):
    words = "Alice prefers tabs over spaces".split()
    mine, theirs = sig(words, ["style"]), sig(words, ["style"], other)
    assert not set(query_keys(mine, 0.9)) & set(stored_keys(theirs))
    assert not is_near_duplicate(mine, theirs, 0.9)


def test_texts_without_words_match_only_the_same_text():
    assert is_near_duplicate(sig(["!!!"], []), sig(["!!!"], []), 0.9)
    assert not is_near_duplicate(sig(["!!!"], []), sig(["???"], []), 0.9)


@pytest.mark.django_db
def test_a_batch_merges_an_item_into_an_earlier_one(owner):
    results = fact_bulk_create(
        actor=Actor(user=owner),
        items=[
            {"content": "Alice prefers tabs over spaces in Python code", "tags": ["style"]},
            {"content": "The build server is in Frankfurt"},
            {"content": "alice prefers tabs over spaces in python code!", "tags": ["python"]},
        ],
    )
    assert [r.created for r in results] == [True, True, False]
    assert results[2].fact.pk == results[0].fact.pk
    merged = Fact.objects.get(pk=results[0].fact.pk)
    assert merged.origin == Origin.MERGED
    assert merged.tags == ["style", "python"]
    assert [p.content for p in merged.derived_from.all()] == [
        "Alice prefers tabs over spaces in Python code"
    ]
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 2


@pytest.mark.django_db
def test_a_batch_merges_into_stored_facts_in_order(owner):
    actor = Actor(user=owner)
    [first] = fact_bulk_create(actor=actor, items=[{"content": "Deploys happen on Tuesday"}])
    results = fact_bulk_create(
        actor=actor,
        items=[{"content": "deploys happen on tuesday."}, {"content": "Deploys happen on Tuesday"}],
    )
    assert [r.fact.pk for r in results] == [first.fact.pk, first.fact.pk]
    fact = Fact.objects.get(pk=first.fact.pk)
    assert fact.content == "Deploys happen on Tuesday"
    # One archived row per merge: the two wordings the merges replaced.
    assert sorted(fact.derived_from.values_list("content", flat=True)) == [
        "Deploys happen on Tuesday",
        "deploys happen on tuesday.",
    ]


def keyed(fact: Fact) -> bool:
    return bool(FACT_KEYS.keys_of([fact.pk]))


@pytest.mark.django_db
def test_keys_follow_updates_supersession_and_the_cap(owner, remember, staff):
    a = remember(owner, "The staging database runs PostgreSQL 16")
    assert keyed(a)
    moved = fact_update(actor=Actor(user=owner), fact=a, changes={"project": "web"})
    again = remember(owner, "The staging database runs PostgreSQL 16")
    assert again.pk != moved.pk  # the first now lives in another project
    in_web = remember(owner, "the staging database runs postgresql 16", project="web")
    assert in_web.pk == moved.pk

    newer = remember(owner, "The staging database runs PostgreSQL 17", supersedes=again.pk)
    assert not keyed(Fact.objects.get(pk=again.pk)) and keyed(newer)
    repeat = remember(owner, "The staging database runs PostgreSQL 16")
    assert repeat.pk not in (again.pk, newer.pk)  # a superseded fact takes no merges

    memory_config_update(actor=Actor(user=staff), changes={"max_active_facts": 2})
    remember(owner, "Lunch is at noon on Fridays", importance=1.0)
    archived = Fact.objects.filter(owner=owner, project="", status=Status.ARCHIVED)
    assert archived.exists() and not FACT_KEYS.keys_of(archived.values_list("pk", flat=True))


@pytest.mark.django_db
def test_the_merge_similarity_setting_decides(owner, remember, staff):
    text = "Release notes go to the platform channel every Friday afternoon after the demo"
    variant = "Release notes go to the platform channel every Friday evening after the demo"
    memory_config_update(actor=Actor(user=staff), changes={"dedupe_similarity": 1.0})
    first = remember(owner, text)
    assert remember(owner, variant).pk != first.pk
    assert MemoryConfig.objects.get().dedupe_similarity == 1.0
    memory_config_update(actor=Actor(user=staff), changes={"dedupe_similarity": 0.8})
    # 8 of 10 words shared: similar enough at 0.8.
    third = remember(
        owner, "Release notes go to the platform channel every Friday night after the demo"
    )
    assert Fact.objects.get(pk=third.pk).origin == Origin.MERGED


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_candidates_are_looked_up_ahead(owner, monkeypatch):
    """Outside a caller's transaction a second connection looks candidates up while
    the batch is checked; the outcome is the same as looking them up in turn."""
    from facts import dedupe

    looked_ahead = []
    original = dedupe.read_ahead

    def read_ahead(produce, **kwargs):
        answers = original(produce, **kwargs)
        looked_ahead.append(answers is not None)
        return answers

    monkeypatch.setattr(dedupe, "read_ahead", read_ahead)
    actor = Actor(user=owner)
    stored = fact_bulk_create(
        actor=actor,
        items=[
            {"content": f"Service {name} is owned by the {team} team"}
            for name, team in [
                ("billing", "payments"),
                ("search", "discovery"),
                ("auth", "identity"),
            ]
        ],
    )
    again = fact_bulk_create(
        actor=actor,
        items=[
            {"content": "service SEARCH is owned by the discovery team."},
            {"content": "The office plants are watered on Mondays"},
            {"content": "The office plants are watered on Mondays!"},
        ],
    )
    assert looked_ahead == [True, True]
    assert [r.created for r in again] == [False, True, False]
    assert again[0].fact.pk == stored[1].fact.pk
    assert again[2].fact.pk == again[1].fact.pk
    assert Fact.objects.filter(status=Status.ACTIVE).count() == 4


@pytest.mark.django_db(transaction=True)
def test_a_batch_read_ahead_by_several_readers_finds_each_duplicate_in_its_place(owner):
    """The look-ahead deals a long batch's chunks out to its readers in turn: each
    repeat of a stored fact, wherever it falls, merges into that fact, and the others
    are new."""
    from facts.dedupe import LOOK_AHEAD_CHUNK, LOOK_AHEAD_FIRST, look_ahead_chunks
    from memoryhub.engine.search.readahead import READERS

    actor = Actor(user=owner)
    places = ["Lisbon", "Oslo", "Quito", "Hanoi", "Perth", "Accra", "Lima"]
    stored = fact_bulk_create(
        actor=actor,
        items=[
            {"content": f"The {place} office opens at {8 + i} every weekday"}
            for i, place in enumerate(places)
        ],
    )
    size = LOOK_AHEAD_FIRST + LOOK_AHEAD_CHUNK * READERS + 5
    assert len(look_ahead_chunks(range(size))) > READERS * 2  # every reader takes several
    items = [{"content": f"Build agent {n} runs job number {n * 7} nightly"} for n in range(size)]
    repeats = {}
    for i, at in enumerate(range(3, size, size // len(places))[: len(places)]):
        items[at] = {"content": f"the {places[i]} office opens at {8 + i} every weekday!"}
        repeats[at] = stored[i].fact.pk
    results = fact_bulk_create(actor=actor, items=items)
    assert {at: results[at].fact.pk for at in repeats} == repeats
    assert all(not results[at].created for at in repeats)
    new = [r for at, r in enumerate(results) if at not in repeats]
    assert all(r.created for r in new) and len({r.fact.pk for r in new}) == len(new)


def _keys_of(fact_id: int) -> set[int]:
    return FACT_KEYS.keys_of([fact_id]).get(fact_id, set())


def _expected_keys(fact_id: int) -> set[int]:
    from facts.dedupe import KEY_FIELDS, stored_signature

    return set(stored_keys(stored_signature(Fact.objects.values_list(*KEY_FIELDS).get(pk=fact_id))))


@pytest.mark.django_db
def test_keys_built_by_older_rules_are_rebuilt_before_the_next_write(owner):
    from facts.dedupe import KEYS_VERSION
    from facts.services.create import fact_create

    actor = Actor(user=owner)
    first = fact_create(actor=actor, data={"content": "The VPN gateway is vpn2 in Frankfurt"})
    other = fact_create(actor=actor, data={"content": "Standups start at 9:30 on Mondays"})
    # As an older layout would have keyed them.
    FACT_KEYS.clear()
    FACT_KEYS.add([(first.fact.pk, [12345]), (other.fact.pk, [12345])])
    MemoryConfig.objects.filter(pk=1).update(fact_keys_version=KEYS_VERSION - 1)

    again = fact_create(actor=actor, data={"content": "the VPN gateway is vpn2 in Frankfurt!"})
    assert (again.created, again.fact.pk) == (False, first.fact.pk)
    assert _keys_of(other.fact.pk) == _expected_keys(other.fact.pk)
    assert MemoryConfig.objects.get(pk=1).fact_keys_version == KEYS_VERSION


@pytest.mark.django_db
def test_rebuild_fact_keys_command_rebuilds_only_when_stale(owner, capsys):
    from django.core.management import call_command

    from facts.dedupe import KEYS_VERSION
    from facts.services.create import fact_create

    fact = fact_create(actor=Actor(user=owner), data={"content": "Deploys go out on Tuesdays"})
    FACT_KEYS.clear()
    call_command("rebuild_fact_keys", "--if-stale")
    assert "current" in capsys.readouterr().out
    assert not _keys_of(fact.fact.pk)

    MemoryConfig.objects.filter(pk=1).update(fact_keys_version=0)
    call_command("rebuild_fact_keys", "--if-stale")
    assert "Keyed 1 active facts" in capsys.readouterr().out
    assert _keys_of(fact.fact.pk) == _expected_keys(fact.fact.pk)
    assert MemoryConfig.objects.get(pk=1).fact_keys_version == KEYS_VERSION


@pytest.mark.django_db
def test_inside_a_callers_transaction_candidates_are_looked_up_in_turn(owner):
    """A second connection would miss the caller's uncommitted facts: in turn, they are
    found."""
    from django.db import transaction

    actor = Actor(user=owner)
    with transaction.atomic():
        stored = fact_bulk_create(
            actor=actor, items=[{"content": "Service billing is owned by the payments team"}]
        )
        again = fact_bulk_create(
            actor=actor,
            items=[
                {"content": "service BILLING is owned by the payments team."},
                {"content": "The office plants are watered on Mondays"},
            ],
        )
    assert [r.created for r in again] == [False, True]
    assert again[0].fact.pk == stored[0].fact.pk


@pytest.mark.postgresql_only("the GIN index and the planner are PostgreSQL's")
@pytest.mark.django_db
def test_key_lookups_count_each_lookups_shared_keys_through_the_index(owner, remember):
    from django.db import connection

    fact = remember(owner, "The staging database runs PostgreSQL 16")
    keys = sorted(_keys_of(fact.pk))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE facts_factkeylist")
    other = remember(owner, "Lunch is served at noon in the atrium")
    lookups = [[*keys, 1, 2], [3], [keys[0]]]
    found = FACT_KEYS.sharing(lookups, 16, 4)
    assert [f.owners for f in found] == [[(fact.pk, len(keys), len(keys))], [], [(fact.pk, 1, 1)]]
    assert [f.read for f in found] == [len(keys), 0, 1] and not any(f.cut for f in found)
    assert other.pk not in {i for f in found for i, _, _ in f.owners}
    with connection.cursor() as cursor:
        cursor.execute("SELECT proconfig FROM pg_proc WHERE proname = 'facts_keys_matching'")
        (config,) = cursor.fetchone()
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT q.n, l.fact_id FROM unnest(%s::int[], %s::bigint[]) AS q(n, key) "
            "JOIN facts_factkeylist l ON l.keys @> ARRAY[q.key]",
            [[0] * len(keys), keys],
        )
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert config == ["enable_seqscan=off"] and "factkeylist_keys" in plan


STAGING = "The staging cluster for {project} uses {tool} and {tool2} behind {proxy}."


def _staging(n: int) -> dict:
    """A fact of the staging kind about subjects of its own: it shares with every other
    one the keys of the kind's words ("staging cluster behind") and nothing else."""
    project, tool, tool2 = (f"{letter}{n}" for letter in "PKR")
    content = STAGING.format(project=project, tool=tool, tool2=tool2, proxy="Envoy")
    return {"content": content, "tags": [project.lower(), tool.lower(), tool2.lower()]}


@pytest.mark.parametrize("write", ["one", "batch"])
@pytest.mark.django_db(transaction=True)
def test_a_repeat_merges_into_an_old_fact_however_many_facts_of_its_kind_came_after(
    owner, monkeypatch, write
):
    """A lookup reads only the newest holders of the keys every fact of a kind shares;
    the repeat of an old fact still finds it through the keys they alone share."""
    from facts import dedupe
    from facts.services.create import fact_create

    monkeypatch.setattr(dedupe, "PER_KEY", dedupe.CANDIDATES)
    actor = Actor(user=owner)
    old = {
        "content": "The staging cluster for Echo uses Spark and vLLM behind Nginx.",
        "tags": ["echo", "spark", "vllm"],
    }
    (stored,) = fact_bulk_create(actor=actor, items=[old])
    # More facts of the kind than are read of a key, or checked: the newest of them share
    # more keys with the repeat than the old fact does, but none of its rarer ones.
    fact_bulk_create(actor=actor, items=[_staging(n) for n in range(dedupe.CANDIDATES * 3)])
    repeat = {
        "content": "The staging cluster for Echo uses vLLM and React behind Caddy.",
        "tags": ["echo", "vllm", "react"],
    }
    if write == "one":
        result = fact_create(actor=actor, data=repeat)
    else:
        result, _ = fact_bulk_create(actor=actor, items=[repeat, _staging(99)])
    assert not result.created
    assert result.fact.pk == stored.fact.pk


@pytest.mark.django_db
def test_a_lookup_reads_no_more_holders_of_a_key_as_the_store_grows(owner, monkeypatch):
    """Each key looked up gives at most PER_KEY holders, the newest: the rows one write
    reads stay the same however many facts of its kind are stored."""
    from facts import dedupe
    from facts.services.cleaning import fact_input_clean
    from facts.services.create import signature_of
    from memoryhub.engine.config import memory_config_get
    from teams.services import scope_for_new_row

    monkeypatch.setattr(dedupe, "PER_KEY", 4)
    actor = Actor(user=owner)
    item = fact_input_clean(data=_staging(500), config=memory_config_get())
    scope = scope_for_new_row(user=owner, team=None, visibility=item.visibility, project="")
    keys = query_keys(signature_of(item, scope), MIN_SIMILARITY)

    read, stored = [], 0
    for size in (40, 160, 480):
        fact_bulk_create(actor=actor, items=[_staging(n) for n in range(stored, size)])
        stored = size
        found = dedupe.candidate_ids(keys)
        read.append(found.read)
        assert found.cut  # the kind's keys are held by more facts than are read
    assert read[1] == read[2] <= 4 * len(keys)
    # Unbounded, the same lookup would read a row for every fact of the kind.
    monkeypatch.setattr(dedupe, "PER_KEY", 10**6)
    assert dedupe.candidate_ids(keys).read > 480
