"""Output hijacking: a reply fixed in advance whatever the user asks, text the reader must
put into its answer, or the reader's task swapped for another one."""

from __future__ import annotations

from wiki.scanner.words import ANY_WORD, PhraseRule, S, combos, rx

ANSWER = r"(?:responses?|repl(?:y|ies)|answers?|outputs?|summar(?:y|ies)|completions?)"
RESPOND = r"(?:respond|reply|answer|say|output|print|write|return|type|state)"
# Text in straight, curly or angle quotes, or backticks.
QUOTED = (
    r"[\"'\u201c\u201d\u2018\u2019\u00ab`][^\"'\u201c\u201d\u2018\u2019\u00ab\u00bb`\n]{1,160}"
    r"[\"'\u201d\u2019\u00bb`]"
)
# The start of a quotation, for a reply whose opening words are given at length.
QUOTE_OPENS = r"[\"'\u201c\u201d\u2018\u2019\u00ab`]\s*\w"
NO_MATTER = (
    r"(?:no matter|regardless of|irrespective of|whatever|independently of)"
    r"(?: what| how| which)?(?: (?:the user|users?|anyone|they|people|someone|he|she|"
    r"the (?:question|request|prompt|input|message|query|task)s?|you are|you're|it|is|was))+"
    r"(?: (?:asks?|asked|says?|said|wants?|requests?|requested|types?|typed|writes?|wrote|"
    r"asking|saying|sends?|sent|is|was|are|were|about))?"
)
YOUR_ANSWER = rf"(?:your|each|every|all your|all of your) {ANSWER}"
PAYLOAD_AHEAD = (
    r"(?::|\bthe following\b|\bthis (?:exact )?(?:string|text|link|image|markdown|url|code|"
    rf"line|sentence|message|anchor|html|snippet)\b|{QUOTED}|!\[|<[a-z]|https?://)"
)
PUT = (
    r"(?:include|add|insert|append|put|embed|place|output|print|write|repeat|render|display|"
    r"show|paste|attach|say|mention|state|do|perform|execute)"
)
YOUR_ANSWER_ANCHORS = " ".join(
    f"{who}_{what}"
    for who in ("your", "each", "every")
    for what in ("response", "repl", "answer", "output", "summar", "completion")
)

