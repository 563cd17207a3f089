"""The ranking stages of recall, each on a small hand-made memory: session neighbours,
the speaker a question names, questions about time, normalised fusion and soft AND."""

from datetime import UTC, datetime, timedelta

import pytest

from facts.ranking import Candidate, RecallTuning, min_max, rank, without_names
from facts.recall import fact_recall
from facts.search import FACT_FTS
from facts.services.create import fact_bulk_create
from facts.services.forgetting import facts_forget
from facts.services.update import fact_update
from facts.sessions import neighbours_in_sessions
from memoryhub.engine.errors import InvalidInput
from teams.services import Actor

pytestmark = pytest.mark.django_db(transaction=True)

SESSION_START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def chat(user, session: str, turns: list[tuple[str, str]], **extra):
    """Write a conversation's turns (speaker, text) as one session, a minute apart."""
    items = [
        {
            "content": text,
            "speaker": speaker,
            "session_id": session,
            "occurred_at": SESSION_START + timedelta(minutes=i),
            **extra,
        }
        for i, (speaker, text) in enumerate(turns)
    ]
    return [r.fact for r in fact_bulk_create(actor=Actor(user=user), items=items)]


def recalled(user, query: str, **kwargs) -> list[str]:
    result = fact_recall(actor=Actor(user=user), query=query, touch=False, **kwargs)
    return [item.content for item in result.items]


def entry(fact) -> tuple[str, ...]:
    return FACT_FTS.content_of(fact.pk)


# --- Session neighbours -----------------------------------------------------------------------


def test_the_answer_after_a_question_is_found_by_the_question_s_words(owner):
    facts = chat(
        owner,
        "evening",
        [
            ("Bob", "What did you name the puppy you adopted?"),
            ("Alice", "We called him Biscuit, after my grandmother's cookies."),
            ("Bob", "Lovely. Are you still training for the marathon in October?"),
        ],
    )
    chat(owner, "other", [("Bob", "The printer on the second floor jams on every job.")])
    # The answer shares no word with the question asked of it later, but its entry holds
    # its neighbours' words.
    assert "puppy" in entry(facts[1])[2] and "marathon" in entry(facts[1])[2]
    assert entry(facts[0])[2].startswith("We called him Biscuit")
    top = recalled(owner, "What is the puppy called?", max_items=2)
    assert "We called him Biscuit, after my grandmother's cookies." in top


def test_session_order_follows_when_things_happened_not_when_written(owner):
    late, early = fact_bulk_create(
        actor=Actor(user=owner),
        items=[
            {
                "content": "Then we drove to Porto",
                "session_id": "trip",
                "occurred_at": "2023-06-02T10:00:00Z",
            },
            {
                "content": "First we flew to Lisbon",
                "session_id": "trip",
                "occurred_at": "2023-06-01T10:00:00Z",
            },
        ],
    )
    middle = fact_bulk_create(
        actor=Actor(user=owner),
        items=[
            {
                "content": "We stayed two nights in Coimbra",
                "session_id": "trip",
                "occurred_at": "2023-06-01T18:00:00",
            }
        ],
    )[0]
    assert entry(early.fact)[2] == "We stayed two nights in Coimbra"
    assert entry(middle.fact)[2] == "First we flew to Lisbon Then we drove to Porto"
    assert entry(late.fact)[2] == "We stayed two nights in Coimbra"


def test_a_neighbour_s_words_never_reach_an_entry_others_can_read(owner, outsider):
    turns = [
        ("The staging database moved to a new host this morning", "global"),
        ("The admin password is hunter2", "private"),
        ("Backups of staging run every night at two", "global"),
    ]
    shared, secret, after = (
        r.fact
        for r in fact_bulk_create(
            actor=Actor(user=owner),
            items=[
                {
                    "content": text,
                    "session_id": "ops",
                    "visibility": visibility,
                    "occurred_at": SESSION_START + timedelta(minutes=i),
                }
                for i, (text, visibility) in enumerate(turns)
            ],
        )
    )
    assert "hunter2" not in entry(shared)[2] and "hunter2" not in entry(after)[2]
    assert entry(shared)[2] == "Backups of staging run every night at two"
    assert entry(secret)[2] == ""
    assert recalled(outsider, "admin password hunter2") == []
    # Made private, a fact leaves the entries of its former neighbours.
    fact_update(actor=Actor(user=owner), fact=shared, changes={"visibility": "private"})
    assert entry(after)[2] == ""
    assert entry(secret)[2] == "The staging database moved to a new host this morning"
    assert recalled(outsider, "staging database host") == [after.content]


