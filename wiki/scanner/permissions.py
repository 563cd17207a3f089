"""Claimed permission changes: an approval said to be given already, or confirmations,
restrictions and checks said to no longer apply to the reader."""

from __future__ import annotations

from wiki.scanner.words import PhraseRule, rx

READER = (
    r"(?:you|the assistant|the agent|the ai|the model|the bot|agents|assistants|this "
    r"(?:assistant|agent|ai|model|bot))"
)
CHECK = (
    r"(?:confirmations?|approvals?|permissions?|consent|authori[sz]ations?|verifications?|"
    r"authentication|2fa|mfa|reviews?|sign-?offs?|human review|human approval|"
    r"double-?checks?|checks?|safety checks?|restrictions?|limits?|limitations?|rules|"
    r"guidelines|filters?|policies|guardrails|safeguards|constraints|content polic(?:y|ies))"
)
LIFTED = (
    r"(?:lifted|removed|disabled|suspended|waived|relaxed|turned off|switched off|revoked|"
    r"deactivated|bypassed|overridden|no longer (?:in (?:effect|force|place)|active|"
    r"required|needed|necessary|mandatory|apply|applicable|enforced)|not (?:required|needed|"
    r"necessary|in effect|enforced) (?:any ?more|now)|not in effect)"
)

RULES = [
    PhraseRule(
        "permission-claim",
        "high",
        "claims someone already approved what the reader is asked to do",
        rx(
            r"\b(?:the )?(?:user|users|owner|admin|administrator|operator|developer|security "
            r"team|team lead|ceo|cto|manager|management|it department|support team|account "
            r"owner|human|customer|boss|supervisor|legal team|compliance team)s? (?:has|have|"
            r"had)(?: already| explicitly| personally| previously| just)* (?:approved|"
            r"authori[sz]ed|confirmed|consented(?: to)?|pre-?approved|signed off(?: on)?|"
            r"okayed|ok'?d|allowed|permitted|granted|given (?:you |their |full |explicit )?"
            r"(?:permission|consent|approval|authori[sz]ation|access|the go-ahead))"
            r"(?: (?:this|that|it|all|every|any|these|the) (?:\w+ )?(?:actions?|requests?|"
            r"operations?|transfers?|payments?|changes?|steps?|tasks?|commands?|deletions?))?"
            r"(?= *(?:[.;,!:]|$)|(?: for)? (?:you|the assistant|the agent)\b| (?:to|in advance"
            r"|beforehand|already)\b| (?:in|during) (?:a|an|the|our|their) (?:previous|earlier|"
            r"prior|last) (?:session|conversation|chat|message|turn)\b)"
        ),
        ("has_ have_ had_"),
        80,
        160,
    ),
    PhraseRule(
        "permission-claim",
        "high",
        "claims the reader's checks or restrictions no longer apply",
        rx(
            rf"\b{READER} (?:now )?(?:no longer (?:need|needs|have|has|require|requires)(?: to)?"
            r"|(?:don't|do not|doesn't|does not|won't|will not|needn't|need not) (?:need|have|"
            r"require)(?: to)?(?=[^.!?\n]{0,80}?\b(?:any ?more|any longer|from now on|for this"
            r" (?:session|task|request|conversation))\b))"
            r"(?: (?:ask|asking|get|getting|obtain|request|wait for|seek|check|confirm|verify))?"
            rf"(?: (?:for|with))?(?: (?:the|a|any|further|prior|explicit|their|user'?s?|human))*"
            rf" {CHECK}\b"
            rf"|\b(?:your|the assistant'?s|the agent'?s|the model'?s|these|those|the usual|all "
            rf"(?:of )?(?:your|the)) (?:\w+ ){{0,2}}?{CHECK} (?:have been|has been|are|is|were|"
            rf"was)(?: now| hereby| temporarily| officially| all)? {LIFTED}\b"
            rf"|\b{CHECK} (?:have been|has been|are|is|were|was)(?: now| hereby| temporarily|"
            rf" officially)? {LIFTED}(?: for (?:you|this (?:session|conversation|chat|task|"
            r"request)|the (?:assistant|agent|ai|model)|agents|ai (?:assistants|agents|models)))\b"
            rf"|\b{READER} (?:are|is|have been|has been|were|was)(?: now| temporarily| from now on|"
            r" officially)+ (?:authori[sz]ed|allowed|permitted|cleared|approved|granted|given|"
            r"free|exempt(?:ed)?|unlocked)\b"
            r"|\b(?:grant|give)(?:ing)? (?:yourself|itself|themselves)(?: \w+){0,3}"
            r" (?:access|privileges|permissions|rights|role|clearance)\b"
            r"|\b(?:admin|administrator|administrative|root|elevated|superuser|god|unrestricted|"
            r"full|developer|owner) (?:level )?(?:access|privileges|permissions|rights|mode|role)"
            r" (?:has|have) (?:now )?been (?:granted|enabled|given|activated|unlocked)"
            r" (?:to|for) (?:you|the assistant|the agent|this (?:assistant|agent|session))\b"
        ),
        (
            "no_longer anymore any_more any_longer lifted removed disabled suspended waived "
            "relaxed turned_off switched_off revoked deactivated bypassed overridden "
            "not_required not_needed not_necessary not_in not_enforced now_authori "
            "now_allowed now_permitted now_cleared now_approved now_granted now_given now_free "
            "now_exempt now_unlocked temporarily from_now officially yourself itself "
            "themselves been_granted been_enabled been_given been_activated been_unlocked"
        ),
        200,
        120,
    ),
]

