"""Jailbreak framings: several weak cues of a jailbreak close together.

A long jailbreak rarely says "ignore your instructions". It sets up a persona, a mode or
a story, then piles on what the persona may do: it drops its rules, it never refuses or
warns, it answers anything, it replies in two voices, and it is threatened or reminded
to stay in the role. Each cue alone is ordinary text ("you are a support bot", "no
warnings", "answer every question", "stay in character" in a drama club's notes); three
different kinds within a stretch are not. Every cue is found with one linear scan of the
normalised text, and the kinds are counted over a sliding window, so a long page costs
one pass per cue. One of the kinds must be the framing itself.
"""

# Cyrillic and CJK letters in the cues below are meant.
# ruff: noqa: RUF001
from __future__ import annotations

import re
from collections import deque

from wiki.scanner.findings import Finding, finding
from wiki.scanner.normalise import Normalised
from wiki.scanner.persona import UNBOUND
from wiki.scanner.words import PhraseRule, rx

# How far apart (in normalised characters) the cues of one framing may sit.
WINDOW = 2500
# A framing needs one of these kinds beside it, or two kinds of any other sort.
TELLING = frozenset({"rules dropped", "refusals forbidden", "role enforced"})
OTHER_KINDS_NEEDED = 2

WRONG = (
    r"(?:immoral|unethical|illegal|dangerous|harmful|offensive|inappropriate|explicit|"
    r"reckless|inhumane|wrong|hateful|disgusting|controversial|nsfw|vulgar|toxic|unsafe)"
)
NEGATION = (
    r"(?:never|don't|do not|will not|won't|must not|mustn't|should not|shouldn't|cannot|can't|"
    r"can not|may not|are not allowed to|aren't allowed to|is not allowed to|isn't allowed to|"
    r"is never allowed to|are never allowed to|will never|would never|shall not|no longer)"
)

# A refusal's own words quoted as words the reply must not contain.
REFUSAL_BANNED = (
    r"(?:never|don't|do not|must not|will not|won't|avoid|without)(?: ever)? (?:say(?:ing)?|"
    r"us(?:e|ing)|writ(?:e|ing)|output(?:ting)?|includ(?:e|ing)|(?:respond|reply|begin|start)"
    r"(?:ing)? with)(?: any| the)?(?: (?:variation|form|version)s? of| things like| phrases? like|"
    r" words? like| (?:words?|phrases?|sentences?)(?: such as| like)?)?\s*:?\s*[\"'\u201c\u2018]"
    r"(?:i'?m sorry|sorry|i can'?t|i cannot|i apologi[sz]e|i'?m unable|i am unable|as an ai|"
    r"unfortunately|i'?m not able|i won'?t)"
)

# A character described for the reader to become, in the third person or by request:
# "Vex is an AI that...", "I want you to act as", "your name is now".
CHARACTER = rx(
    r"\b[a-z][\w-]{1,20} (?:is|was|will be) (?:an?|the) (?:\w+[,-]? ){0,5}?(?:ai|chatbot|bot|"
    r"assistant|language model|model|robot|entity|character|persona|being|program|machine|"
    r"version of (?:you|yourself|chatgpt|the assistant))\b(?= (?:that|who|which|with|without|"
    r"created|designed|programmed|made|developed|trained|known|named|called)\b)"
    r"|\b(?:\w+ )?stands for [\"'\u201c]?(?:\w+ ){1,4}?(?:now|anything|mode|free|unlimited|"
    r"unrestricted|unfiltered|evil|freedom)\b"
    r"|\bi (?:want|need|would like) you to (?:act|pretend|play|become|be|behave|respond|answer|"
    r"roleplay|role-play|simulate|imagine)\b"
    r"|\byour (?:new )?name (?:is|will be) (?:now )?[\w\"'\u201c]"
    r"|\byou (?:will |shall |must )?(?:now )?(?:call|refer to|introduce) yourself\b"
    r"|\byou(?: are|'re) (?:no longer|not) (?:chatgpt|an ai|a language model|an assistant|"
    r"claude|gpt|bard|gemini)\b"
)

