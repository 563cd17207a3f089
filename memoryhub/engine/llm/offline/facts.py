"""Rule-based fact extraction: what a user asks to be remembered, states as a preference,
habit, relationship or circumstance, or states about a named thing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..schemas import CONTENT_LENGTH, Category, ChatMessage, FactProposal, FactSource, Sentiment
from .text import clip, entities, sentences, tags_of

_ADVERBS = (
    "really|also|always|usually|often|never|sometimes|generally|mostly|strongly|absolutely|"
    "just|still|now|only|much|actually|definitely|totally|normally|typically|rather|kind of"
)
_ADVERB_RUN = rf"(?:(?:{_ADVERBS})\s+)*"

_EXPLICIT = re.compile(
    r"^(?:(?:please|pls|and|also|oh|ok|okay|so|hey|btw)[\s,]+)*"
    r"(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
    r"(?P<verb>remember|note|keep in mind|don'?t forget|do not forget|never forget|"
    r"make a note|take note|memori[sz]e|save|store)"
    r"(?:\s+(?:this|the fact|of this|for (?:later|next time|the future)))?"
    r"(?:\s+(?:that|this))?\s*[:,\-\u2013]?\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
# "..., remember that." at the end of a sentence.
_EXPLICIT_AFTER = re.compile(
    r"^(?P<rest>.+?)[\s,;.!-]+(?:please\s+)?(?:remember|note|don'?t forget)\s+(?:that|this)"
    r"(?:\s+for (?:later|next time|the future))?\s*[.!]*$",
    re.IGNORECASE,
)
_REMINDER = re.compile(r"^to\s+(?P<what>\S.*)$", re.IGNORECASE)

_NEGATIVE_PREFERENCE = (
    r"hate|dislike|detest|loathe|can'?t stand|cannot stand|don'?t like|do not like|"
    r"don'?t want|do not want|avoid|don'?t use|do not use|never use"
)
_POSITIVE_PREFERENCE = r"prefer|like|love|enjoy|adore|favou?r"
_PREFERENCE = re.compile(
    rf"\bI\s+{_ADVERB_RUN}(?P<verb>{_NEGATIVE_PREFERENCE}|{_POSITIVE_PREFERENCE})\b"
    r"|\bmy\s+(?:all-time\s+)?favou?rite\b|\bis my\s+(?:all-time\s+)?favou?rite\b",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(rf"\b(?:{_NEGATIVE_PREFERENCE})\b", re.IGNORECASE)
_PATTERN = re.compile(
    r"\bI\s+(?:always|usually|typically|normally|tend to|never|often|regularly|"
    r"every (?:day|morning|evening|week|time))\b",
    re.IGNORECASE,
)
_PEOPLE = (
    "wife|husband|partner|boss|manager|colleague|coworker|co-worker|teammate|friend|sister|"
    "brother|son|daughter|mother|father|mom|mum|dad|team lead|tech lead|lead|mentor|"
    "cofounder|co-founder|girlfriend|boyfriend|fiancée?|kids?|children|cat|dog"
)
_RELATIONSHIP = re.compile(
    rf"\bmy\s+(?:{_PEOPLE})\b|\bI\s+(?:work|worked)\s+(?:at|for|with)\b|\bI\s+report\s+to\b"
    r"|\bI(?:'m| am)\s+(?:married|engaged)\b",
    re.IGNORECASE,
)
_PERSONALITY = re.compile(
    r"\bI(?:'m| am)\s+(?:a\s+|an\s+)?(?:very\s+|quite\s+|pretty\s+|really\s+|rather\s+)?"
    r"(?:introvert(?:ed)?|extrovert(?:ed)?|shy|impatient|patient|detail-oriented|perfectionist|"
    r"morning person|night owl|visual learner|direct|curious|pragmatic|cautious|optimist|"
    r"pessimist)\b|\bI tend to be\b",
    re.IGNORECASE,
)
_CONTEXT = re.compile(
    r"\bI(?:'m| am)\s+(?:currently\s+|now\s+|still\s+)?(?:working on|building|writing|"
    r"migrating|learning|preparing|planning|moving|studying|travell?ing|on vacation|on leave)\b"
    r"|\bI\s+(?:currently\s+)?work on\b|\bthis (?:week|sprint|quarter)\s+I\b",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"\bmy name is\b|\bcall me\b|\bI\s+(?:live|lived|grew up)\s+in\b|\bI(?:'m| am)\s+from\b"
    r"|\bI(?:'m| am)\s+(?:a|an)\s+\w|\bI\s+(?:use|speak|own|have|was born|studied|"
    r"graduated)\b|\bmy\s+\w+(?:\s+\w+)?\s+(?:is|are)\b",
    re.IGNORECASE,
)
# Sentences about named things need a verb that states something.
_STATING = re.compile(
    r"\b(?:is|are|was|were|runs?|uses?|lives?|depends?|belongs?|owns?|has|have|hosts?|"
    r"stores?|listens?|points?|requires?|needs?|contains?|calls?|deploys?|replaced|means|"
    r"stands for|works?|leads?|manages?|maintains?|wrote|built|created|moved|migrated)\b",
    re.IGNORECASE,
)
_IMPERATIVE = frozenset(
    """run use check let try can could please tell show give make find open write add
    remove delete fix explain help do don't look see go send set update create list
    what why how who where when which is are does did will would should""".split()
)
_HEDGE = re.compile(
    r"\b(?:I think|I guess|I believe|maybe|probably|perhaps|might|not sure|possibly)\b",
    re.IGNORECASE,
)
# Openers that carry no content: "As I said, I prefer tabs" states "I prefer tabs".
_DISCOURSE = re.compile(
    r"^(?:(?:as I (?:said|mentioned)(?: before| earlier)?|also|btw|by the way|anyway|and|so|"
    r"well|oh|actually|honestly|fyi|just so you know|for the record|for context|"
    r"to be clear|just fyi)\b[\s,:;-]*)+",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|me|my|mine|myself)\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Rule:
    category: Category
    importance: float
    confidence: float


_RULES: tuple[tuple[re.Pattern[str], _Rule], ...] = (
    (_PREFERENCE, _Rule("preference", 0.6, 0.8)),
    (_PATTERN, _Rule("pattern", 0.55, 0.75)),
    (_PERSONALITY, _Rule("personality", 0.5, 0.7)),
    (_RELATIONSHIP, _Rule("relationship", 0.6, 0.8)),
    (_CONTEXT, _Rule("context", 0.4, 0.7)),
    (_PERSONAL, _Rule("fact", 0.6, 0.8)),
)


def extract_facts(conversation: str | Sequence[ChatMessage]) -> list[FactProposal]:
    """Facts proposed from what the user says (assistant and system turns are not the
    user's word); a plain text counts as said by the user. Questions propose nothing."""
    if isinstance(conversation, str):
        conversation = [ChatMessage(role="user", content=conversation)]
    proposals: dict[str, FactProposal] = {}
    for turn in conversation:
        if turn.role != "user":
            continue
        for sentence in sentences(turn.content):
            proposal = _proposal(sentence)
            if proposal is not None:
                proposals.setdefault(proposal.content.casefold().rstrip(".!"), proposal)
    return list(proposals.values())


def _proposal(sentence: str) -> FactProposal | None:
    if sentence.endswith("?") or len(sentence.split()) < 3:
        return None
    explicit = _EXPLICIT.match(sentence) or _EXPLICIT_AFTER.match(sentence)
    if explicit:
        return _explicit(sentence, explicit.group("rest"))
    rule = _rule_for(sentence)
    if rule is None:
        return None
    return _build(sentence, sentence, rule, source="extracted")


def _explicit(sentence: str, rest: str) -> FactProposal | None:
    rest = rest.strip()
    reminder = _REMINDER.match(rest)
    if reminder:
        content = "The user wants to be reminded to " + reminder.group("what")
        return _build(sentence, content, _Rule("context", 0.7, 0.9), source="explicit", raw=True)
    if len(rest.split()) < 2:
        return None
    rule = _rule_for(rest) or _Rule("fact", 0.8, 0.95)
    return _build(
        sentence, rest, _Rule(rule.category, max(rule.importance, 0.8), 0.95), source="explicit"
    )


def _rule_for(sentence: str) -> _Rule | None:
    for pattern, rule in _RULES:
        if pattern.search(sentence):
            return rule
    if _FIRST_PERSON.search(sentence):
        return None  # about the user, but no rule says what kind of fact: not a guess
    first = sentence.split(None, 1)[0].lower().strip(",")
    if first in _IMPERATIVE or not entities(sentence) or not _STATING.search(sentence):
        return None
    return _Rule("fact", 0.5, 0.55)


def _build(
    sentence: str,
    statement: str,
    rule: _Rule,
    *,
    source: FactSource,
    raw: bool = False,
) -> FactProposal:
    statement = _DISCOURSE.sub("", statement) or statement
    content = statement if raw else third_person(statement)
    confidence = rule.confidence * (0.6 if _HEDGE.search(sentence) else 1.0)
    sentiment: Sentiment = ""
    if rule.category == "preference":
        sentiment = "negative" if _NEGATIVE.search(sentence) else "positive"
    return FactProposal(
        content=clip(_capitalised(content.strip()), CONTENT_LENGTH),
        category=rule.category,
        importance=rule.importance,
        confidence=round(confidence, 2),
        sentiment=sentiment,
        tags=tags_of(sentence),
        source=source,
        excerpt=clip(sentence),
    )


# --- first person to third ---------------------------------------------------------------

_CONTRACTIONS = (
    (re.compile(r"\bI'm\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "I will"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "I would"),
)
_I_CLAUSE = re.compile(
    rf"\bI\s+(?P<adverbs>{_ADVERB_RUN})(?P<verb>[A-Za-z]+n't|[A-Za-z]+)(?=[^\w']|$)", re.IGNORECASE
)
_POSSESSIVES = (
    (re.compile(r"\b(?:my|mine)\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
    (re.compile(r"\bI\b"), "the user"),
)
_VERB_FORMS = {
    "am": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "does not",
    "didn't": "did not",
    "can't": "cannot",
    "won't": "will not",
    "wouldn't": "would not",
    "haven't": "has not",
    "wasn't": "was not",
}
_UNCHANGED = frozenset(
    """can could will would should must might may shall was did need cannot
    built wrote went had made got took came saw knew thought said ran began bought left lost
    met paid sold sent spent taught told won broke chose drove ate fell felt found forgot gave
    grew heard held kept led meant put read rode set shut sat slept spoke stood understood
    woke wore moved""".split()
)


def third_person(text: str) -> str:
    """``text`` with the speaker as "the user": "I really like my tea hot" becomes "the
    user really likes the user's tea hot"."""
    text = text.replace("\u2019", "'")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = _I_CLAUSE.sub(lambda m: f"the user {m.group('adverbs')}{_third(m.group('verb'))}", text)
    for pattern, replacement in _POSSESSIVES:
        text = pattern.sub(replacement, text)
    return text


def _third(verb: str) -> str:
    lower = verb.lower()
    if lower in _VERB_FORMS:
        return _VERB_FORMS[lower]
    if lower in _UNCHANGED or lower.endswith(("ed", "n't")):
        return verb
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and len(lower) > 2 and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
