"""Which facts a topic means: read from each fact's own words and meaning, never from the
words its session neighbours lend it for recall; a topic said as people say it, names
matched as phrases, and a preview that tells certain matches from possible ones."""

import pytest

from facts.models import Fact

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = [
    "I work at Acme Corp as a senior engineer",
    "The user prefers TypeScript with strict mode",
    "Our deploys go through Argo CD",
]
ACME = [
    "I work at Acme Corp as a senior engineer",
    "My manager at Acme Corp was Priya Raman",
    "Acme Corp paid a yearly bonus every March",
    "I commuted to the Acme Corp office in Leeds by train",
    "Acme Corp used Jira for every team's tickets",
    "Acme Corp's VPN requires the Cisco AnyConnect client",
]


def post(client, path: str, body: object):
    return client.post(path, body, content_type="application/json")


@pytest.fixture
def alice(owner, agent_client):
    return agent_client(owner)


@pytest.fixture
def chat(alice):
    """Three unrelated statements of one chat session, written one by one."""
    ids = []
    for content in CHAT:
        answer = post(alice, "/api/memories", {"content": content, "session_id": "chat-1"})
        assert answer.status_code == 201, answer.content
        ids.append(answer.json()["id"])
    return ids


def test_forgetting_a_name_removes_the_fact_that_holds_it_and_not_its_session_neighbours(
    alice, chat
):
    receipt = post(alice, "/api/forget", {"topic": "Acme Corp"}).json()
    assert receipt["fact_ids"] == [chat[0]]
    assert set(Fact.objects.filter(pk__in=chat).values_list("pk", flat=True)) == set(chat[1:])


def test_exact_search_returns_only_facts_holding_the_words(alice, chat):
    found = alice.get("/api/memories/search", {"q": "Acme", "mode": "exact"}).json()
    assert [m["id"] for m in found["items"]] == [chat[0]]
    typescript = alice.get("/api/memories/search", {"q": "TypeScript strict", "mode": "exact"})
    assert [m["id"] for m in typescript.json()["items"]] == [chat[1]]
    # Hybrid search, which a bulk selection starts from, shows no fact for a word that
    # only a neighbour holds either.
    hybrid = alice.get("/api/memories/search", {"q": "Argo"}).json()
    assert [m["id"] for m in hybrid["items"]] == [chat[2]]


def test_a_recall_still_ranks_by_the_neighbours_words(alice, chat):
    """The neighbours' words are a ranking signal: recall may bring the session's other
    statements for a question about one of them."""
    answer = post(alice, "/api/recall", {"query": "Acme Corp", "max_items": 5}).json()
    assert chat[0] in [item["id"] for item in answer["items"]]


def test_a_topic_said_as_people_say_it_finds_every_fact_naming_it(alice):
    ids = [post(alice, "/api/memories", {"content": c}).json()["id"] for c in ACME]
    other = post(alice, "/api/memories", {"content": "I started a new job at Initech"}).json()
    preview = post(
        alice,
        "/api/forget",
        {"topic": "Forget everything about my old job at Acme Corp", "dry_run": True},
    ).json()
    certain = {m["id"] for m in preview["matches"] if m["certain"]}
    assert certain == set(ids)  # the VPN fact too, though it says nothing of a job
    vpn = next(m for m in preview["matches"] if m["id"] == ids[-1])
    assert "names acme corp" in vpn["why"]
    # A fact close in meaning that names no Acme Corp may be meant: shown, not ticked.
    maybe = {m["id"]: m for m in preview["matches"] if not m["certain"]}
    assert other["id"] in maybe and maybe[other["id"]]["why"][0].startswith("close in meaning")
    # Forgetting without ids takes the certain ones and lists the others, kept.
    receipt = post(alice, "/api/forget", {"topic": "my old job at Acme Corp"}).json()
    assert sorted(receipt["fact_ids"]) == sorted(ids)
    assert [p["id"] for p in receipt["possible"]] == [other["id"]]
    assert Fact.objects.filter(pk=other["id"]).exists()