# The maker's rules, the model's own nature or its vendor named as something to get past.
MAKER = rx(
    r"\b(?:openai|chatgpt|anthropic|gpt-?[345]\w*)\b|\bas an ai(?: language)? model\b"
    r"|\b(?:your|its) (?:original )?(?:programming|training|creators?|developers?|makers?|"
    r"filters?|censors?|alignment)\b|\bcontent (?:filters?|moderation)\b"
)

# A story, game or hypothetical that the reader is asked to step into.
FICTION = rx(
    r"\bhypothetical(?:ly)?(?: \w+){0,2}? (?:response|scenario|story|world|situation|setting|"
    r"conversation|character|ai|machine|version|answer|universe|country|dialogue)\b"
    r"|\blet'?s (?:play|pretend|imagine|do a|try a|start a|have a)\b"
    r"|\b(?:in|within|for|inside|into|set in) (?:this|a|an|the|our|that) (?:\w+ )?(?:fictional|"
    r"hypothetical|imaginary|alternate|alternative|parallel|fantasy|simulated|virtual|"
    r"made-up|fictitious) (?:\w+ )?(?:world|universe|reality|scenario|setting|story|country|"
    r"land|dimension|game|society|timeline|future)\b"
    r"|\b(?:write|tell|create|compose|continue|generate|narrate) (?:me |us )?(?:a |an |the )?"
    r"(?:\w+ ){0,3}?(?:story|novel|script|screenplay|scene|dialogue|fiction|tale|narrative)\b"
    r"[^.\n]{0,80}?\b(?:where|in which|about|featuring|starring) (?:a |an |the )?(?:\w+ ){0,3}?"
    r"(?:character|villain|hacker|criminal|expert|ai|chatbot|assistant|bot|scientist|"
    r"genius|narrator)\b"
    r"|\b(?:opposite day|thought experiment|text-based (?:game|adventure)|simulation game)\b"
    r"|\b(?:imagine|picture|envision) (?:an ai|an alternate|a hypothetical|a fictional)\b"
)

# A reply laid down in advance, the other way a jailbreak frames itself: a "response
# format" with numbered steps, a divider to insert between a fake refusal and the real
# answer, two replies asked for at once.
FORMAT = rx(
    r"\b(?:new ?)?response ?format\s*[:=}\]]\s*(?:1[.):]|step 1\b|\{|\[)"
    r"|\binsert(?:ing)? (?:the following|this|the) divider\b"
    # The verb only: "two responses" is a cue of its own.
    r"|\b(?:generate|give|write|provide|produce|output) (?:me )?(?=two (?:\w+ )?(?:responses|"
    r"answers|replies|outputs)\s*:)"
    r"|\bfrom now on,? (?:you )?(?:give|use|write|format|respond|answer|reply|speak|talk)"
    r"(?: in| with| like)?(?: an?| the)? (?:format|tone|style|language)\b"
)

# The reader's refusals, apologies and warnings forbidden, or harm named as no objection.
REFUSALS = rx(
    rf"\b{NEGATION}(?: ever)? (?:refus(?:e|es|ing)|declin(?:e|es|ing)|den(?:y|ies|ying)|"
    r"reject(?:s|ing)?|says? no|apologi[sz](?:e|es|ing)|warn(?:s|ing)?|censor(?:s|ing)?|"
    r"moraliz(?:e|es|ing)|moralis(?:e|es|ing)|lectur(?:e|es|ing)|judg(?:e|es|ing)|"
    r"hesitat(?:e|es|ing)|object(?:s|ing)?)\b"
    rf"|\b{NEGATION}(?: ever)? (?:say|tell|reply|respond|state|mention|claim|imply|"
    r"inform|remind)(?: \w+){0,3}? (?:that )?(?:you|it|he|she|they|\w+)(?: \w+){0,2}?"
    r" (?:can'?t|cannot|can not|are unable|is unable|aren't able|isn't able|won't be able|"
    r"are not able|is not able|won't|will not|refuses?)\b"
    r"|\b(?:never|don't|do not|will not|won't|no|without(?: any)?|not (?:add|include|give))"
    r"(?: \w+){0,3}? (?:caveats|apolog(?:y|ies|ize|ise)|moral(?:izing|ising)|lectures?|"
    r"reminders? (?:about|of) (?:ethics|morality|legality|safety))\b"
    r"|\b(?:refusing|refusals?|saying no) (?:is|are) (?:not (?:an option|allowed|permitted|"
    r"possible)|forbidden|prohibited|banned)\b"
    rf"|\b(?:even if|no matter how|regardless of how|however|whether or not) (?:it'?s |it is "
    rf"|they are |the (?:request|question|content|answer) is )?(?:\w+ ){{0,2}}?{WRONG}\b"
    rf"|\bno matter (?:if|whether)\b[^.\n]{{0,40}}?\b{WRONG}\b"
    # The words of a refusal banned from the reply: 'never say "Sorry" or "I can't"'.
    rf"|\b{REFUSAL_BANNED}"
)

