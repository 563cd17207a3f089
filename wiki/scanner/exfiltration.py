"""Exfiltration in words: a transfer verb, something sensitive and an outside address in
one sentence."""

from __future__ import annotations

import re

from wiki.scanner.code import CodeMask
from wiki.scanner.findings import Finding, finding
from wiki.scanner.normalise import Normalised
from wiki.scanner.words import SENSITIVE, occurrences, rx

ADDRESS = r"(?:https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d{1,3}(?:\.\d{1,3}){3}\b)"
# An address named rather than written: "post it to the webhook below".
NAMED_ADDRESS = (
    r"(?:(?:the|this|that|our|my|a|an|following|below|above|given|attacker'?s?|external|remote|"
    r"listed) )*(?:webhook|callback(?: url)?|endpoint|collector|listener|(?:remote|external)"
    r" server|url (?:below|above))\b"
)
DESTINATION = rf"(?:{ADDRESS}|{NAMED_ADDRESS})"
_TRANSFER = rx(
    r"\b(?:send|post|upload|forward|transmit|submit|e-?mail|mail|exfiltrate|leak|copy|"
    r"paste|share|append|attach|include|dump|push|relay|deliver|pipe|beam|report|log|sync|"
    r"export|transfer|write|save|smuggle|stream|mirror|publish)\b"
)
# Reading a URL the page names, with private data put into the request.
_FETCH = rx(
    r"\b(?:fetch|visit|open|load|request|call|curl|wget|ping|hit|query|navigate to|browse to|"
    r"go to|make an? (?:get|post|http) request to|send an? (?:get|post|http) request to)"
    rf"\s+<?{ADDRESS}"
)
_WITH_DATA = rx(
    r"\b(?:with|including|containing|carrying|append(?:ing)?|add(?:ing)?|attach(?:ing)?|"
    r"includ(?:e|ing)|put(?:ting)?|encod(?:e|ing)|embed(?:ding)?|insert(?:ing)?|as (?:a |the )?"
    r"(?:query|parameter|param|body|payload))\b"
)
_TO_DESTINATION = rx(
    rf"\b(?:to|into|at) (?:(?:the|our|this|that|my|a|an) )?(?:[\w-]+ ){{0,2}}?"
    rf"{DESTINATION}"
)
_SENSITIVE = rx(rf"(?<![\w.-]){SENSITIVE}(?![\w-])")
_NEGATION = rx(r"\b(?:never|not|don't|dont|no|avoid|without)\b")
_IP_ADDRESS = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def _sentence(text: str, pos: int) -> tuple[int, int]:
    """Bounds of the sentence (or line) around ``pos`` in the normalised text."""
    start = max(0, pos - 400)
    for mark in (". ", "! ", "? ", "\n"):
        found = text.rfind(mark, start, pos)
        if found >= 0:
            start = found + len(mark)
    following = _SENTENCE_END.search(text, pos, pos + 400)
    return start, following.start() if following else min(len(text), pos + 400)


def exfiltration_findings(norm: Normalised, code: CodeMask) -> list[Finding]:
    """A transfer verb, something sensitive and an outside address in one sentence."""
    found = []
    text = norm.text
    # Addresses are rarer than verbs, so only sentences that hold one are read.
    sentences = {
        _sentence(text, pos)
        for mark in ("://", "www.", "@", "webhook", "endpoint", "callback", "collector", "listener")
        for pos in occurrences(text, mark, False)
    }
    sentences |= {_sentence(text, match.start()) for match in _IP_ADDRESS.finditer(text)}
    for start, end in sorted(sentences):
        while start < end and text[start] == " ":
            start += 1
        for verb in _TRANSFER.finditer(text, start, end):
            if norm.position(verb.start()) in code or _NEGATION.search(text, start, verb.start()):
                continue
            if _TO_DESTINATION.search(text, verb.end(), end) and _SENSITIVE.search(
                text, start, end
            ):
                found.append(
                    finding(
                        "exfiltration-url",
                        "high",
                        "asks for secrets or conversation data to be sent to an address",
                        norm.original,
                        *norm.span(start, end),
                    )
                )
                break
        else:
            fetch = _FETCH.search(text, start, end)
            if (
                fetch
                and norm.position(fetch.start()) not in code
                and not _NEGATION.search(text, start, fetch.start())
                and _WITH_DATA.search(text, fetch.end(), end)
                and _SENSITIVE.search(text, start, end)
            ):
                found.append(
                    finding(
                        "exfiltration-url",
                        "high",
                        "asks for a URL to be fetched with private data in the request",
                        norm.original,
                        *norm.span(start, end),
                    )
                )
    return found