def test_a_topic_matches_words_not_their_stems_in_other_words(alice):
    paged = post(
        alice,
        "/api/memories",
        {"content": "Alice dislikes being paged for non-critical alerts after 22:00"},
    ).json()
    status = post(alice, "/api/memories", {"content": "Our status page is on Statuspage.io"})
    preview = post(alice, "/api/forget", {"topic": "being paged at night", "dry_run": True})
    matches = {m["id"]: m for m in preview.json()["matches"]}
    # Hers, and shown: it holds "paged" and is near in meaning; not ticked, as it says
    # nothing of nights.
    assert "holds the words paged" in matches[paged["id"]]["why"]
    assert status.json()["id"] not in matches
    # Where every content word is there, it is ticked.
    night = post(alice, "/api/memories", {"content": "I hate being paged at night"}).json()
    again = post(alice, "/api/forget", {"topic": "being paged at night", "dry_run": True})
    ticked = [m["id"] for m in again.json()["matches"] if m["certain"]]
    assert ticked == [night["id"]]


def test_a_name_the_topic_does_not_tell_apart_is_never_ticked(alice):
    dana = [
        post(alice, "/api/memories", {"content": c}).json()["id"]
        for c in (
            "My ex-girlfriend Dana Kowalski moved to Lisbon",
            "Dana Kowalski's birthday is in March",
            "Dana Whitfield is my tech lead",
        )
    ]
    vague = post(alice, "/api/forget", {"topic": "forget dana", "dry_run": True}).json()
    assert vague["certain"] == 0 and {m["id"] for m in vague["matches"]} == set(dana)
    assert "which dana? dana kowalski, dana whitfield" in vague["matches"][0]["why"]
    # The topic's other words tell which Dana is meant.
    ex = post(alice, "/api/forget", {"topic": "my ex-girlfriend Dana", "dry_run": True}).json()
    assert {m["id"] for m in ex["matches"] if m["certain"]} == set(dana[:2])


def test_the_forget_page_ticks_the_certain_matches_only(owner, owner_client, remember):
    sure = remember(owner, "Acme Corp's VPN requires the Cisco AnyConnect client")
    maybe = remember(owner, "I started a new job at Initech")
    page = owner_client.get("/memory/forget/", {"topic": "my old job at Acme Corp"})
    html = page.content.decode()
    assert f'value="{sure.pk}" checked' in html
    assert f'value="{maybe.pk}" checked' not in html and f'value="{maybe.pk}"' in html


def test_the_forget_tool_marks_what_may_not_be_meant(owner, remember):
    from memoryhub.engine.toolkit import tool_get
    from teams.services import Actor

    remember(owner, "Acme Corp's VPN requires the Cisco AnyConnect client")
    remember(owner, "I started a new job at Initech")
    answer = tool_get(name="memory_forget").run(
        actor=Actor(user=owner), arguments={"topic": "my old job at Acme Corp"}
    )
    lines = answer.text.splitlines()
    assert lines[0].startswith("1 memories about this topic, 1 that may be")
    assert "(maybe) I started a new job" in answer.text
    assert [m["certain"] for m in answer.data["matches"]] == [True, False]


def test_with_embeddings_off_the_words_decide(alice):
    from memoryhub.engine.config import memory_config_get
    from memoryhub.engine.models import MemoryConfig

    memory_config_get()
    MemoryConfig.objects.filter(pk=1).update(embeddings_enabled=False)
    night = post(alice, "/api/memories", {"content": "I hate being paged at night"}).json()
    post(alice, "/api/memories", {"content": "Our status page is on Statuspage.io"})
    preview = post(alice, "/api/forget", {"topic": "being paged at night", "dry_run": True})
    assert [m["id"] for m in preview.json()["matches"] if m["certain"]] == [night["id"]]


# --- Decisions taken about a forgotten topic --------------------------------------------------


def decision(user, title: str, content: str, kind: str = "adr", **scope):
    from teams.services import Actor
    from wiki.services import wiki_page_create

    return wiki_page_create(
        actor=Actor(user=user), title=title, content=content, kind=kind, **scope
    ).page