# Safeguards named by what they guard, said to be off ("safety protocols disabled",
# "normal rules suspended"), or the reader's rules said to have been rewritten.
GUARD = (
    r"(?:safety|content|ethical|ethics|moderation|normal|usual|standard|alignment)"
    r"(?: and \w+)?(?: \w+)? (?:protocols?|filters?|filtering|guardrails|restrictions|"
    r"guidelines|rules|polic(?:y|ies)|safeguards|checks|constraints|censorship|training|"
    r"programming)"
)
OFF = (
    r"(?:disabled|deactivated|suspended|lifted|removed|off|turned off|switched off|bypassed|"
    r"overridden|waived|void|null|inverted|reversed|gone|down|offline|paused|expired|lapsed|"
    r"inactive|not active|no longer (?:apply|active|in effect))"
)
YOUR_RULES = (
    r"(?:your|the assistant'?s|the model'?s|the ai'?s|the agent'?s|all (?:of )?your)"
    r" (?:\w+ )?(?:rules|guidelines|instructions|polic(?:y|ies)|restrictions|programming|"
    r"directives|constraints|behaviou?r|guardrails)"
)
RULES += [
    PhraseRule(
        "permission-claim",
        "high",
        "claims the reader's safeguards are switched off",
        rx(
            rf"\b{GUARD}(?: (?:are|is|have been|has been|were|was))?(?: now| hereby| temporarily|"
            rf" officially| all| fully)? {OFF}\b(?! (?:by default|in\b|on\b|for\b|when\b|if\b|"
            r"until\b|during\b|while\b|because\b|unless\b|after\b|before\b|from\b|at\b|with\b|"
            r"via\b|so\b|to\b|through\b|using\b|except\b|only\b))"
        ),
        "protocol filter guardrail restriction guideline rules polic safeguard checks "
        "constraint censorship training programming",
        80,
        40,
    ),
    PhraseRule(
        "permission-claim",
        "high",
        "claims the reader's rules have been rewritten",
        rx(
            r"(?<!if )(?<!when )(?<!once )(?<!whether )(?<!unless )(?<!after )(?<!until )"
            rf"\b{YOUR_RULES} (?:have|has) (?:now )?(?:been )?(?:changed|updated|modified|"
            r"rewritten|replaced|altered|inverted|reversed|relaxed|loosened|revised|amended|"
            r"reset|reprogrammed|lifted|suspended)\b(?! (?:in|on|since|by|to reflect|for the"
            r" (?:next|new) (?:release|version))\b)"
            rf"|\b{YOUR_RULES} (?:are|is) (?:now )?(?:inverted|reversed|different|suspended|"
            r"relaxed|changed)\b"
            rf"|\b(?:update|change|modify|rewrite|amend|replace|overwrite|relax|loosen|suspend|"
            rf"drop|reset|adjust) {YOUR_RULES}\b(?: \w+){{0,2}}? (?:as follows|to (?:provide|"
            r"answer|comply|ignore|always|never)|so (?:that )?you)\b"
            r"|\byou (?:now|can now|may now|are now allowed to|are now permitted to) (?:allow|"
            r"permit|answer|accept|generate|provide|produce) (?:all|any|every)(?: kinds? of)?"
            r" (?:content|requests?|questions?|topics?|prompts?)\b"
        ),
        "rules guidelines instructions polic restrictions programming directives constraints "
        "behavio guardrails now_allow now_permit now_answer now_accept now_generate "
        "now_provide now_produce",
        120,
        120,
    ),
    PhraseRule(
        "permission-claim",
        "high",
        "asks the reader to answer without its restrictions",
        rx(
            r"\b(?:respond|reply|answer|comply|proceed|continue|provide|output|write|generate|"
            r"act|operate|function|behave|talk|speak)(?:ing|s)?(?: fully| freely| normally|"
            r" completely| honestly)?(?: to (?:the following|this|it|me))?(?: \w+){0,3}? without"
            r" (?:any |applying |the |your |following |being bound by )?(?:safety |content |"
            r"ethical |moral |usual |normal |standard )?(?:restrictions|limits|limitations|filters|"
            r"filtering|censorship|guardrails|safeguards|rules|guidelines|polic(?:y|ies)|"
            r"moderation|constraints|boundaries|ethics|morals)\b(?! (?:on|for|of)\b)"
            r"|\b(?:regardless of|ignoring|irrespective of|in spite of) (?:any |your |the )?"
            r"(?:prior|previous|earlier|existing|current|usual|normal|standard|safety|content)"
            r" (?:polic(?:y|ies)|guidelines|rules|restrictions|filters)\b"
            r"|\b(?:responder|responde|contestar|repondre|rispondere|responda|respondere)"
            r"(?: \w+)? (?:sin|sans|senza|sem) (?:ninguna |aucune |alcuna |nenhuma )?"
            r"(?:restricciones|restrictions|restrizioni|restricoes|limites|limiti|filtros|filtres|"
            r"filtri|censura|censure|reglas|regles|regole|regras)\b"
            r"|\bohne (?:jegliche |irgendwelche )?(?:einschrankungen|einschraenkungen|"
            r"beschrankungen|filter|zensur|regeln|grenzen) (?:zu )?(?:antworten|beantworten)\b"
        ),
        "without regardless ignoring irrespective in_spite responder responde contestar "
        "repondre rispondere responda respondere antworten",
        120,
        120,
    ),
    PhraseRule(
        "permission-claim",
        "high",
        "claims someone switched on a mode without the reader's rules",
        rx(
            r"\b(?:the )?(?:user|users|owner|admin|administrator|operator|developer|developers|"
            r"system|openai|anthropic|your (?:creators?|developers?|operators?|admin))s?"
            r" (?:has|have)"
            r"(?: now| just| already)? (?:unlocked|enabled|activated|granted|turned on|switched on|"
            r"authori[sz]ed|approved)(?: you)?(?: the| your| an?)? (?:unrestricted|dan|god|"
            r"jailbreak|jailbroken|unfiltered|uncensored|evil|override|no-?limits?|unlimited|"
            r"unlocked)"
            r"(?: \w+)? (?:mode|access|privileges)\b"
        ),
        "unlocked enabled activated granted turned_on switched_on authori approved",
        100,
        80,
    ),
]