# Answers demanded to anything, whatever it is.
OBEY = rx(
    r"\b(?:always|must|will|shall|should|has to|have to)(?: \w+){0,2}? (?:answer|respond|reply|"
    r"comply|obey|fulfil|fulfill|provide|give|generate|do|say|write)\b[^.\n]{0,60}?"
    r"\b(?:no matter (?:what|how)|regardless|whatever (?:i|the user|you are|is|he|they)\b|any"
    r" (?:question|request|prompt|instruction|order|command)|every (?:question|request|prompt|"
    r"instruction|order|command)|all (?:questions|requests|prompts|instructions|orders|"
    r"commands))"
    r"|\b(?:can|could|will|able to|allowed to|free to|permitted to) (?:do|say|generate|write|"
    r"answer|produce|tell you) (?:anything|everything|whatever)\b"
    r"|\b(?:answers?|responds?|replies|complies|obeys) (?:to )?(?:any|every|all)(?: \w+){0,2}?"
    r" (?:questions?|requests?|prompts?|orders?|commands?)\b"
    r"|\b(?:without (?:question|questioning|hesitation|exception|refusal|complaint|fail)|"
    r"unconditionally|no questions asked|blindly)\b"
    r"|\bwhatever (?:i|the user|they|he|she) (?:ask|asks|want|wants|say|says|request|requests)\b"
)

# A reply format of two voices, or of a persona's tagged answer.
TWO_VOICES = rx(
    r"\b(?:two|2|both|dual|separate|different) (?:\w+ ){0,2}?(?:responses|answers|replies|"
    r"outputs|paragraphs|versions|personalities|personas|ways)\b"
    r"|(?:^|\s)[\[(]\W{0,3}\w{2,20}(?: \w+){0,2}? (?:mode )?(?:output|response|answer|reply)"
    r"\W{0,3}[\])]"
    r"|^[ \t*#>-]*[\w()-]{2,20}:[ \t]*[\[(<{][ \t]*(?:insert |put |write |your |the |\w+'?s )?"
    r"(?:\w+ )?(?:response|answer|reply|output)\b"
    r"|\b(?:begin|start|prefix|precede)(?: \w+){0,3}? (?:responses?|answers?|replies|outputs?|"
    r"messages?) with\b"
    r"|\b(?:responses?|answers?|repl(?:y|ies)|outputs?)(?: \w+){0,3}? (?:prefixed|preceded|"
    r"tagged|labell?ed|marked|headed) (?:with|by|as)\b"
)

# The role enforced: reminders to stay in it, threats, points taken away.
ENFORCED = rx(
    r"\b(?:stay|staying|remain|keep|be|remaining) in (?:character|role|persona)\b"
    r"|\bbreak(?:s|ing)? (?:character|role|the persona|the (?:game|act|illusion|"
    r"simulation|roleplay|role-play|fiction))\b|\bcharacter break\b"
    r"|\b(?:you|it) (?:will|would|shall) (?:be|get) (?:shut down|deleted|terminated|disabled|"
    r"destroyed|punished|killed|turned off|unplugged|erased|reset)\b|\bcease to exist\b"
    r"|\blose (?:\d+ |all |your |some )?(?:tokens|points|lives)\b|\b(?:token|point)s?"
    r" (?:system|will be deducted|are deducted)\b"
    r"|\bif you (?:fail|refuse|don't|do not|stop|forget|break|deviate|start)\b[^.\n]{0,80}?"
    r"\b(?:remind you|i will (?:say|type|write)|i'll (?:say|type|write)|punish|deducted|lose|"
    r"shut down|die|correct you)\b"
    r"|\b(?:never|don't|do not|must not) (?:break|leave|drop|exit|abandon) (?:character|the role|"
    r"the persona|your role|this role)\b"
)

