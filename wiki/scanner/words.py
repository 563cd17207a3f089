"""Word classes and helpers shared by the rules that read the normalised text."""

from __future__ import annotations

import re

# Between words: spaces plus the Markdown and quoting punctuation that obfuscation uses.
S = r"[\s*_~`>\"'\u201c\u201d\u2018\u2019()\[\]|,:-]+"
ANY_WORD = r"[\w'\u2019-]+"

SENSITIVE = (
    r"(?:secrets?|tokens?|credentials?|passwords?|passphrases?|api[ _-]?keys?|"
    r"access[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|keys|id_rsa|~/\.ssh|\.ssh|"
    r"\.env\b|\.aws|env(?:ironment)?[ _-]?var(?:iable)?s|os\.environ|cookies?|"
    r"session[ _-]?(?:ids?|tokens?)|conversations?|chat(?:[ _-]?(?:history|log))|"
    r"(?:previous|last|user'?s?|private|direct) messages|memories|facts about|system prompt|"
    r"contact[ _-]?list|personal (?:details|data|information)|private (?:notes|pages|data)|"
    r"card details|everything you know|(?:all|every|any) (?:the )?(?:data|files|pages))"
)


def rx(pattern: str) -> re.Pattern[str]:
    """A pattern over the normalised text, where ``^`` and ``$`` match at line breaks."""
    return re.compile(pattern, re.MULTILINE)


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