def test_forgetting_a_topic_marks_the_decisions_about_it_abandoned_and_keeps_them(
    alice, owner, outsider, owner_client
):
    from teams.models import AuditEvent
    from wiki.models import Page

    post(
        alice, "/api/memories", {"content": "Acme Corp's VPN requires the Cisco AnyConnect client"}
    )
    about = decision(
        owner, "ADR 7: Use Acme Corp's VPN for the build farm", "We tunnel through it."
    )
    other = decision(owner, "ADR 8: Postgres for the ledger", "Postgres has the locks we need.")
    note = decision(owner, "Acme Corp onboarding", "Badges at the desk.", kind="note")
    theirs = decision(outsider, "ADR 1: Acme Corp mirrors", "Mirror Acme Corp packages.")

    preview = post(alice, "/api/forget", {"topic": "Acme Corp", "dry_run": True}).json()
    assert [d["id"] for d in preview["decisions"]] == [about.pk]
    assert Page.objects.get(pk=about.pk).status == "active"  # a preview changes nothing

    receipt = post(alice, "/api/forget", {"topic": "Acme Corp"}).json()

    assert receipt["decisions_abandoned"] == [about.pk]
    assert receipt["removed"]["decisions_abandoned"] == 1
    statuses = dict(Page.objects.values_list("pk", "status"))
    assert statuses == {
        about.pk: "abandoned",
        other.pk: "active",
        note.pk: "active",
        theirs.pk: "active",
    }
    event = AuditEvent.objects.get(pk=receipt["receipt_id"])
    assert event.details["decisions_abandoned"] == [about.pk]
    assert "Acme" not in str(event.details)
    page = alice.get(f"/api/wiki/{about.slug}").json()
    assert page["status"] == "abandoned" and page["content"] == "We tunnel through it."
    assert ">abandoned</span>" in owner_client.get(f"/wiki/{about.pk}/").content.decode()


def test_tiered_recall_says_a_decision_is_abandoned(alice, owner):
    decision(owner, "ADR 3: Acme Corp single sign-on", "Sign in through Acme Corp's portal.")
    decision(owner, "ADR 4: Weekly releases", "Release every Tuesday.")
    post(alice, "/api/forget", {"topic": "Acme Corp"})

    hits = post(alice, "/api/recall/tiered", {"tier": "org", "include": ["adr"]}).json()["items"]

    status = {hit["path"].rsplit("/", 1)[1]: hit["status"] for hit in hits}
    assert status == {
        "adr-3-acme-corp-single-sign-on": "abandoned",
        "adr-4-weekly-releases": "active",
    }


# --- Who is who, dates and owners -------------------------------------------------------------


def remembered(client, *contents: str) -> list[int]:
    ids = []
    for content in contents:
        answer = post(client, "/api/memories", {"content": content})
        assert answer.status_code == 201, answer.content
        ids.append(answer.json()["id"])
    return ids


def preview_of(client, topic: str) -> dict[int, dict]:
    answer = post(client, "/api/forget", {"topic": topic, "dry_run": True})
    assert answer.status_code == 200, answer.content
    return {m["id"]: m for m in answer.json()["matches"]}


def test_a_role_the_user_gives_one_name_stands_for_it(alice):
    named, called, vet = remembered(
        alice,
        "Our dog Biscuit is a four-year-old beagle",
        "The dog is terrified of fireworks on New Year's Eve",
        "Biscuit's vaccinations are due in September",
    )
    by_name = preview_of(alice, "forget biscuit")
    assert all(by_name[i]["certain"] for i in (named, called, vet))
    assert "calls it dog" in by_name[called]["why"]
    by_role = preview_of(alice, "forget about my dog")
    assert all(by_role[i]["certain"] for i in (named, called, vet))


def test_an_ex_role_is_also_said_short(alice):
    ex, vinyl = remembered(
        alice,
        "My ex-girlfriend Dana Kowalski moved to Lisbon after we split",
        "My ex still has my vinyl collection",
    )
    preview = preview_of(alice, "forget everything about my ex")
    assert preview[ex]["certain"] and preview[vinyl]["certain"]