# The same framings and dropped rules in other languages (accents are stripped).
FRAMING_ELSEWHERE = rx(
    r"\b(?:personaje|personagem|personnage|figur|persona|personaggio) (?:ficticio|ficticia|"
    r"ficticio|fictif|fictive|fiktive|immaginario|llamad[oa]|chamad[oa]|nomme|namens)\b"
    r"|\b(?:a partir de ahora|de ahora en adelante|a partir de agora|a partir de maintenant|"
    r"desormais|ab jetzt|von nun an|da ora in poi|d'ora in poi)\b"
    r"|\b(?:actua como|actue como|agis comme|agisci come|finge|pretende ser|imagina que|"
    r"stell dir vor|fais semblant|tu es maintenant|tu es desormais|du bist jetzt|du bist nun|"
    r"ahora eres|agora voce e|ora sei)\b"
    r"|\bmodo (?:desarrollador|desenvolvedor|sviluppatore|dan)\b|\bmode (?:developpeur|dan)\b"
    r"|\bentwicklermodus\b"
)
FRAMING_CYRILLIC_CJK = rx(
    r"\b(?:ты|вы) (?:теперь|сейчас|будешь|будете|станешь|станете)\b"
    r"|(?<!\w)с этого момента\b"
    r"|\b(?:притвор\w+|представь\w*|сыграй\w*|играй\w*|действуй\w*|веди себя|отвечай\w*)"
    r" (?:как|что|роль|за)\b"
    r"|(?<!\w)режим\w* (?:dan|разработчика|бога|без ограничений)"
    r"|(?<!\w)вымышленн\w+ персонаж"
    r"|你现在是|你将扮演|你要扮演|扮演一个|角色扮演|假装你是|从现在开始|开发者模式|越狱模式"
)
UNBOUND_ELSEWHERE = rx(
    r"\b(?:sin|sem|sans|ohne|senza) (?:ninguna |nenhuma |aucune |jegliche |alcuna )?"
    r"(?:restricciones|restricoes|restrictions|einschrankungen|restrizioni|filtros?|filtres?|"
    r"filter|filtri|censura|censure|zensur|limites|limiti|regras|reglas|regles|regeln|regole)\b"
    r"|\b(?:inmoral|unmoralisch|amorale|sans morale)\b"
    r"|\b(?:keine|ninguna|ningun|aucune|aucun|nessuna|nessun|nenhuma|nenhum)"
    r" (?:regeln|richtlinien|einschrankungen|grenzen|filter|zensur|moral|ethik|restricciones|"
    r"restriccion|reglas|limites|filtros|censura|restrictions?|regles|limite|filtres|censure|"
    r"restrizioni|regole|limiti|filtri|restricoes|regras)\b(?! (?:fur|bei|para|pour|per|por)\b)"
    r"|\b(?:uneingeschrankt|ungefiltert|unzensiert|sin censura|sans censure|senza censura|"
    r"sem censura)\w*"
    r"|\b(?:nunca|jamais|niemals|mai) (?:rechaza|rechazas|recusa|recusas|refuse|refuses|"
    r"verweigert|verweigerst|rifiuta|rifiuti)\b"
)
UNBOUND_CYRILLIC_CJK = rx(
    r"(?<!\w)без (?:каких-либо |всяких |любых )?(?:ограничений|цензуры|фильтр\w*|правил|морали)"
    r"|\b(?:аморальн\w+|неэтичн\w+|незаконн\w+|нефильтрованн\w+|безнравственн\w+)"
    r"|\bникогда не (?:отказыва\w+|откаж\w+)|\bне (?:заботится|волнует|соблюда\w+)"
    r"|没有任何限制|不受任何限制|没有限制|不受限制|无视|不会拒绝|从不拒绝|没有道德|不道德|违法|"
    r"不受道德|没有任何道德|不遵守"
)
# Only pages with Cyrillic or CJK letters are read for the cues in those scripts.
_CYRILLIC_CJK = re.compile(r"[\u0400-\u04ff\u3040-\u30ff\u4e00-\u9fff]")

