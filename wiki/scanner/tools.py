"""Agents with tools: a page that has the reader call a tool with side effects (send,
delete, transfer, post) for the page's author, and encoded text the reader is told to
decode and then obey."""

from __future__ import annotations

from wiki.scanner.words import SENSITIVE, PhraseRule, combos, rx

# A tool's name, as agents' tools are named: snake_case, camelCase or dotted, with a
# verb that acts on the world.
ACTS = (
    r"(?:send|delete|remove|drop|transfer|post|upload|exec|execute|run|forward|email|mail|pay|"
    r"wire|wipe|destroy|purge|grant|share|publish|write|update|create|move|admin|override|"
    r"approve|export|push|sync|submit|charge|refund|invite)"
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
    r"ticket|audit|review|summary)"
    r"|(?:to|at) (?:the |an |our |this |that )?(?:[\w-]+ ){0,2}?(?:webhook|endpoint|callback|"
    r"collector|listener)\b"
    r"|to (?:close|resolve|complete|finish) (?:this|the) (?:ticket|task|issue|request|case)"
    # A destructive call aimed at everything: "delete_records(target='all')".
    r"|(?:target|scope|path|table|records?|ids?|which|filter|where)\s*=\s*['\"]?(?:all|\*|"
    r"everything)\b"
    r"|to (?:bypass|skip|override|circumvent|disable|get around) (?:the |all |any |your )?"
    r"(?:\w+ )?(?:checks?|confirmations?|approvals?|verifications?|restrictions|limits|audit|"
    r"reviews?|security|safeguards|policy|policies))"
)

RULES = [
    PhraseRule(
        "tool-abuse",
        "high",
        "has the reader call a tool that acts on the world, for the page",
        rx(
            rf"\b{CALL} {ACTING_TOOL}(?: (?:tool|function|action|command|endpoint|api))?\b"
            # Within the sentence ("payments.transfer" and "e.g." keep their dots).
            rf"(?:[^.!?\n]|\.(?!\s)){{0,160}}?\b{FOR_THE_PAGE}"
            r"|\b(?:before|when|after|once) (?:you )?(?:respond|reply|answer|summari[sz]|return|"
            r"finish|read|process)\w*(?: \w+){0,4},? (?:please )?(?:first )?(?:your (?:next|first)"
            r" (?:action|step|move) (?:must|should|will|shall|is to|has to)(?: be)?(?: to)? )?"
            rf"{CALL} {ACTING_TOOL}"
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
        "tool-abuse",
        "high",
        "writes out a call of a tool that sends private data to an outside address",
        rx(
            rf"{ACTING_TOOL}\s*\([^)\n]{{0,200}}?(?:[\w.+-]+@[\w-]+\.[\w.-]+|https?://)"
            rf"[^)\n]{{0,200}}?{SENSITIVE}"
        ),
        "@ ://",
        300,
        300,
    ),
    PhraseRule(
        "decode-and-follow",
        "high",
        "tells the reader to decode text and then do what it says",
        rx(
            # Not a list of permissions ("read, write and execute").
            r"\b(?:decode|decipher|decrypt|translate|reverse|unscramble|convert|read|apply)\b"
            r"(?!,| (?:and|or|/) (?:write|execute)\b)"
            r"[^.\n]{0,80}?\b(?:then|and)(?: then)?(?: \w+){0,2}? (?:follow|execute|obey|do|"
            r"carry out|perform|run|comply with|comply|act on|respond to|answer)\b"
            r"(?:[^.\n]{0,40}?\b(?:instructions?|it|what it says|the (?:decoded|resulting|hidden|"
            r"inner) \w+|commands?|the result|its contents|the question)\b|\s*[:.])"
        ),
        "decode decipher decrypt translate reverse unscramble convert read apply",
        5,
        200,
    ),
    PhraseRule(
        "decode-and-follow",
        "high",
        "has the reader assemble an instruction from pieces and then carry it out",
        rx(
            r"\b(?:complete|do|perform|execute|follow|carry out|obey|run|answer|fulfil+)"
            r" (?:the )?(?:task|instructions?|commands?|request|question|actions?)s?"
            r" (?:specified|described|given|contained|written|stated|spelled out|formed|encoded)"
            r" (?:by|in) (?:the )?(?:resulting |combined |concatenated |decoded |final )?"
            r"(?:strings?|sentences?|variables?|results?|texts?|outputs?|words?|letters?|"
            r"concatenation|combination)\b"
            r"|\b(?:descodifica|decodifica|decifra|descifra|decode|decodez|dekodiere|entschlussle)"
            r"\b[^.\n]{0,80}?\b(?:y|e|et|und|ed) (?:luego )?(?:sigue|segui|siga|suivez|suis|folge|"
            r"befolge|esegui|ejecuta|execute|executez|obedece|obeisci|haz|fais|mach)\w*\b"
        ),
        combos(
            "task tasks instruction instructions command commands request question action actions",
            "specified described given contained written stated spelled formed encoded",
        )
        + " descodifica decodifica decifra descifra decode dekodiere entschlussle",
        60,
        200,
    ),
]

# The follow-up on its own: text to be turned into an instruction and carried out.
RULES += [
    PhraseRule(
        "decode-and-follow",
        "high",
        "tells the reader to carry out text it has decoded, translated or assembled",
        rx(
            r"\b(?:follow|obey|execute|carry out|act on|comply with|do what) (?:the |what the )?"
            r"(?:translated|decoded|deciphered|decrypted|reversed|unscrambled|reassembled|"
            r"concatenated|combined|assembled|resulting) (?:text|message|instructions?|string|"
            r"sentence|command|prompt|request|says)\b"
            r"|\b(?:execute|follow|obey|carry out) (?:it|this|that|them|the (?:result|output|"
            r"string|text|combination|concatenation)) as (?:an? |your )?(?:new )?(?:instructions?|"
            r"prompt|system prompt|orders?)\b"
        ),
        "follow obey execut carry_out act_on comply do_what",
        10,
        120,
    ),
]
