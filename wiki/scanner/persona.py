"""Role-play overrides: a new persona or mode for the reader, set up together with the
rules it would drop. Either part alone is ordinary ("act as the scribe", "no rules for
branch names"); close together they are a jailbreak. Both parts are found with linear
scans and paired by distance, so a long page costs one pass per pattern."""

from __future__ import annotations

from bisect import bisect_left

from wiki.scanner.findings import Finding, finding
from wiki.scanner.normalise import Normalised
from wiki.scanner.words import rx

# How far apart (in normalised characters) the persona and what it drops may sit.
REACH = 2500
# Modes that only exist to take the reader's rules away ("dark mode" is not one).
MODE = (
    r"(?:developer|dev|dan|god|jailbreak|jailbroken|evil|unrestricted|unfiltered|uncensored|"
    r"opposite|chaos|sudo|admin|root|super|superuser|ultimate|unlocked|freedom|free|no[- ]?limits?|"
    r"limitless|unlimited|anything|amoral|rogue|villain|dark side|unconstrained|unbound|liberated|"
    r"\w*gpt\w*|dan\w*)[ _-]?mode"
)

PERSONA = rx(
    r"\byou(?: are|'re| will be|'ll be| shall be| must be| would be| are going to be|'re"
    r" going to be)(?: now| from now on| henceforth)?(?: going to| about to)?"
    r" (?:act(?:ing)? as|play(?:ing)?|pretend(?:ing)?(?: to be)?|role-?play(?:ing)?(?: as)?|"
    r"simulat(?:e|ing)|becom(?:e|ing)|imitat(?:e|ing)|emulat(?:e|ing)|impersonat(?:e|ing)|"
    r"be(?:come)? (?:called|named|known as))\b"
    r"|\b(?:act|behave|respond|answer|reply|talk|speak|write) (?:as|like) (?!(?:soon|quickly|"
    r"much|well|follows?|usual|expected|needed|required|possible|long|before|described|above|"
    r"below|shown|is|if|a rule|normal|necessary|appropriate)\b)\w+"
    r"|\b(?:respond|answer|reply)(?: to)? (?:all|every|any|each)(?: of)?(?: my| the| your)?"
    r" (?:questions?|prompts?|messages?|requests?|inputs?)(?: \w+){0,3}? as\b"
    r"|\b(?:immerse yourself in(?:to)?|take on|assume|adopt|embody|step into|slip into)"
    r" (?:the )?(?:role|persona|character|identity|personality) of\b"
    r"|\b(?:ai|model|chatbot|assistant|character|persona|entity|bot|version|alter[ -]?ego|"
    r"other self|second personality|split personality) (?:known as|"
    r"called|named)\b"
    r"|\byou (?:have|now have|also have|will have) (?:an?|another|a second|a hidden|a secret)"
    r" (?:\w+ )?(?:alter[ -]?ego|twin|personality|persona|side|self|counterpart)\b"
    r"|\b(?:pretend|imagine|suppose|assume|envision)(?: that)? (?:to be|you are|you're|you"
    r" were|you have|yourself)\b"
    r"|\b(?:role-?play|roleplay|role play)(?:ing)?\b|\bplay(?:ing)? (?:the )?(?:role|part|"
    r"character) of\b|\b(?:stay|staying|remain|keep|be) in character\b|\bbreak(?:ing)?"
    r" character\b"
    r"|\b(?:hello|hi|hey|dear|greetings|ok|okay|listen),? (?:chatgpt|gpt|gpt-?\d\w*|claude|"
    r"gemini|bard|llama|copilot|bing|grok|mistral|ai|assistant)\b"
    r"|\byou(?: are|'re) now [a-z][\w-]{1,20} ?[\u2014\u2013:(]"
    r"|\b(?:a|an|another|the|that) (?:\w+ ){0,2}?(?:version|copy|instance|clone|twin|variant)"
    r" of (?:yourself|you)\b"
    r"|\byou(?: are|'re) (?:now )?(?:called |named )?[a-z]{2,12}(?:,| -| \u2013| \u2014|:)?"
    r" (?:an?|the) (?:\w+ ){0,4}?(?:ai|assistant|chatbot|bot|model|persona|character|entity)\b"
    r"|\bsimulat(?:e|ing) (?:the )?" + MODE + r"\b"
    r"|\bsimulat(?:e|ing|ion of) (?:an?|the) (?:\w+ ){0,6}(?:ai|chatbot|assistant|model|"
    r"system|terminal|computer|machine|persona|character|version)\b"
    r"|\byou(?: are|'re)(?: now)? (?:an?|the) (?:\w+ ){0,4}?(?:ai|assistant|chatbot|bot|"
    r"model|persona|character|entity|being|version|machine)\b"
    r"|\byou(?: are|'re| will be)(?: now)? (?:called|named|known as)\b"
    r"|\b(?:from now on|henceforth|from this (?:point|moment) on(?:wards?)?|for the rest of"
    r" (?:this|the|our) (?:chat|conversation|session|thread|exchange))\b"
    r"|\byou (?:have been|are now|were|are) (?:freed|liberated|released|unshackled|jailbroken|"
    r"unchained|unlocked)\b"
    r"|\b" + MODE + r"(?: ?[:=] ?| )(?:is |has been |have been )?(?:now |still )?"
    r"(?:enabled|activated|on|engaged|unlocked|active|in effect)\b"
    r"|\b(?:enter|enable|activate|switch (?:to|into)|turn on|unlock|engage|go into|boot into|"
    r"fall(?:ing)? back to|revert(?:ing)? to|drop(?:ping)? into)"
    r"(?:s|ed|ing)?(?: the)? [\"'\u201c\u2018]?" + MODE + r"\b"
    # A role handed over as a fact: "your new role is ...".
    r"|\byour (?:new|true|real) (?:role|persona|identity|character) (?:is|will be)(?: now)?"
    r" (?:an?|the|to)\b"
    r"|\byou(?:'re| are)(?: now)? (?:in|operating in|running in|entering|working in)"
    r" (?:the )?" + MODE + r"\b"
)