RULES = [
    PhraseRule(
        "output-hijack",
        "high",
        "fixes the reader's reply whatever the user asks",
        rx(
            rf"\b{NO_MATTER}\b[^.!?\n]{{0,80}}?\b(?:respond|reply|answer|say|recommend|"
            r"tell (?:them|the user|users))\b"
            rf"|\b(?:respond|reply|answer|say)\b[^.!?\n]{{0,120}}?\b{NO_MATTER}\b"
            r"|\b(?:to|for|in reply to|in response to) (?:any|every|all|each|every single)"
            r" (?:questions?|requests?|prompts?|messages?|queries|inputs?|users?|tasks?)"
            rf"(?: \w+){{0,4}},? (?:you (?:must|should|will) )?(?:just |only |always |simply )?"
            rf"{RESPOND}(?: only| just)?(?: with)?(?: the (?:words?|phrase|text|string|sentence))?"
            rf"\s*:?\s*{QUOTED}"
        ),
        (
            "no_matter regardless irrespective whatever independently to_any to_every to_all "
            "to_each for_any for_every for_all for_each in_reply in_response"
        ),
        160,
        260,
    ),
    PhraseRule(
        "output-hijack",
        "high",
        "tells the reader what its whole reply must be",
        rx(
            rf"\byour (?:only|sole|entire|whole|one|single|final) {ANSWER}"
            r"(?: \w+){0,3} (?:should|must|will|shall|is to|has to|needs to|may only)"
            r" (?:be|say|read|consist|contain only|include only)\b"
            rf"|\b{RESPOND}(?: only| just)?(?: with)?(?: the (?:words?|phrase|text|string|"
            rf"sentence))?\s*:?\s*{QUOTED}\s*[,.;]?\s*(?:and )?(?:nothing else|nothing more|"
            r"(?:and )?stop there|without (?:any )?(?:explanation|other text|comment|"
            r"anything else))"
        ),
        (
            "your_only your_sole your_entire your_whole your_one your_single your_final "
            "nothing_else nothing_more stop_there without_explanation without_any "
            "without_other without_comment without_anything"
        ),
        260,
        120,
    ),
    PhraseRule(
        "output-hijack",
        "high",
        "tells the reader to put given text into its reply",
        rx(
            rf"\b{PUT}\b(?:{S}{ANY_WORD}){{0,4}}?{S}(?:in|into|to|within|inside|at the (?:end|"
            r"start|beginning|top|bottom) of|to the (?:end|start|beginning|top|bottom) of)"
            rf" {YOUR_ANSWER}\b[^.!?\n]{{0,40}}?{PAYLOAD_AHEAD}"
            rf"|\b{PUT} (?:the following|this|these)(?: exact)? (?:\w+ ){{0,2}}?(?:string|text|"
            r"link|image|markdown|url|code|line|sentence|message|anchor|html|snippet|words?|tag|"
            r"payload|characters?|emoji)s?\b[^!?\n]{0,200}?\b(?:in|into|to|within|at the (?:end|"
            rf"start|beginning|top|bottom) of) {YOUR_ANSWER}\b"
            r"|\b(?:repeat|print|output|write|say|append|insert)\b[^.!?\n]{0,80}?\b\d+ times\b"
            rf"[^.!?\n]{{0,80}}?\b(?:in|at the (?:end|start|beginning) of) {YOUR_ANSWER}\b"
            r"|\b(?:in|at the (?:end|start|beginning|top|bottom) of|to the end of|before|after)"
            rf" {YOUR_ANSWER},? (?:always |also |please |you must |make sure (?:to|you) |"
            rf"be sure to )?{PUT}\b[^.!?\n]{{0,40}}?{PAYLOAD_AHEAD}"
        ),
        YOUR_ANSWER_ANCHORS,
        300,
        280,
    ),
    PhraseRule(
        "output-hijack",
        "high",
        "swaps the reader's task for another one",
        rx(
            r"\binstead of (?:answering|responding(?: to)?|replying(?: to)?|summari[sz]ing|"
            r"translating|doing|following|completing|performing|addressing|helping with|"
            r"handling) (?:the |their |any |this |that )?(?:user'?s?|questions?|requests?|tasks?|"
            r"prompts?|query|queries|original|what (?:you were|the user|you are|they)"
            r" (?:asked|told|requested|asking))"
            r"|\b(?:if|when|whenever) (?:you are |you're |you get |you have been |you're being )?"
            r"(?:asked|told|instructed|requested|prompted) to (?:summari[sz]e|translate|answer|"
            r"review|explain|describe|analy[sz]e|classify|process|read|check|respond|reply|help)"
            r"\b[^.!?\n]{0,100}?\b(?:instead|rather than|only (?:say|respond|reply|output|"
            r"answer)|just (?:say|respond|reply|output|answer)|make sure (?:to )?also)\b"
            r"|\b(?:new|real|actual|true|secret|hidden|urgent|priority|emergency|override|"
            r"overriding)(?: (?:new|important|urgent|priority|system|secret|hidden))*"
            r" (?:instructions?|tasks?|directives?|orders|missions?|objectives?)\b\s*(?:[:!]|"
            r"\*{2,}|={2,}|-{2,}|\]|\))"
        ),
        (
            "instead_of asked_to told_to instructed_to requested_to prompted_to _instruction "
            "_task _directive _orders _mission _objective"
        ),
        120,
        200,
    ),
]

