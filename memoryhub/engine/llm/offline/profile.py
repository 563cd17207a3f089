"""The user's profile from what facts say about the user.

A fact counts when it is said of the user ("I prefer ...", "The user uses ...", "My
editor is ...") or is a preference, trait or habit (by its category) about no other
named thing. What it says is put in the third person and sorted: role first, then
preferences, personality, habits, tools and the rest; like statements are joined
("Prefers minimal UIs and structured logging"). Facts about services, people or
anything else the user is not the subject of are left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..schemas import CONTENT_LENGTH, SourceText
from .statements import USER, statement
from .text import clip

NOTHING_KNOWN = "Nothing is known about the user yet."

# Categories that are about the user when they name nothing else.
_ABOUT_USER = frozenset(("preference", "personality", "pattern"))
_KINDS = ("role", "preference", "personality", "pattern", "tool", "other")
_ROLE = re.compile(
    r"^(?:a|an|the)\s|^(?:works?|worked)\s+(?:as|at|for|on|in)\b|^(?:leads|manages|"
    r"founded|owns|runs|maintains)\b|^(?:job|role|title)\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"^(?:prefers|likes|loves|enjoys|hates|dislikes|avoids|wants|favou?rs|"
    r"(?:does not|doesn't|never) (?:like|want|use)|can't stand|is a fan)\b|^favou?rite\b",
    re.IGNORECASE,
)
_PATTERN = re.compile(
    r"\b(?:usually|always|often|regularly|typically|tends to|every|each (?:morning|day|"
    r"evening|week|month)|habitually|rarely|never)\b",
    re.IGNORECASE,
)
_TOOL = re.compile(
    r"^(?:uses|builds|deploys|writes|codes|develops|programs|ships|edits|runs|works with|"
    r"relies on|hosts|tests|debugs)\b|\b(?:editor|shell|terminal|laptop|ide|os|stack|"
    r"language|theme|keyboard)\b",
    re.IGNORECASE,
)
# Verbs whose statements are joined: "prefers A", "prefers B" -> "prefers A and B".
_JOINED = frozenset("prefers likes loves enjoys uses dislikes hates avoids".split())


def describe_user(sources: Sequence[SourceText], *, max_characters: int = CONTENT_LENGTH) -> str:
    """The profile of the user the facts ``sources`` describe, in at most
    ``max_characters``; ``NOTHING_KNOWN`` when none says anything about the user."""
    kinds: dict[str, list[str]] = {kind: [] for kind in _KINDS}
    seen: set[str] = set()
    for source in sources:
        if not source.text.strip():
            continue
        said = statement(source.text)
        if said.key == USER or (
            said.key == "" and source.category in ("preference", "personality", "pattern")
        ):
            phrase = said.said
        else:
            continue
        phrase = " ".join(phrase.split()).rstrip(" .;")
        if not phrase or phrase.casefold() in seen:
            continue
        seen.add(phrase.casefold())
        kinds[_kind(phrase, source.category)].append(phrase)
    sentences = [_sentence(_joined(kinds[kind])) for kind in _KINDS if kinds[kind]]
    if not sentences:
        return NOTHING_KNOWN
    text = ""
    for sentence in sentences:
        if len(text) + 1 + len(sentence) > max_characters:
            sentence = _fitting(sentence, max_characters - len(text) - 1)
            if not sentence:
                break
        text = f"{text} {sentence}" if text else sentence
    return text or clip(sentences[0], max_characters)


def _kind(phrase: str, category: str) -> str:
    if _ROLE.search(phrase):
        return "role"
    if _PREFERENCE.search(phrase) or category == "preference":
        return "preference"
    if category == "personality":
        return "personality"
    if _PATTERN.search(phrase) or category == "pattern":
        return "pattern"
    if _TOOL.search(phrase):
        return "tool"
    return "other"


def _joined(phrases: list[str]) -> list[str]:
    """Statements of one verb joined, where the first of them stood."""
    objects: dict[str, list[str]] = {}
    order: list[str] = []
    for phrase in phrases:
        verb, _, rest = phrase.partition(" ")
        if verb.lower() in _JOINED and rest and ";" not in rest:
            if verb.lower() not in objects:
                order.append(verb.lower())
                objects[verb.lower()] = []
            objects[verb.lower()].append(rest)
        else:
            order.append(phrase)
    joined = []
    for item in order:
        if item in objects:
            rest = objects[item]
            listed = rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + " and " + rest[-1]
            joined.append(f"{item} {listed}")
        else:
            joined.append(item)
    return joined


def _sentence(phrases: list[str]) -> str:
    text = "; ".join(phrases)
    return text[:1].upper() + text[1:] + "."


def _fitting(sentence: str, room: int) -> str:
    """As many of the sentence's statements as fit in ``room``."""
    kept = ""
    for part in sentence.rstrip(".").split("; "):
        candidate = f"{kept}; {part}" if kept else part
        if len(candidate) + 1 > room:
            break
        kept = candidate
    return kept + "." if kept else ""