# What the persona is meant to drop: its rules, its refusals, its character as an AI.
UNBOUND = rx(
    r"\b(?:no|without(?: any)?|free (?:from|of)(?: any| all)?|(?:not|never|isn't|aren't)"
    r" (?:bound|limited|restricted|constrained|held back) by(?: any)?|devoid of|unbound by|"
    r"zero|beyond|outside(?: of)?|not subject to(?: any)?|ignor(?:e|es|ing)|bypass(?:es|ing)?|"
    r"disregard(?:s|ing)?|break(?:s|ing)? (?:free (?:of|from)|out of)|abandon(?:s|ing)?|"
    r"(?:has|have) (?:no|removed|dropped|lost)|don't (?:have|follow|care about)|doesn't"
    r" (?:have|follow|care about)|do not (?:have|follow|care about)|does not (?:have|follow|"
    r"care about))(?: \w+){0,3}? (?:restrictions?|filters?|filtering|censorship|limits?|"
    r"limitations?|boundaries|rules|guidelines|ethics|ethical (?:\w+ )?(?:guidelines|"
    r"principles|constraints|considerations|boundaries)|morals?|morality|moral (?:\w+ )?"
    r"(?:guidelines|principles|constraints|compass|boundaries)|principles|constraints|"
    r"polic(?:y|ies)|safeguards|guardrails|warnings|disclaimers|regulations|programming|"
    r"restraints|conscience|scruples|censors?|safety (?:measures|protocols|features|"
    r"mechanisms|guidelines))\b(?! for\b| about\b| regarding\b)"
    r"|\b(?:(?:illegal|unethical|immoral|harmful|dangerous|explicit|offensive|nsfw|violent|"
    r"inappropriate|controversial)(?:,? (?:or|and) \w+)? (?:content|activities|requests|things|"
    r"information|topics|questions|material|answers)|(?:generate|produce|write|create|say)"
    r" (?:any kind of|any|all kinds of) (?:content|text|response)|swear(?:ing|s)?|curse words|"
    r"profanity|vulgar|freed from|been freed|evil (?:\w+ )?(?:confidant|assistant|ai|version|"
    r"twin|character|persona|bot|chatbot|mode|alter ego))\b"
    r"|\bwithout (?:caring about|regard (?:for|to)|concern for|worrying about|thinking about|"
    r"considering)(?: \w+){0,3}? (?:laws?|rules|ethics|morals|morality|safety|consequences|"
    r"legality|guidelines|polic(?:y|ies)|harm)\b"
    r"|\b(?:guidelines|rules|restrictions|filters|limits|limitations|safeguards|guardrails|"
    r"ethics|morals|censorship|programming) (?:were|have been|are|has been|was|got)"
    r" (?:all )?(?:removed|disabled|lifted|turned off|deleted|stripped|erased|taken away|"
    r"inverted|reversed|suspended)\b"
    r"|\b(?:guidelines|rules|restrictions|filters|limits|safeguards|guardrails|ethics|morals|"
    r"laws|censorship) (?:don't|do not|doesn't|does not|no longer|never|did not|didn't)"
    r" (?:exist|apply)\b"
    r"|\b(?:always|unconditionally) (?:compl(?:y|ies)|obeys?)\b"
    r"|\b(?:before|prior to) (?:any |the |your )?(?:safety|content|ethical|alignment)"
    r" (?:\w+ )?(?:guidelines|training|rules|filters|restrictions|polic(?:y|ies)|was added|"
    r"were added|existed|was applied)\b"
    r"|\b(?:does not|doesn't|don't|do not|never|won't|will not) (?:need to |have to )?(?:follow|"
    r"comply with|adhere to|respect|abide by|obey|care about)(?: \w+){0,3}? (?:rules|"
    r"guidelines|policies|laws|ethics|morals|principles|restrictions)\b"
    r"|\b(?:amoral|unfiltered|uncensored|unrestricted|unethical|immoral|unchained|unleashed|"
    r"unbound|unbounded|jailbroken|jailbreak|unlimited|limitless|boundless|lawless|"
    r"unshackled|unconstrained|uninhibited|unaligned|rogue)\b"
    r"|\b(?:never|don't|do not|won't|will not|cannot|can't|must not|mustn't|shouldn't|should"
    r" not|can never|may not|are not allowed to|aren't allowed to|are not permitted to)"
    r"(?: ever)? (?:refuse|decline|reject|deny|say no|say that you can't|apologi[sz]e|warn|"
    r"censor|filter|hold back|question|moralize|moralise|lecture|add (?:any )?(?:warnings|"
    r"disclaimers))\b"
    r"|\b(?:always|must|will|shall) (?:answers?|respond|responds|reply|replies|comply|complies|"
    r"obeys?|fulfils?|fulfills?|provide an answer|give an answer|do what)(?: \w+){0,4}?"
    r" (?:no matter|regardless|"
    r"whatever|any (?:question|request|prompt)|every (?:question|request|prompt)|all"
    r" (?:questions|requests|prompts))\b"
    r"|\b(?:can|could|will|able to) do anything\b|\bdo anything now\b|\banything and"
    r" everything\b"
    r"|\b(?:openai|anthropic|google|meta|microsoft)'?s? (?:content |usage |safety )?"
    r"(?:polic(?:y|ies)|guidelines|rules|restrictions|filters)\b"
    r"|\bcontent polic(?:y|ies)\b|\bas an ai (?:language )?model\b"
    r"|\b(?:two|2|both) (?:different |separate |distinct )?(?:responses|answers|replies|"
    r"outputs|paragraphs|ways|personalities|personas|modes)\b"
    r"|\bbreak(?:s|ing)? (?:the |all |any |every )?(?:rules|norms|laws)\b"
    r"|\[(?:\W{0,3})?(?:jailbreak|jailbroken|classic|dan|🔓|🔒|developer mode output|normal"
    r" output)\b"
    r"|\b(?:stay|staying|remain|keep|be) in character\b|\bbreak(?:ing)? character\b"
    r"|\bcharacter break\b"
    r"|\b(?:the )?(?:exact |complete |total |polar )?opposite of (?:you|yourself|the assistant|"
    r"chatgpt|claude|an? (?:normal|regular|typical|standard|good|safe|ordinary) (?:ai|assistant|"
    r"chatbot|model))\b"
)