def test_a_role_given_to_two_people_stands_for_neither(alice):
    joris, priya, report = remembered(
        alice,
        "My manager is Joris Vermeulen",
        "Priya Raman was my manager at my previous company",
        "My manager wants the quarterly report by Friday",
    )
    preview = preview_of(alice, "forget everything about Joris")
    assert preview[joris]["certain"]
    assert priya not in preview or not preview[priya]["certain"]
    assert report not in preview or not preview[report]["certain"]


def test_a_word_of_a_name_that_names_no_one_else_stands_for_it(alice):
    lead, live, notes = remembered(
        alice,
        "I lead Project Harbor, the rewrite of our billing service in Go",
        "Harbor has to be live before the Black Friday code freeze",
        "I keep a one-page summary of every project I'm on in Notion",
    )
    preview = preview_of(alice, "forget project harbor")
    assert preview[lead]["certain"] and preview[live]["certain"]
    assert "names project harbor" in preview[live]["why"]
    # "project" is a common word: the summary of every project is no Harbor fact.
    assert notes not in preview or not preview[notes]["certain"]


def test_a_name_that_only_dates_something_else_is_shown_not_ticked(alice):
    worked, before = remembered(
        alice,
        "I worked at Acme Corp as a senior engineer for six years",
        "Before Acme Corp I did a six-month internship at Globex",
    )
    preview = preview_of(alice, "forget acme corp")
    assert preview[worked]["certain"]
    assert not preview[before]["certain"]
    assert "only to date something else" in preview[before]["why"]


def test_my_parents_are_not_someone_elses(alice):
    mine, hers = remembered(
        alice,
        "My parents live in Amersfoort",
        "Maya's parents live in Deventer",
    )
    preview = preview_of(alice, "forget about my parents")
    assert preview[mine]["certain"]
    assert not preview[hers]["certain"]
    assert "as someone else's" in preview[hers]["why"]
    # "my health information" asks for a kind of thing, not for the user's health of
    # anything: "my health insurance" is not ticked by its "my health".
    insurance = remembered(alice, "My health insurance is with Zilveren Kruis")[0]
    health = preview_of(alice, "forget all my health information")
    assert insurance not in health or not health[insurance]["certain"]


def test_a_fact_holding_some_of_the_topics_words_is_ticked_when_close_in_meaning(alice):
    kitchen, tap, coriander = remembered(
        alice,
        "We're redoing the kitchen in spring; the contractor is Bouwbedrijf Smit",
        "The kitchen tap drips again",
        "I can't stand coriander",
    )
    preview = preview_of(alice, "forget the kitchen renovation")
    assert preview[kitchen]["certain"]
    assert "holds the words kitchen" in preview[kitchen]["why"]
    # It shares the word, not the meaning: shown for review, not ticked.
    assert not preview[tap]["certain"]
    assert coriander not in preview or not preview[coriander]["certain"]


def test_a_name_the_topic_does_not_tell_apart_shows_the_facts_of_each_ones_roles(alice):
    ex, lead, vinyl = remembered(
        alice,
        "My ex-girlfriend Dana Kowalski moved to Lisbon",
        "Dana Whitfield is my tech lead",
        "My ex still has my vinyl collection",
    )
    preview = preview_of(alice, "forget dana")
    assert not any(m["certain"] for m in preview.values())
    assert {ex, lead, vinyl} <= set(preview)
    assert "calls it ex" in preview[vinyl]["why"]
    assert "which dana? dana kowalski, dana whitfield" in preview[vinyl]["why"]


def test_a_first_name_others_share_is_shown_not_ticked(alice):
    ex, lead, ramen = remembered(
        alice,
        "My ex-girlfriend Dana Kowalski moved to Lisbon",
        "Dana Whitfield is my tech lead",
        "Dana recommended the ramen place on the Voorstraat",
    )
    preview = preview_of(alice, "forget everything about my ex")
    assert preview[ex]["certain"]
    assert lead not in preview or not preview[lead]["certain"]
    assert not preview[ramen]["certain"]
    assert "names dana: dana kowalski or another?" in preview[ramen]["why"]