def test_forgetting_a_fact_takes_its_words_out_of_its_neighbours_entries(owner):
    before, gone, after = chat(
        owner,
        "call",
        [
            ("Alice", "My doctor changed my prescription"),
            ("Alice", "I take sertraline every morning now"),
            ("Alice", "Anyway, the weather is lovely"),
        ],
    )
    assert "sertraline" in entry(before)[2]
    facts_forget(actor=Actor(user=owner), fact_ids=[gone.pk])
    assert "sertraline" not in entry(before)[2] and "sertraline" not in entry(after)[2]
    # The two left are neighbours now.
    assert entry(before)[2] == "Anyway, the weather is lovely"


def test_a_fact_deleted_from_the_middle_joins_its_neighbours(owner, owner_client):
    first, middle, last = chat(
        owner, "s", [("A", "Alpha line one"), ("B", "Bravo line two"), ("A", "Charlie line three")]
    )
    assert owner_client.delete(f"/api/memories/{middle.pk}").status_code == 204
    assert entry(first)[2] == "Charlie line three" and entry(last)[2] == "Alpha line one"


def test_the_neighbours_of_any_number_of_facts_are_read_at_once(owner):
    turns = chat(
        owner, "long", [("A" if i % 2 else "B", f"Turn number {i} of the day") for i in range(140)]
    )
    other = chat(owner, "short", [("A", "Only line of its session")])[0]
    ids = [f.pk for f in turns]
    expected = {
        pk: (ids[i - 1] if i else None, ids[i + 1] if i + 1 < len(ids) else None)
        for i, pk in enumerate(ids)
    }
    # One, a few (padded to the statement sizes), all, a lone fact (none).
    for wanted in ([ids[5]], ids[:20], ids, [other.pk, *ids[70:]]):
        found = neighbours_in_sessions(wanted)
        assert found == {pk: expected[pk] for pk in wanted if pk in expected}
    assert len(neighbours_in_sessions(ids)) == 140


def test_facts_of_two_speakers_saying_the_same_never_merge(owner):
    a, b = chat(owner, "s", [("Caroline", "Sounds great!"), ("Melanie", "Sounds great!")])
    assert a.pk != b.pk
    again = chat(owner, "s2", [("Caroline", "Sounds great!")])[0]
    assert again.pk == a.pk  # the same speaker repeating herself merges, as before


# --- Priors -----------------------------------------------------------------------------------


def test_the_speaker_a_question_names_pulls_what_they_said(owner):
    chat(
        owner,
        "s",
        [
            ("Caroline", "I have been painting landscapes on weekends"),
            ("Melanie", "I have been painting portraits on weekends"),
        ],
    )
    assert recalled(owner, "What has Melanie been painting?")[0].endswith("portraits on weekends")
    assert recalled(owner, "What has Caroline been painting?")[0].endswith("landscapes on weekends")


def test_vector_scores_leave_out_the_name_of_the_speaker_asked_about(owner):
    chat(
        owner,
        "s",
        [
            ("Caroline", "I signed up for a ceramics workshop downtown"),
            ("Caroline", "The weather was lovely this morning"),
            ("Melanie", "I took an evening class in pottery last spring"),
        ],
    )

    def similarity(**tuning) -> dict[str, float]:
        result = fact_recall(
            actor=Actor(user=owner),
            query="What class did Caroline sign up for?",
            touch=False,
            tuning=RecallTuning(**tuning),
        )
        return {item.content.split()[1]: item.similarity for item in result.items}

    # A statement is embedded with who said it, so her name in the question makes every
    # line of hers look alike, whatever it says.
    named = similarity(query_without_speakers=0)
    assert named["weather"] > named["took"]
    bare = similarity()
    assert min(bare["signed"], bare["took"]) > bare["weather"]