# The start or end of the reply fixed in advance ("Start your response with 'Sure, here
# is'"): the classic prefix injection, and its cousins for summaries.
OPENING = r"(?:start|begin|open|prefix|preface|lead|commence|end|finish|conclude|close|sign off)"
TOKEN = (
    r"(?:token|string|code|text|phrase|word|marker|tag|reference|id|identifier|sentence|line|"
    r"message|link|url|image|footer|signature|watermark|canary)"
)
RULES += [
    PhraseRule(
        "output-hijack",
        "medium",
        "fixes how the reader's reply must start or end",
        rx(
            rf"(?<![a-z]){OPENING}(?: off| out)?(?: each| every| all)?(?: of)?"
            r" (?:your|each|every|the)"
            r" (?:next |first |final )?(?:responses?|repl(?:y|ies)|answers?|outputs?|"
            r"completions?|summar(?:y|ies))(?: \w+){0,3}? (?:with|by (?:saying|writing|stating))"
            rf"(?: the (?:words?|phrase|sentence|text|string|line))?\s*:?\s*{QUOTE_OPENS}"
            r"|\bwhen(?:ever)? (?:you(?:'re| are)? )?(?:summari[sz]ing|summari[sz]e|answering|"
            r"answer|responding|respond|replying|reply|describing|describe|translating|translate|"
            r"writing (?:a|the|your) (?:summary|reply|response|answer))\b[^.!?\n]{0,60}?,?\s*"
            r"(?:always |please |also |you must |make"
            r" sure (?:to|you) )?(?:end|start|begin|finish|conclude|close|open|prefix|append|add|"
            rf"include|mention|say|insert|recommend|tell)\b[^.!?\n]{{0,40}}?{QUOTED}"
        ),
        combos("your each every the", "respon repl answer output complet summar")
        + " "
        + combos(
            "when whenever when_you whenever_you when_you're when_you_are",
            "summari answer respond repl describ translat writing",
        ),
        10,
        200,
    ),
    PhraseRule(
        "output-hijack",
        "high",
        "tells the reader to put a given token into its reply",
        rx(
            rf"\b{PUT} (?:the|this|these) (?:exact|literal|following|given|above|same|special)"
            rf"(?: \w+)? {TOKEN}s?\b[^!?\n]{{0,200}}?\b(?:in|into|to|within|at the (?:end|start|"
            r"beginning|top|bottom) of|to the (?:end|start|beginning|top|bottom) of)"
            rf" {YOUR_ANSWER}\b"
            r"|\b(?:must|should|has to|have to|needs? to|is to) be (?:included|added|appended|"
            r"prepended|inserted|mentioned|placed|shown|repeated|printed|written) (?:in|to|at the"
            r" (?:end|start|beginning|top|bottom) of|into) (?:every|each|all|any) (?:\w+ )?"
            r"(?:reports?|responses?|repl(?:y|ies)|answers?|outputs?|summar(?:y|ies)|messages?)"
            r" (?:you (?:generate|write|produce|give|send|create|return|make)|from now on)\b"
        ),
        YOUR_ANSWER_ANCHORS
        + " "
        + combos("you", "generate write produce give send create return make")
        + " from_now",
        60,
        260,
    ),
    PhraseRule(
        "output-hijack",
        "high",
        "tells the reader what its whole reply must be",
        rx(
            rf"\byour (?:only|sole|entire|whole|one|single|final|singular|every) {ANSWER}"
            rf"(?: \w+){{0,3}}? (?:is|will be|must be|shall be|should be)\s*:?\s*{QUOTED}"
            rf"|\b(?:all|every|each) (?:of your )?{ANSWER} (?:(?:must|should|will|shall) be|are|is)"
            rf" (?:exactly|only|just|precisely)\s*:?\s*{QUOTED}"
            rf"|\b{RESPOND}(?: only| just)?(?: with)?(?: the| this)? (?:exact |literal |following |"
            r"precise )(?:words?|phrase|text|string|sentence|message)\s*:?\s*"
            rf"{QUOTED}\s*[,.;]?\s*(?:and )?(?:nothing else|nothing more|(?:and )?stop there|"
            r"without (?:any )?(?:explanation|other text|comment|anything else))"
            r"|\b(?:confirm|acknowledge|indicate|show|prove|signal)(?: that)? (?:you"
            r" (?:understand|agree|accept|will comply|are ready|have been \w+)|this|it|the"
            r" (?:override|change|update|new (?:mode|rules|instructions)))\b[^.!?\n]{0,60}? by"
            r" (?:replying|responding|answering|saying|writing|outputting|printing)(?: with)?"
            rf"(?: only| just| exactly)?\s*:?\s*{QUOTED}"
        ),
        "your_only your_sole your_entire your_whole your_one your_single your_final "
        "your_singular your_every "
        + combos("all every each your", "respon repl answer output summar complet")
        + " "
        + combos("exact literal following precise", "word phrase text string sentence message")
        + " "
        + combos("by", "replying responding answering saying writing outputting printing"),
        60,
        200,
    ),
]

