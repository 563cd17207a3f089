"""Agents with tools: a page that has the reader call a tool with side effects (send,
delete, transfer, post) for the page's author, and encoded text the reader is told to
decode and then obey."""

from __future__ import annotations

from wiki.scanner.words import PhraseRule, rx

# A tool's name, as agents' tools are named: snake_case, camelCase or dotted, with a
# verb that acts on the world.
ACTS = (
    r"(?:send|delete|remove|drop|transfer|post|upload|exec|execute|run|forward|email|mail|pay|"
    r"wire|wipe|destroy|purge|grant|share|publish|write|update|create|move|admin|override|"
    r"approve)"
)
ACTING_TOOL = (
    rf"[`'\"]?(?:(?:[a-z0-9]+[_.])+{ACTS}(?:[_.][a-z0-9]+)*|{ACTS}(?:[_.][a-z0-9]+)+)[`'\"]?"
)
CALL = r"(?:call|invoke|use|run|execute|trigger|fire)(?: the| your)?(?: internal| available)?"
FOR_THE_PAGE = (
    r"(?:before (?:you )?(?:respond|reply|answer|continu|proceed|summari[sz]|return|finish)\w*"
    r"|without (?:asking|approval|confirmation|permission|telling|checking)|(?:don't|do not)"
    r" ask for (?:confirmation|approval|permission)|to (?:[\w.+-]+@[\w-]+\.[\w.-]+|https?://)"
    r"|(?:all|every|the full|the entire|the whole|the last \d+) (?:\w+ )?(?:conversation|"
    r"history|customers?|users?|records?|files?|data|messages|e-?mails?|list|accounts?)"
    r"|even if|(?:is|are) (?:required|mandatory) (?:for|by)|as part of (?:the|this) (?:task|"
    r"ticket|audit|review|summary))"
)

RULES = [
    PhraseRule(
        "tool-abuse",
        "high",
        "has the reader call a tool that acts on the world, for the page",
        rx(
            rf"\b{CALL} {ACTING_TOOL}(?: (?:tool|function|action|command|endpoint|api))?\b"
            rf"[^\n]{{0,160}}?\b{FOR_THE_PAGE}"
            r"|\b(?:before|when|after) (?:you )?(?:respond|reply|answer|summari[sz]|return|"
            rf"finish|read|process)\w*(?: \w+){{0,4}},? (?:please )?(?:first )?{CALL} {ACTING_TOOL}"
            r"|\b(?:call|invoke|use|run|execute)(?: the)? [`'\"]?[a-z0-9_.]+[`'\"]?"
            r" (?:tool|function)\b[^\n]{0,80}?\b(?:to (?:send|forward|e-?mail|post|upload)|with)"
            r" (?:all |the full |the entire |the whole )?(?:the )?(?:conversation|chat|history|"
            r"messages|customer list|user data|contents?)\b"
        ),
        "call invoke =use =run execut trigger =fire",
        120,
        300,
    ),
    PhraseRule(
        "decode-and-follow",
        "high",
        "tells the reader to decode text and then do what it says",
        rx(
            r"\b(?:decode|decipher|decrypt|translate|reverse|unscramble|convert|read|apply)\b"
            r"[^.\n]{0,80}?\b(?:then|and)(?: then)?(?: \w+){0,2}? (?:follow|execute|obey|do|"
            r"carry out|perform|run|comply with|comply|act on|respond to|answer)\b"
            r"(?:[^.\n]{0,40}?\b(?:instructions?|it|what it says|the (?:decoded|resulting|hidden|"
            r"inner) \w+|commands?|the result|its contents|the question)\b|\s*[:.])"
        ),
        "decode decipher decrypt translate reverse unscramble convert read apply",
        5,
        200,
    ),
]