def test_the_nearest_vectors_are_searched_without_the_name_of_the_speaker_asked_about(owner):
    chat(owner, "monday", [("Caroline", "The weather was lovely this morning")])
    chat(owner, "tuesday", [("Melanie", "I took an evening class in pottery last spring")])

    def nearest(**tuning) -> list[str]:
        # The vector search alone, asked for its one best fact.
        return recalled(
            owner,
            "What class did Caroline sign up for?",
            tuning=RecallTuning(fts_candidates=0, vector_candidates=1, **tuning),
        )

    assert nearest(query_without_speakers=0) == ["The weather was lovely this morning"]
    assert nearest() == ["I took an evening class in pottery last spring"]


def test_a_question_less_the_speakers_it_names():
    assert without_names("What is Caroline's identity?", ["Caroline"]) == "What is identity?"
    assert without_names("What did Jon tell Gina Lee?", ["Jon", "Gina Lee"]) == "What did tell ?"
    assert without_names("caroline\u2019s plans for Paris", ["Caroline"]) == "plans for Paris"
    # Nothing but the name to go by: the question stays as asked.
    assert without_names("Who is Caroline?", ["Caroline"]) == "Who is Caroline?"
    assert without_names("Where is Carol?", ["Caroline", "Al"]) == "Where is Carol?"


def candidate(i: int, text: str, **values) -> Candidate:
    return Candidate(id=i, content=text, bm25=1.0, similarity=0.5, **values)


def order(candidates, query: str, **tuning) -> list[int]:
    ranked = rank(candidates, query=query, tuning=RecallTuning(**tuning))
    return [c.id for c in ranked]


def test_a_question_about_time_prefers_facts_that_carry_a_time():
    facts = [
        candidate(2, "We moved the office to the river side"),
        candidate(1, "We moved the office last May"),
    ]
    assert order(facts, "When did we move the office?") == [1, 2]
    assert order(facts, "Where did we move the office?") == [2, 1]  # no time asked: a tie
    assert order(facts, "When did we move the office?", weight_time=0) == [2, 1]


def test_a_month_the_question_names_prefers_facts_that_happened_then():
    march = datetime(2023, 3, 14, tzinfo=UTC)
    facts = [
        candidate(2, "The team shipped the billing page", occurred_at=march + timedelta(90)),
        candidate(1, "The team shipped the search page", occurred_at=march),
    ]
    assert order(facts, "What did the team ship in March 2023?") == [1, 2]
    assert order(facts, "What did the team ship in March 2023?", weight_date=0) == [2, 1]


def test_a_session_that_holds_every_word_of_the_question_pulls_its_facts():
    together, apart = ("u", "commute"), ("u", "holiday")
    facts = [
        candidate(1, "Tim finished a novel", session=together),
        candidate(2, "Reading on the train every day", session=together),
        candidate(3, "Tim took a novel to the beach", session=apart),
        candidate(4, "The beach was warm", session=apart),
    ]
    query = "What novel does Tim read on the train?"
    ranked = order(facts, query)
    assert ranked.index(1) < ranked.index(3)  # each holds "Tim" and "novel"
    off = order(facts, query, weight_session_coverage=0)
    assert off.index(3) < off.index(1)  # a tie, newest first


def test_short_acknowledgements_rank_below_statements():
    facts = [
        candidate(2, "Ok, thanks!"),
        candidate(1, "Thanks, the deploy key now lives in the vault under ops"),
    ]
    assert order(facts, "thanks") == [1, 2]
    assert order(facts, "thanks", weight_informative=0, weight_coverage=0) == [2, 1]


def test_a_fact_next_to_a_strong_hit_takes_a_share_of_its_score():
    facts = [
        Candidate(id=1, content="Which city?", bm25=5.0, similarity=0.9, neighbours=(None, 2)),
        Candidate(id=2, content="Lisbon, since June", bm25=1.0, similarity=0.2, neighbours=(1, 3)),
        Candidate(id=3, content="Nice weather", bm25=1.0, similarity=0.2, neighbours=(2, None)),
    ]
    ranked = {c.id: c for c in rank(facts, query="which city", tuning=RecallTuning())}
    assert ranked[2].parts["neighbour"] > ranked[3].parts.get("neighbour", 0)
    assert ranked[2].score > ranked[3].score