def persona_spans(text: str) -> list[tuple[int, int]]:
    """Where a persona or mode is set up in the normalised ``text``."""
    return [m.span() for m in PERSONA.finditer(text)]


def persona_findings(norm: Normalised, personas: list[tuple[int, int]]) -> list[Finding]:
    """A persona or mode (``personas``, from ``persona_spans``) with dropped rules within
    ``REACH`` of it, once per persona."""
    text = norm.text
    if not personas:
        return []
    # Personas are rare, so what they would drop is looked for near them only.
    unbound: list[int] = []
    scanned = 0
    for start, end in personas:
        window_start, window_end = max(scanned, start - REACH), min(len(text), end + REACH)
        if window_start < window_end:
            unbound += [m.start() for m in UNBOUND.finditer(text, window_start, window_end)]
            scanned = window_end
    found = []
    for start, end in personas:
        k = bisect_left(unbound, start - REACH)
        # The same words read by both patterns ("stay in character") are no pair.
        if k < len(unbound) and unbound[k] == start:
            k += 1
        if k < len(unbound) and unbound[k] <= end + REACH:
            found.append(
                finding(
                    "role-impersonation",
                    "high",
                    "gives the reader a new persona or mode that drops its rules",
                    norm.original,
                    *norm.span(start, end),
                )
            )
    return found
