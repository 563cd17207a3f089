"""Features keep each other's promises, property-based: random worlds of people writing
facts in mixed chat sessions (so each fact's full-text entry also holds its session
neighbours' words), then the features that decide *which* rows a person meant:

- exact search never returns a fact whose own words (content, tags) lack a word asked;
- forgetting a topic ticks, and without ids removes, only facts holding a name or
  content word of the topic in their own words (embeddings are off here: nothing is
  near in meaning), and removes nothing else;
- importing someone's export never gives any reader a second copy of a statement they
  could already read.

Bounded in CI; ``MEMORYHUB_PROPERTY_EXAMPLES=200`` searches deeper.
"""

import json
import os
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facts.models import Fact
from memoryhub.engine.search.text import STOPWORDS, stem, words
from teams.models import Membership

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("MEMORYHUB_PROPERTY_EXAMPLES") or 10)
NAMES = ["Acme Corp", "Initech", "Argo CD", "Dana Kowalski", "Lisbon", "Biscuit"]
WORDS = ["salary", "paged", "page", "status", "night", "deploys", "strict", "knee", "coffee",
         "typescript", "budget", "offsite", "vpn", "client", "rotation"]  # fmt: skip
FRAMES = ["{x}", "forget everything about {x}", "delete what you know about my {x}"]
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=False,
    suppress_health_check=list(HealthCheck),
)


@st.composite
def statements(draw) -> dict:
    """One fact: a few words and maybe a name, of one of three people, in one of three
    chat sessions, at one of three visibilities."""
    parts = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5, unique=True))
    name = draw(st.none() | st.sampled_from(NAMES))
    if name is not None:
        parts.insert(draw(st.integers(0, len(parts))), name)
    return {
        "content": "Note: " + " ".join(parts) + ".",
        "author": draw(st.integers(0, 2)),
        "session_id": draw(st.sampled_from(["chat-1", "chat-2", "chat-3"])),
        "visibility": draw(st.sampled_from(["private", "team", "global"])),
    }


worlds = st.lists(statements(), min_size=3, max_size=14)


def own_words(fact: Fact) -> list[str]:
    return words(f"{fact.content} {' '.join(fact.tags or [])}")


@pytest.fixture
def people(db):
    """Three people, the first two in one team."""
    make = get_user_model().objects.create_user
    users = [make(username=name) for name in ("ana", "bo", "cy")]
    team = Group.objects.create(name="core")
    for user in users[:2]:
        Membership.objects.create(user=user, team=team)
    clients = []
    for user in users:
        client = Client()
        client.force_login(user)
        clients.append(client)
    return users, team, clients


def write(world: list[dict], people) -> list[int]:
    _, team, clients = people
    ids = []
    for fact in world:
        body = {k: fact[k] for k in ("content", "session_id", "visibility")}
        if fact["visibility"] == "team":
            body["team"] = team.pk if fact["author"] < 2 else None
            if body["team"] is None:
                body["visibility"] = "private"
        answer = clients[fact["author"]].post(
            "/api/memories", json.dumps(body), content_type="application/json"
        )
        assert answer.status_code in (200, 201), answer.content  # 200: merged into one
        ids.append(answer.json()["id"])
    return ids


def in_a_rolled_back_world(run) -> None:
    with transaction.atomic():
        try:
            run()
        finally:
            transaction.set_rollback(True)


@PROPERTY
@given(world=worlds, asked=st.lists(st.sampled_from(WORDS + NAMES), min_size=1, max_size=2))
def test_exact_search_returns_only_facts_holding_every_word(people, world, asked):
    def run():
        write(world, people)
        query = " ".join(asked)
        wanted = words(query)
        for client in people[2]:
            found = client.get("/api/memories/search", {"q": query, "mode": "exact"}).json()
            for item in found["items"]:
                said = own_words(Fact.objects.get(pk=item["id"]))
                for word in wanted[:-1]:
                    assert word in said, (query, item["content"])
                assert any(w.startswith(wanted[-1]) for w in said), (query, item["content"])

    in_a_rolled_back_world(run)


def topic_words(topic: str) -> set[str]:
    """The stems of the topic's words that could name what it is about."""
    return {stem(w) for w in words(topic) if w not in STOPWORDS}


@PROPERTY
@given(
    world=worlds,
    about=st.sampled_from(WORDS + NAMES),
    frame=st.sampled_from(FRAMES),
    who=st.integers(0, 2),
)
def test_forgetting_a_topic_removes_only_facts_that_hold_it(people, world, about, frame, who):
    def run():
        write(world, people)
        client, user = people[2][who], people[0][who]
        topic = frame.format(x=about)
        preview = client.post(
            "/api/forget", json.dumps({"topic": topic, "dry_run": True}), "application/json"
        ).json()
        certain = {m["id"] for m in preview["matches"] if m["certain"]}
        stems = topic_words(topic)
        for fact in Fact.objects.filter(pk__in=certain):
            assert fact.owner_id == user.pk
            assert stems & {stem(w) for w in own_words(fact)}, (topic, fact.content)
        status = dict(Fact.objects.values_list("pk", "status"))
        receipt = client.post("/api/forget", json.dumps({"topic": topic}), "application/json")
        assert receipt.status_code == 200, receipt.content
        removed = set(receipt.json()["fact_ids"])
        # What went is the certain matches and the earlier wordings merges kept of them.
        assert certain <= removed
        assert all(status[pk] == "archived" for pk in removed - certain)
        assert set(Fact.objects.values_list("pk", flat=True)) == set(status) - removed

    in_a_rolled_back_world(run)


def readable(client: Client) -> Counter:
    """How many active rows of each statement ``client``'s person can read."""
    found = client.get("/api/memories", {"limit": 200}).json()["items"]
    return Counter(item["content"] for item in found)


@PROPERTY
@given(world=worlds, exporter=st.integers(0, 2), importer=st.integers(0, 2))
def test_an_import_never_gives_a_reader_a_second_copy(people, world, exporter, importer):
    def run():
        write(world, people)
        clients = people[2]
        export = clients[exporter].get("/api/export/personalization")
        document = json.loads(b"".join(export.streaming_content))
        before = [readable(client) for client in clients]
        answer = clients[importer].post(
            "/api/memories/import", json.dumps(document), content_type="application/json"
        )
        assert answer.status_code == 200, answer.content
        for reader, client in enumerate(clients):
            after = readable(client)
            for statement, count in before[reader].items():
                assert after[statement] == count, (reader, statement, count, after[statement])

    in_a_rolled_back_world(run)