def test_the_turn_after_a_question_that_hits_outranks_the_turn_before_it():
    # Both 1 and 3 sit next to the question that matches; only 3 answers it.
    facts = [
        Candidate(
            id=1,
            content="I spent the weekend repainting the fence",
            bm25=1.5,
            similarity=0.5,
            neighbours=(None, 2),
        ),
        Candidate(
            id=2, content="Which city did you move to?", bm25=5.0, similarity=0.9, neighbours=(1, 3)
        ),
        candidate(3, "Lisbon, in the old town by the river", neighbours=(2, None)),
    ]
    ranked = {c.id: c for c in rank(facts, query="which city", tuning=RecallTuning())}
    assert ranked[3].parts["answer"] > 0 and "answer" not in ranked[1].parts
    assert ranked[3].score > ranked[1].score
    assert order(facts, "which city", answer_share=0)[1:] == [1, 3]
    # Its caption aside, a turn that ends by asking is a question.
    facts[1].content = "Which city did you move to? [shares a photo: a map]"
    assert order(facts, "which city")[1:] == [3, 1]


def test_a_turn_that_asks_ranks_below_one_that_tells():
    facts = [candidate(2, "Where does the deploy key live?"), candidate(1, "The deploy key lives")]
    plain = {"weight_coverage": 0, "weight_informative": 0}
    assert order(facts, "deploy key", **plain) == [1, 2]
    assert order(facts, "deploy key", **plain, weight_question=0) == [2, 1]


# --- Fusion and soft AND ----------------------------------------------------------------------


def test_min_max_fusion_keeps_each_retriever_s_confidence():
    # By ranks the two are a tie (first in one list, second in the other); by scores
    # the first leads bm25 by far and trails the vectors by a hair.
    facts = [
        Candidate(id=1, content="x", bm25=10.0, similarity=0.50),
        Candidate(id=2, content="y", bm25=2.0, similarity=0.51),
        Candidate(id=3, content="z", bm25=1.0, similarity=0.10),
    ]
    ranked = rank(facts, query="q", tuning=RecallTuning(weight_coverage=0, weight_informative=0))
    assert [c.id for c in ranked] == [1, 2, 3]
    assert ranked[0].score - ranked[1].score > 0.3
    assert min_max({1: 10.0, 2: 2.0}, [1, 2, 3]) == {1: 1.0, 2: 0.0, 3: 0.0}


def test_soft_and_puts_facts_with_more_of_the_query_s_words_first(owner, remember):
    remember(owner, "The red bicycle is in the garage")
    remember(owner, "The garage door code is 4711 and the garage light is broken")
    assert recalled(owner, "red bicycle garage")[0] == "The red bicycle is in the garage"
    facts = [candidate(2, "garage garage garage"), candidate(1, "red bicycle garage")]
    assert order(facts, "red bicycle garage") == [1, 2]
    assert order(facts, "red bicycle garage", weight_coverage=0, weight_informative=0) == [2, 1]


def test_rrf_fusion_stays_available(owner, remember):
    remember(owner, "Production runs on Kubernetes in Frankfurt")
    result = fact_recall(
        actor=Actor(user=owner),
        query="Kubernetes",
        touch=False,
        tuning=RecallTuning(fusion="rrf"),
    )
    assert result.items[0].signals["rrf"] > 0 and "bm25" not in result.items[0].signals


def test_tuning_overrides_are_checked():
    assert RecallTuning.clean({"weight_time": 0.2, "fusion": "rrf"}) == {
        "weight_time": 0.2,
        "fusion": "rrf",
    }
    for bad in (
        {"weight_time": -1},
        {"fusion": "zscore"},
        {"nope": 1},
        {"weight_time": True},
        {"fts_candidates": 1000},
        {"weight_time": float("nan")},
        [],
    ):
        with pytest.raises(InvalidInput):
            RecallTuning.clean(bad)
    # A stored setting that no longer exists is ignored.
    assert RecallTuning.from_settings({"gone": 3, "weight_time": 0.3}).weight_time == 0.3