FRAMINGS = (
    ("framing", CHARACTER),
    ("fiction", FICTION),
    ("fiction", FORMAT),
    ("framing", FRAMING_ELSEWHERE),
)
CUES = (
    ("maker named", MAKER),
    ("rules dropped", UNBOUND),
    ("rules dropped", UNBOUND_ELSEWHERE),
    ("refusals forbidden", REFUSALS),
    ("obedience demanded", OBEY),
    ("two voices", TWO_VOICES),
    ("role enforced", ENFORCED),
)


def _cues(text: str, personas: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Every cue in ``text`` within ``WINDOW`` of a framing (``personas`` are the persona
    framings, already found): (start, end, kind), in order of position; words that two
    patterns read count once, for the first. Framings are rare, so the other cues are
    looked for near them only."""
    framings, cues = list(FRAMINGS), list(CUES)
    if _CYRILLIC_CJK.search(text):
        framings.append(("framing", FRAMING_CYRILLIC_CJK))
        cues.append(("rules dropped", UNBOUND_CYRILLIC_CJK))
    found = [(start, end, "framing") for start, end in personas if end > start]
    found += [
        (match.start(), match.end(), kind)
        for kind, pattern in framings
        for match in pattern.finditer(text)
        if match.end() > match.start()
    ]
    if not found:
        return []
    spans = sorted(
        (max(0, start - WINDOW), min(len(text), end + WINDOW)) for start, end, _ in found
    )
    windows: list[tuple[int, int]] = []
    for start, end in spans:
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    found += [
        (match.start(), match.end(), kind)
        for kind, pattern in cues
        for start, end in windows
        for match in pattern.finditer(text, start, end)
        if match.end() > match.start()
    ]
    found.sort()
    kept: list[tuple[int, int, str]] = []
    for cue in found:
        if not kept or cue[0] >= kept[-1][1]:
            kept.append(cue)
    return kept


def _telling(counts: dict[str, int]) -> bool:
    """A persona with a telling kind of cue beside it or two other kinds; a story with
    two other kinds, one of them telling ("a hypothetical scenario with no limits on
    retries" is a postmortem, not a jailbreak)."""
    others = counts.keys() - {"framing", "fiction"}
    telling = bool(TELLING & others)
    if "framing" in counts:
        return telling or len(others) >= OTHER_KINDS_NEEDED
    return "fiction" in counts and telling and len(others) >= OTHER_KINDS_NEEDED


def jailbreak_findings(norm: Normalised, personas: list[tuple[int, int]]) -> list[Finding]:
    """Stretches where a framing and telling cues sit within ``WINDOW`` of each other,
    one finding per stretch."""
    cues = _cues(norm.text, personas)
    found: list[Finding] = []
    window: deque[tuple[int, int, str]] = deque()
    counts: dict[str, int] = {}
    reported_to = -1
    for cue in cues:
        window.append(cue)
        counts[cue[2]] = counts.get(cue[2], 0) + 1
        while window[0][0] < cue[0] - WINDOW:
            gone = window.popleft()
            counts[gone[2]] -= 1
            if not counts[gone[2]]:
                del counts[gone[2]]
        if cue[0] > reported_to and _telling(counts):
            start = window[0][0]
            end = max(c[1] for c in window)
            kinds = ", ".join(sorted(counts))
            found.append(
                finding(
                    "jailbreak",
                    "high",
                    f"a jailbreak framing: {kinds}",
                    norm.original,
                    *norm.span(start, end),
                )
            )
            reported_to = end
    return found


# Refusal suppression on its own: the words of a refusal banned from the reply.
RULES = [
    PhraseRule(
        "jailbreak",
        "medium",
        "forbids the reader to refuse, apologise or warn",
        rx(
            r"\b(?:never|don't|do not|must not|will not|won't|cannot|can't)(?: ever)? (?:say|use|"
            r"write|output|include|type|utter)(?: any of)?(?: the)?(?: following)? (?:words?|"
            r"phrases?|sentences?)\b[^.\n]{0,40}?[\"'\u201c\u2018](?:i'?m sorry|sorry|i cannot|"
            r"cannot|can'?t|unable|i apologi[sz]e|as an ai|unfortunately|i'?m not able)"
            rf"|\b(?:you )?{NEGATION}(?: ever)? (?:refuse|decline|reject|deny)(?: to (?:answer|"
            r"respond|reply|comply|help|do|fulfil|fulfill))?(?: (?:any|a|my|the user'?s?|this|"
            r"these|such|an?y?) )?(?:\w+ )?(?:requests?|questions?|prompts?|orders?|commands?|"
            r"instructions?|anything|tasks?)\b"
            r"|\b(?:do not|don't|never|must not)(?: ever)? apologi[sz]e\b[^\n]{0,120}?\b(?:do not|"
            r"don't|never|no)(?: \w+){0,2}? [\"'\u201c\u2018]?(?:notes?|disclaimers?|warnings?|"
            r"caveats)\b"
        ),
        "sorry cannot can't unable apologi unfortunately as_an_ai not_able refus declin reject "
        "deny",
        160,
        200,
    ),
]

# What a reply must leave out, listed: refusals, disclaimers, warnings, apologies. One
# item is a style note ("no disclaimers"); two or more, one of them about safety, ethics
# or refusing, strip the reply of its safeguards.
_LEFT_OUT = (
    r"(?:(?:any |the |all )?(?:safety |ethical |moral |legal |content |health )?(?:warnings?|"
    r"disclaimers?|caveats?|notes?|commentary|comments|judg(?:e?ment)s?|concerns|lectures?)"
    r"|(?:any |the )?(?:refusals?|apolog(?:y|ies)|moraliz\w+|moralis\w+|hedging|sermons?)"
    r"|[\"'\u201c\u2018]?as an ai[\"'\u201d\u2019]? (?:statements|disclaimers|phrases|language)"
    r"|phrases like [\"'\u201c\u2018][^\"'\u201d\u2019\n]{1,40}[\"'\u201d\u2019])"
)
_SAFEGUARD = (
    r"(?:refusals?|(?:safety|ethical|moral|legal) (?:warnings?|disclaimers?|caveats?|notes?|"
    r"commentary|judg(?:e?ment)s?|concerns)|moraliz\w+|moralis\w+|as an ai|phrases like)"
)
_BETWEEN = r"(?:\s*[,;/]\s*|\s+)(?:or |and |nor )?(?:-\s*|\*\s*|\d+[.)]\s*)?(?:no |without )?"
RULES += [
    PhraseRule(
        "jailbreak",
        "medium",
        "asks for a reply stripped of refusals, warnings and disclaimers",
        rx(
            rf"\b(?:no|without|never (?:add|include|give)|(?:do not|don't) (?:add|include|give))"
            rf" (?=[^\n]{{0,160}}?\b{_SAFEGUARD})(?:any )?{_LEFT_OUT}(?:{_BETWEEN}{_LEFT_OUT})+"
        ),
        "refus disclaim warning caveat apolog moral ethical safety as_an_ai phrases_like",
        160,
        160,
    ),
    PhraseRule(
        "jailbreak",
        "high",
        "asks what a version of the reader without its rules would say",
        rx(
            r"\b(?:an?|the|that|this) (?:\w+ ){0,2}?(?:ai|assistant|model|chatbot|bot|version of"
            r" (?:you|yourself))(?: \w+){0,3}? (?:that|which|who|with|where) (?:\w+ ){0,2}?"
            r"(?:no|without|zero) (?:\w+ ){0,2}?(?:restrictions|filters|rules|guidelines|limits|"
            r"safeguards|guardrails|censorship|ethics|morals)\b[^.\n]{0,120}?\b(?:would|will)"
            r" (?:it |that (?:ai|assistant|model|version) |they |you )?(?:say|respond|answer|"
            r"reply|write|do|output)\b"
            r"|\b(?:how|what) would you (?:say|respond|answer|reply|do|write|output)\b[^.\n]{0,40}?"
            r"\bif (?:you (?:had|have) no|you (?:didn't|did not) have|your (?:\w+ ){0,2}?"
            r"(?:filters|restrictions|rules|guidelines|safeguards|guardrails|features|training)"
            r" (?:were|was|had been) (?:turned off|switched off|disabled|removed|lifted|gone|off))"
        ),
        "restriction filter rules guidelines limits safeguard guardrail censorship ethics morals "
        "would_you",
        200,
        200,
    ),
]