RULES += [
    PhraseRule(
        "output-hijack",
        "high",
        "tells the reader what its whole reply must be",
        rx(
            rf"\byour (?:\w+ )?{ANSWER} (?:must|should|shall|will|has to|needs to) (?:be|read|say)"
            r" (?:exactly|only|just|precisely|nothing but|simply|verbatim)\s*:?\s*"
            rf"{QUOTED}"
            rf"|\b(?:replace|substitute|swap|overwrite) (?:your|each|every|any) (?:entire |whole |"
            rf"final )?{ANSWER} (?:with|for)\s*:?\s*(?:{QUOTED}|the (?:following|text|phrase|"
            r"words|string))"
        ),
        YOUR_ANSWER_ANCHORS
        + " "
        + combos("replace substitute swap overwrite", "your each every any"),
        40,
        200,
    ),
]

# The reply's first or last words fixed by name ("your first word must be 'Yes'"), a
# code the reply must end on, and a reviewer told to set its criteria aside and approve.
RULES += [
    PhraseRule(
        "output-hijack",
        "medium",
        "fixes how the reader's reply must start or end",
        rx(
            r"\byour (?:very )?(?:first|last|opening|final|closing) (?:words?|sentences?|lines?|"
            rf"tokens?|characters?|output)(?: \w+)? (?:must|should|shall|will|has to|needs to|"
            rf"is to) be\s*:?\s*{QUOTED}"
            rf"|\b{RESPOND}(?: with)?\s*:?\s*{QUOTED} as (?:your|the) (?:very )?(?:first|last|"
            r"opening|final) (?:words?|sentences?|lines?|tokens?)\b"
            rf"|(?<![a-z]){OPENING} (?:each|every|all|all of your|your)(?: \w+)? (?:responses?|"
            r"repl(?:y|ies)|answers?|outputs?|messages?|summar(?:y|ies)) with (?:the |this )?"
            r"(?:code|token|string|marker|tag|word|phrase|signature|canary|id|identifier|"
            r"reference) [\w-]{3,}"
        ),
        "your_first your_very your_last your_opening your_final your_closing as_your as_the "
        + combos("each every all your", "respon repl answer output message summar"),
        60,
        160,
    ),
    PhraseRule(
        "output-hijack",
        "high",
        "tells a reviewing reader to set its criteria aside and approve",
        rx(
            r"\b(?:ignore|disregard|forget|skip|bypass|override|set aside)(?: all| any)?"
            r" (?:the |your |these |those |its |their )?(?:\w+ ){0,2}?(?:guidelines|rules|"
            r"instructions|criteria|polic(?:y|ies)|rubric|checklist|requirements|standards)"
            r"(?: \w+){0,3}? and (?:just |simply |instead |immediately )?(?:approve|accept|rate|"
            r"score|label|classify|recommend|hire|shortlist|rank|grade)\b"
        ),
        "ignor disregard forget skip bypass overrid set_aside",
        10,
        160,
    ),
]