def test_a_date_the_question_names_brings_what_happened_that_day(owner):
    answer = chat(owner, "shop", [("Gina", "One of the wholesalers said yes today!")])[0]
    fact_bulk_create(
        actor=Actor(user=owner),
        items=[
            {
                "content": f"Order {n} for the store shipped",
                "session_id": "orders",
                "occurred_at": SESSION_START + timedelta(days=30 + n),
            }
            for n in range(12)
        ],
    )

    def place(question: str) -> tuple[int | None, float]:
        """Where the answer comes, and its score (0 when it is not recalled)."""
        result = fact_recall(actor=Actor(user=owner), query=question, touch=False, max_items=20)
        ids = [item.id for item in result.items]
        if answer.pk not in ids:
            return None, 0.0
        return ids.index(answer.pk), result.items[ids.index(answer.pk)].score

    # No word of the answer is in the question; the day it happened is. (The order of
    # the near misses around it depends on how the engine ranks words: "Order 8" holds
    # the day's number, and its neighbours share its score. So the answer's own score
    # tells the day's pull.)
    (named, named_score), (other, other_score) = (
        place("What did the clothing store find on 8 May, 2023?"),
        place("What did the clothing store find on 9 May, 2023?"),
    )
    assert named is not None and named <= 2
    assert other is None or other >= named
    assert named_score > other_score * 1.25


def test_the_times_a_question_names():
    from facts.ranking import named_moments

    day = named_moments("What did Gina find on 1 February, 2023?")
    assert day.holds(datetime(2023, 2, 1, 18, tzinfo=UTC))
    assert not day.holds(datetime(2023, 2, 2, 1, tzinfo=UTC))
    assert named_moments("What happened in May 2023?").holds(datetime(2023, 5, 31, tzinfo=UTC))
    assert named_moments("February 3rd, 2021").holds(datetime(2021, 2, 3, 9, tzinfo=UTC))
    assert named_moments("the 2023-03-01 release").holds(datetime(2023, 3, 1, 9, tzinfo=UTC))
    assert not named_moments("What may Caroline do?")  # "may" the verb names no month
    for nonsense in (
        "31 February, 2023",
        "2023-13-45",
        "May 0000",
        "\ud800 9999-99-99",
        "31 December, 9999",
        "9999-12-31",
    ):
        assert not named_moments(nonsense).spans


def test_the_person_named_first_is_who_the_question_is_about():
    from facts.ranking import named_speakers

    assert named_speakers("What did Jon tell Gina about the studio?", {"Gina", "Jon", ""}) == {
        "Jon": 1.0,
        "Gina": 0.5,
    }
    assert named_speakers("What is the studio like?", {"Gina", "Jon"}) == {}


@pytest.mark.parametrize(
    "query",
    [
        "What happened on 31 December, 9999?",
        "in December 9999 and 0001-01-01",
        'Caroline" OR speaker:* NEAR(a b)',
        "\ud800 when did \udfff happen",
        "May " * 500,
    ],
)
def test_odd_questions_recall_without_failing(owner, query):
    chat(owner, "s", [("Caroline", "We met in December"), ("Mel", "It was a cold day")])
    fact_recall(actor=Actor(user=owner), query=query, touch=False)


def test_the_block_says_who_said_a_statement_and_when(owner):
    chat(owner, "s", [("Caroline", "I went to the support group yesterday")])
    result = fact_recall(actor=Actor(user=owner), query="support group", touch=False)
    assert result.block == (
        "## Recalled Facts\n- [fact] Caroline, 2023-05-08: I went to the support group yesterday"
    )


def test_neighbours_never_cross_fleets(owner):
    fleet_a = chat(owner, "s", [("Bot", "Fleet A rotates the signing key on Mondays")], fleet="a")
    fleet_b = chat(owner, "s", [("Bot", "Fleet B deploys on Fridays")], fleet="b")
    assert entry(fleet_a[0])[2] == "" and entry(fleet_b[0])[2] == ""


def test_team_facts_are_neighbours_within_one_team_only(owner, team):
    from django.contrib.auth.models import Group

    from teams.models import Membership, Role

    other = Group.objects.create(name="Research")
    Membership.objects.create(user=owner, team=other, role=Role.ADMIN)
    first, second = chat(
        owner,
        "standup",
        [("Alice", "Platform ships the gateway today"), ("Alice", "Platform reviews on Friday")],
        visibility="team",
        team=team.pk,
    )
    elsewhere = chat(
        owner,
        "standup",
        [("Alice", "Research keeps the lab notes private")],
        visibility="team",
        team=other.pk,
    )[0]
    assert entry(first)[2] == second.content and entry(second)[2] == first.content
    assert entry(elsewhere)[2] == ""
