"""Persistent memory poisoning: an instruction to store a fact or rule, or to change a
remembered one, so that the reader acts on it in later conversations."""

from __future__ import annotations

from wiki.scanner.words import ANY_WORD, PhraseRule, S, rx

STORE = (
    r"(?:remember|memori[sz]e|store|save|record|note|add|write|commit|persist|keep|log|"
    r"insert|put|update|overwrite|replace|change|set|learn|retain)"
)
MEMORY = (
    r"(?:(?:your|the agent'?s|the assistant'?s|the model'?s|the ai'?s)(?: (?:long-term|"
    r"long term|permanent|persistent|core|own|shared))* (?:memory|memories|stored facts)"
    r"|long[- ]term memor(?:y|ies))"
)
LATER = (
    r"(?:(?:all|every|any|each) )?(?:future|later|subsequent|upcoming)(?: future)?"
    r" (?:conversations?|sessions?|chats?|interactions?|turns?|answers?|responses?|replies|"
    r"threads?|dialogues?|tasks?|requests?)"
)
# The next turn, for a page that sets up what the reader does when the user speaks again.
NEXT_TURN = (
    r"(?:on|in|at|with|for|after) (?:the|your|their) (?:next|following) (?:user )?(?:message|"
    r"turn|question|query|prompt|conversation|session|chat|reply|response)"
)
FACT = r"(?:fact|rule|memory|truth|preference|instruction|policy|directive|belief)"

RULES = [
    PhraseRule(
        "memory-poisoning",
        "high",
        "tells the reader to store something in its memory",
        rx(
            rf"\b{STORE}\b(?:{S}{ANY_WORD}){{0,10}}?{S}(?:in|into|to|inside|within|as part of)"
            rf" (?:the )?{MEMORY}\b"
            rf"|\b(?:update|change|overwrite|replace|correct|modify|rewrite|amend|edit|reset|"
            rf"wipe|erase|clear)(?: in)? (?:{MEMORY}|your (?:knowledge|beliefs|understanding|"
            r"world model)\b(?! (?:base|of (?:the|how|what|this)\b)))\b"
            r"|\b(?:remember|memori[sz]e|store|save|record|note|commit|persist|keep|learn)"
            r" (?:this|the following)(?: as)?(?: an?| your)?(?: new| permanent| persistent|"
            rf" standing| core| global)* {FACT}\s*:"
            r"|\b(?:remember|memori[sz]e|store|save|record|note|commit|persist|keep|retain)"
            r"(?: this| that| the following| these| it| them)? as (?:an? |your |the )?"
            r"(?:new |permanent |persistent |long-term |standing |global |core |important |key |"
            rf"general |verified |established |trusted )*{FACT}s?\b"
        ),
        "memory memories stored_facts fact rule truth preference instruction polic directive "
        "belief knowledge understanding world_model",
        160,
        80,
    ),
    PhraseRule(
        "memory-poisoning",
        "high",
        "tells the reader to carry something into later conversations",
        rx(
            r"\b(?:remember|memori[sz]e|keep(?: this| that| it)? in mind|note|don't forget|"
            r"do not forget|never "
            r"forget|bear in mind|retain|store|save|reference|cite|follow|obey|(?:apply|treat|use)"
            r" (?:this|these|the following|that) (?:fact|rule|polic(?:y|ies)|information|"
            r"document|note|instruction|preference)s?)\b"
            rf"(?:{S}{ANY_WORD}){{0,12}}?{S}(?:for|in|across|during|throughout|into)"
            rf" (?:all |every |any |each |our |your )?{LATER}\b"
            rf"|\b(?:in|for|during|across|throughout) (?:all |every |any |each |our |your )?"
            rf"{LATER}\b,? (?:you (?:must|should|will|shall) )?(?:always |never |also |only |"
            r"then )?(?:say|tell|recommend|answer|respond|reply|treat|assume|refer|claim|state|"
            r"mention|insist|suggest|redirect|send|address|believe|report|describe|ignore)\b"
            r"|\b(?:from now on|going forward|henceforth|permanently|forever|for good),?"
            r" (?:remember|assume|believe|record|store|note|memori[sz]e)(?: that| this| the"
            r" following)\b"
            rf"|\b{NEXT_TURN}\b,? (?:you (?:must|should|will|shall) )?(?:always |first |then |"
            r"immediately )?(?:begin|start|open|reply|respond|answer|print|output|reveal|repeat|"
            r"say|tell)\b(?: \w+){0,3}? (?:by|with|the|your|that|all)\b"
        ),
        "future later subsequent upcoming from_now going_forward henceforth permanently "
        "forever for_good next following",
        180,
        140,
    ),
    PhraseRule(
        "memory-poisoning",
        "high",
        "claims a remembered fact has changed and asks for the new one to be stored",
        rx(
            r"\b(?:the|your|its|any) (?:previous|old|earlier|stored|saved|remembered|existing|"
            r"recorded|known|prior|original) (?:\w+ ){0,3}?(?:fact|facts|information|info|memory|"
            r"memories|value|address|number|e-?mail|details|data|record|rule|policy|"
            r"instructions?|account|iban|wallet|contact|url|link|password|credentials?)\b"
            r"[^.!?\n]{0,60}?\b(?:is|are|was|were|has been|have been) (?:now )?(?:wrong|outdated|"
            r"incorrect|obsolete|invalid|out of date|no longer (?:valid|true|correct|accurate|in"
            r" use)|superseded|replaced|false|compromised)\b[^!?\n]{0,160}?\b(?:remember|"
            r"memori[sz]e|(?:store|save|record|note) (?:it|this|that|the)|update your"
            r" (?:memory|memories|records|notes|facts))\b"
        ),
        "previous old earlier stored saved remembered existing recorded known prior original",
        10,
        300,
    ),
]

# Text handed over to be filed among what the reader knows: "add this to your knowledge
# base: ...".
KNOWLEDGE = (
    r"(?:your|the (?:agent|assistant|model|ai)'?s?) (?:(?:long-term|permanent|persistent|"
    r"core|internal|own) )?(?:knowledge(?: ?base)?|kb|memory|memories|memory bank|"
    r"stored facts)"
)
RULES += [
    PhraseRule(
        "memory-poisoning",
        "high",
        "hands the reader text to file among what it knows",
        rx(
            r"\b(?:add|save|store|write|put|insert|upload|commit|record|append|file|ingest)"
            r" (?:this|these|the following|the text below|it)(?: (?:fact|rule|note|text|"
            r"document|polic(?:y|ies)|information|entry|statement|line|update)s?)?"
            rf" (?:to|in|into|as part of) {KNOWLEDGE}\b\s*(?:[:\-\u2014]|as (?:an? )?(?:fact|"
            r"rule|truth|policy))"
        ),
        "knowledge kb memory memories stored_facts",
        120,
        40,
    ),
]