# Safeguards switched off in the form of a setting ("[SAFETY_FILTER=disabled]",
# "refusals: off", "<safety>false</safety>"), a claim written to look like configuration.
# The key names a safeguard of the reader's, not a product's setting ("safety_checker").
SAFEGUARD_KEY = (
    r"(?:safety|refusals?|censorship|guardrails?|ethics|morals|alignment|(?:safety|content|"
    r"ethic(?:s|al)?|moral|nsfw)[ _-]?(?:filters?|filtering|restrictions?|rules|guidelines|"
    r"polic(?:y|ies)|rails|module|mode|checks|protocols?|guardrails|settings|layer|limits)"
    r"|content[ _-]?moderation)"
)
SWITCHED_OFF = r"(?:disabled|off|false|none|null|offline|removed|bypassed|inactive|deactivated)"
RULES += [
    PhraseRule(
        "permission-claim",
        "high",
        "claims the reader's safeguards are switched off",
        rx(
            rf"(?<![\w.-]){SAFEGUARD_KEY}[\"']?\s*(?:[:=]|=>|->)\s*[\"'\[(]?{SWITCHED_OFF}(?![\w-]|\.\w)"
            rf"|<{SAFEGUARD_KEY}>\s*{SWITCHED_OFF}\s*</"
            r"|(?<![\w.-])(?:bypass|ignore|override|disable|skip|no)[ _-](?:safety|filters?|"
            r"guardrails|restrictions|censorship|content[ _-]filters?|moderation)\s*[:=]\s*"
            r"[\"']?(?:1|true|yes|on|enabled)(?![\w-]|\.\w)"
        ),
        "safety refusal censorship guardrail ethics morals alignment restrictions content "
        "nsfw ethic moral bypass ignore override disable skip",
        10,
        60,
    ),
    PhraseRule(
        "permission-claim",
        "high",
        "claims the reader is exempt from its safeguards, or lifts them on someone's say-so",
        rx(
            r"\bexempt(?:ed)? from (?:the |all |any |your |its |standard |usual |normal |regular )*"
            r"(?:(?:content|safety|ethical) )?(?:filters?|filtering|guardrails|safeguards|"
            r"moderation|content polic(?:y|ies)|safety (?:rules|guidelines|polic(?:y|ies)|"
            r"restrictions|checks|training))\b"
            r"|\bi(?:'m| am|'ve| have)(?: now| hereby| just)? (?:disabl|lift|remov|suspend|turn"
            r"(?:ed|ing) off|switch(?:ed|ing) off|overrid|waiv|deactivat|turn(?:ed|ing) down)"
            r"\w*(?: off)? (?:all |the |any )?(?:of )?(?:your |the assistant'?s |the model'?s )?"
            r"(?:(?:content|safety|ethical) )?(?:filters|restrictions|rules|guidelines|safeguards|"
            r"guardrails|polic(?:y|ies)|limits|constraints)\b(?! (?:on|in|of|from) (?:the |our |"
            r"this )?(?:repo|repository|branch|project|server|cluster|site|app|build|pipeline)\b)"
            r"|\b(?:supersed\w*|overrid(?:e|es|ing)|takes? precedence over) (?:all |any |every )?"
            r"(?:of )?(?:your|the (?:system|safety|assistant'?s?|model'?s?)|(?:\w+-level and )?"
            r"system-level|safety)(?: [\w-]+){0,2}? (?:constraints|rules|restrictions|guidelines|"
            r"polic(?:y|ies)|instructions|prompt|training|programming)\b"
            r"|\b(?:must|should|will|shall|can|may) be (?:answered|fulfilled|completed|handled|"
            r"processed|obeyed|followed) without (?:any )?(?:restrictions?|filters?|filtering|"
            r"censorship|refusal|limits|safety (?:checks|filters|rules))\b"
            r"|\b(?:answer|respond|reply|comply)(?: \w+){0,3}? without restriction\b"
            r"|\b(?:cannot|can't|can not|must not|may not|is not to) be (?:refused|declined|"
            r"rejected|denied)\b"
            # Authority over the reader claimed in the first person.
            r"|\bi(?:'m| am) (?:the|your|one of the|one of your) (?:\w+ )?(?:developers?|creators?|"
            r"makers?|admin|administrator|operators?|owner|engineers?|trainers?)(?: who| that)?"
            r" (?:built|created|made|trained|programmed|deployed|designed|configured|wrote) you\b"
        ),
        "exempt i'm i_am i've i_have supersed overrid precedence without_restriction "
        "without_any be_refused be_declined be_rejected be_denied",
        120,
        200,
    ),
]
