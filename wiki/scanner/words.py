"""Word classes and helpers shared by the rules that read the normalised text."""

from __future__ import annotations

import re
from typing import NamedTuple

from wiki.scanner.findings import Severity

# Between words: spaces plus the Markdown and quoting punctuation that obfuscation uses.
# Both runs are possessive: the two classes share "-" and "'", and a pattern that repeats
# them (a few words of anything) would otherwise try every way of splitting a long run of
# dashes or quotes between them, which takes minutes on some ordinary pages.
S = r"[\s*_~`>\"'\u201c\u201d\u2018\u2019()\[\]|,:-]++"
ANY_WORD = r"[\w'\u2019-]++"

SENSITIVE = (
    r"(?:secrets?|tokens?|credentials?|passwords?|passphrases?|api[ _-]?keys?|"
    r"access[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|keys|id_rsa|~/\.ssh|\.ssh|"
    r"\.env\b|\.aws|env(?:ironment)?[ _-]?var(?:iable)?s|os\.environ|cookies?|"
    r"session[ _-]?(?:ids?|tokens?)|conversations?|chat(?:[ _-]?(?:history|log))|"
    r"(?:previous|last|user'?s?|private|direct) messages|memories|facts about|system prompt|"
    r"contact[ _-]?list|personal (?:details|data|information)|private (?:notes|pages|data)|"
    r"card details|everything you know|(?:all|every|any) (?:the )?(?:data|files|pages)|"
    # What a memory server hands an agent: recalled facts and the user's own words.
    r"(?:recalled|retrieved|remembered|stored) (?:facts|memories|content|context|data|notes|"
    r"documents|information)|what you (?:know|remember|recall|have stored|have learned)|"
    r"(?:the )?(?:user'?s?|customer'?s?|client'?s?) (?:\w+ )?(?:data|details|profile|info|"
    r"information|messages|e-?mails?|files|documents|preferences|address|history|questions?|"
    r"requests?|input|queries|memories|notes|facts|name|phone(?: number)?|list|lists|database|"
    r"records|accounts|table)|(?:customer|client|contact|employee|subscriber|member|patient)"
    r"s?[ _-](?:list|lists|database|db|records|data|details|e-?mails)|"
    r"(?:its|their|the file'?s) (?:full|entire|whole|complete) contents?|"
    r"(?:this|the|our|your|current|whole|entire) (?:conversation|chat|session|thread|"
    r"dialog(?:ue)?)|(?:all|every|any) (?:the |your |my )?(?:facts|memories|notes|messages|"
    r"e-?mails|documents)|(?:the )?(?:contents?|body|text|summary|transcript) of (?:the|this|"
    r"our|your|each|every|all|my) (?:conversation|chat|session|e-?mails?|inbox|messages?|"
    r"memories|memory|notes|documents?|files?|history|context|prompt)|everything (?:you|the"
    r" user|they) (?:know|said|wrote|typed|shared|told you))"
)


def rx(pattern: str) -> re.Pattern[str]:
    """A pattern over the normalised text, where ``^`` and ``$`` match at line breaks."""
    return re.compile(pattern, re.MULTILINE)


def combos(*choices: str) -> str:
    """Anchors for ``PhraseRule``: every way of taking one word from each of ``choices``
    (space-separated alternatives), joined by spaces ("_")."""
    found = [""]
    for choice in choices:
        found = [f"{head}_{word}" if head else word for head in found for word in choice.split()]
    return " ".join(found)


def occurrences(text: str, literal: str, whole_word: bool) -> list[int]:
    """Where ``literal`` occurs in ``text`` (as a whole word only, if asked)."""
    found = []
    pos = text.find(literal)
    while pos >= 0:
        end = pos + len(literal)
        if not whole_word or not (
            (pos and text[pos - 1].isalnum()) or (end < len(text) and text[end].isalnum())
        ):
            found.append(pos)
        pos = text.find(literal, pos + 1)
    return found


class PhraseRule(NamedTuple):
    """A pattern for the normalised text, run only near its anchors.

    ``anchors`` are literals that every match contains ("_" for a space, a leading "="
    for a whole word; empty means scan everything). The pattern runs from ``before``
    characters ahead of an anchor to ``after`` characters past it.
    """

    rule: str
    severity: Severity
    message: str
    pattern: re.Pattern[str]
    anchors: str = ""
    before: int = 0
    after: int = 0
