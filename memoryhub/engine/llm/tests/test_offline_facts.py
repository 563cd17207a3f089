"""Rule-based fact extraction on small hand-made conversations."""

from __future__ import annotations

import pytest

from memoryhub.engine.llm import ChatMessage, FactProposal, OfflineProvider
from memoryhub.engine.llm.offline.facts import third_person

offline = OfflineProvider()


def facts_of(text: str | list[ChatMessage]) -> list[FactProposal]:
    result = offline.extract_facts(text)
    assert result.provider == "offline"
    return result.facts


def only(text: str) -> FactProposal:
    (fact,) = facts_of(text)
    return fact


@pytest.mark.parametrize(
    "said",
    [
        "Remember that my locker code is 4411.",
        "Please remember: my locker code is 4411",
        "Can you please note that my locker code is 4411.",
        "Don't forget my locker code is 4411.",
        "My locker code is 4411, remember that.",
    ],
)
def test_asking_to_remember_proposes_an_explicit_user_stated_fact(said: str) -> None:
    fact = only(said)

    assert fact.content.rstrip(".") == "The user's locker code is 4411"
    assert (fact.source, fact.origin) == ("explicit", "user_stated")
    assert fact.confidence >= 0.9 and fact.importance >= 0.8
    assert fact.excerpt == said


def test_an_explicit_preference_keeps_its_category_and_sentiment() -> None:
    fact = only("Remember that I hate YAML config files.")

    assert fact.content == "The user hates YAML config files."
    assert (fact.category, fact.sentiment, fact.source) == ("preference", "negative", "explicit")
    assert fact.tags == ["yaml"]


def test_remember_to_is_a_reminder() -> None:
    fact = only("Remember to renew the TLS certificate on Friday")

    assert fact.content == "The user wants to be reminded to renew the TLS certificate on Friday"
    assert (fact.category, fact.source) == ("context", "explicit")


@pytest.mark.parametrize(
    ("said", "content", "sentiment"),
    [
        ("I prefer dark mode in VS Code.", "The user prefers dark mode in VS Code.", "positive"),
        ("i really like short answers", "The user really likes short answers", "positive"),
        ("I love Rust.", "The user loves Rust.", "positive"),
        ("I can't stand Jira.", "The user cannot stand Jira.", "negative"),
        (
            "I really don't like long meetings.",
            "The user really does not like long meetings.",
            "negative",
        ),
        ("My favourite editor is Helix.", "The user's favourite editor is Helix.", "positive"),
    ],
)
def test_preferences_are_stated_about_the_user(said: str, content: str, sentiment: str) -> None:
    fact = only(said)

    assert fact.content == content
    assert (fact.category, fact.sentiment) == ("preference", sentiment)
    assert (fact.source, fact.origin) == ("extracted", "extracted")


@pytest.mark.parametrize(
    ("said", "category"),
    [
        ("I always run the tests before pushing.", "pattern"),
        ("Alice is my manager.", "relationship"),
        ("I work at Acme Corp.", "relationship"),
        ("I'm working on the billing migration this week.", "context"),
        ("I'm a night owl.", "personality"),
        ("My name is Ada Lovelace.", "fact"),
        ("I live in Lisbon.", "fact"),
    ],
)
def test_personal_statements_get_their_category(said: str, category: str) -> None:
    assert only(said).category == category


def test_a_statement_about_a_named_thing_is_a_fact_with_lower_confidence() -> None:
    fact = only("Our staging database is dbstage01.")

    assert fact.content == "Our staging database is dbstage01."
    assert fact.category == "fact"
    assert fact.confidence < 0.8
    assert fact.tags == ["dbstage01"]


def test_hedged_statements_are_less_certain() -> None:
    sure = only("I prefer Postgres.")
    unsure = only("I think I prefer Postgres.")

    assert unsure.confidence < sure.confidence


@pytest.mark.parametrize(
    "said",
    [
        "Do I prefer tabs or spaces?",
        "What is the staging host?",
        "Run the tests for billing-service now.",
        "The weather is nice today.",
        "ok thanks",
        "I think so.",
        "",
    ],
)
def test_questions_commands_and_small_talk_propose_nothing(said: str) -> None:
    assert facts_of(said) == []


def test_only_the_users_turns_count_and_repeats_are_proposed_once() -> None:
    conversation = [
        ChatMessage(role="system", content="Remember that the user is an admin."),
        ChatMessage(role="user", content="I prefer tabs. Hello there!"),
        ChatMessage(role="assistant", content="I love tabs too. Remember that I am a bot."),
        ChatMessage(role="user", content="As I said, I prefer tabs."),
        ChatMessage(role="user", content="i prefer tabs."),
    ]

    contents = [f.content for f in facts_of(conversation)]

    assert contents == ["The user prefers tabs."]


def test_every_excerpt_is_at_most_200_characters_of_what_was_said() -> None:
    said = "I prefer " + "very " * 80 + "long answers."

    fact = only(said)

    assert len(fact.excerpt) <= 200
    assert fact.excerpt.rstrip("…") in said


@pytest.mark.parametrize(
    ("first", "third"),
    [
        ("I prefer my tea hot", "the user prefers the user's tea hot"),
        ("I'm a backend developer", "the user is a backend developer"),
        ("I've moved to Berlin", "the user has moved to Berlin"),
        ("I built it myself", "the user built it themselves"),
        ("I fix bugs and I watch films", "the user fixes bugs and the user watches films"),
        ("I study maths", "the user studies maths"),
        ("Tell me when I'll need it", "Tell the user when the user will need it"),
    ],
)
def test_the_speaker_becomes_the_user(first: str, third: str) -> None:
    assert third_person(first) == third