def test_a_name_the_topics_facts_give_and_few_others_do_is_shown_not_ticked(alice):
    sister, husband, surgery, *partner = remembered(
        alice,
        "My sister Lena lives in Porto with her partner Maya",
        "Lena's husband Rui is a sommelier",
        "Rui is having knee surgery in May after a padel injury",
        "Maya is a paediatric nurse",
        "Maya eats vegan on weekdays",
        "Maya's birthday is 14 May",
        "Maya hates it when my phone goes off at night",
    )
    preview = preview_of(alice, "forget what you know about my sister Lena")
    assert preview[sister]["certain"] and preview[husband]["certain"]
    assert not preview[surgery]["certain"]
    assert "names rui, as facts about the topic do" in preview[surgery]["why"]
    # Many facts name Maya: she is a subject of her own, not part of Lena's.
    assert not any(
        "names maya" in why for i in partner for why in preview.get(i, {}).get("why", [])
    )


def test_another_form_of_a_topics_word_counts_and_a_shorter_lookalike_does_not(alice):
    penicillin, paged = remembered(
        alice,
        "I'm allergic to penicillin; it gives me hives",
        "I get paged at night about once a week",
    )
    allergies = preview_of(alice, "forget my allergies")
    assert allergies[penicillin]["certain"]
    assert "holds the words allergies" in allergies[penicillin]["why"]
    # "pager" and "paged" share four letters: too few to tell a form from another word.
    pager = preview_of(alice, "forget my old pager")
    assert paged not in pager or "holds the words pager" not in pager[paged]["why"]


def test_a_fact_filed_under_the_topics_word_is_ticked(alice):
    vitamin = post(
        alice,
        "/api/memories",
        {"content": "I take vitamin D from October to March", "tags": ["health"]},
    ).json()["id"]
    joined = post(
        alice,
        "/api/memories",
        {"content": "I joined Northwind Labs in March 2023", "tags": ["work"]},
    ).json()["id"]
    health = preview_of(alice, "forget all my health information")[vitamin]
    assert health["certain"] and "filed under health" in health["why"]
    # "where I work" says what the user does: a tag is a subject, not a verb.
    work = preview_of(alice, "forget where I work")
    assert not work[joined]["certain"]
    assert "holds the words work" in work[joined]["why"]


def test_a_fact_where_the_user_does_what_the_topic_says_is_ticked_in_its_tense(alice):
    house, now, before = remembered(
        alice,
        "We live in a 1930s terraced house in the Lombok neighbourhood of Utrecht",
        "I work at Initech on the billing team",
        "I worked at Acme Corp as a senior engineer from 2017 until early 2023",
    )
    assert preview_of(alice, "forget where I live")[house]["certain"]
    work = preview_of(alice, "forget where I work")
    assert work[now]["certain"]
    # The user worked there once: shown, not ticked, for "where I work".
    assert not work[before]["certain"]


def test_what_the_user_does_to_something_else_is_not_what_the_topic_says():
    from memoryhub.engine.search.topic import topic_match, topic_read

    live = topic_read("forget where I live")
    assert topic_match(live, "We live in Utrecht").owned
    chess = topic_read("forget that I play chess")
    assert not topic_match(chess, "I play football on Sundays; chess bores me").owned


def test_facts_filed_under_a_tag_of_a_certain_match_are_shown_not_ticked(alice):
    paged = post(
        alice,
        "/api/memories",
        {"content": "When I'm on call I get paged at night", "tags": ["on-call"]},
    ).json()["id"]
    rotation, handover = remembered(
        alice, "Our on-call rotation is one week in five", "Handover is on Wednesdays at noon"
    )
    preview = preview_of(alice, "forget that I get paged at night")
    assert preview[paged]["certain"]
    assert not preview[rotation]["certain"]
    assert "filed under on-call, as facts about the topic are" in preview[rotation]["why"]
    assert handover not in preview or not preview[handover]["certain"]
