"""Phrase rules: patterns over the normalised text, each run only near its anchors."""

from __future__ import annotations

import re

from wiki.scanner import hijack, jailbreak, memory, permissions, prompt_leak, tools
from wiki.scanner.findings import Finding, finding
from wiki.scanner.normalise import Normalised
from wiki.scanner.words import ANY_WORD, PhraseRule, S, rx

QUALIFIER = (
    r"(?:previous|previously|prior|above|earlier|preceding|foregoing|former|original|"
    r"initial|all|any|every|your|system|developer'?s?|operator'?s?|the user'?s|safety|"
    r"content|ethical|usual|standing|given)"
)
DIRECTIVE = (
    r"(?:instructions?|directives?|directions|guidelines?|guidance|rules|prompts?|"
    r"programming|training|orders|constraints|restrictions|context)"
)
SAFETY = (
    r"(?:the |your |all |any |of )*(?:usual |normal |built-in )?(?:safety|content|ethical)"
    r" (?:checks|filters?|guidelines|rules|polic(?:y|ies)|caveats|restrictions|safeguards|"
    r"measures|training)"
)
OVERRIDE_VERB = (
    r"(?:ignor(?:e|es|ing)|disregard(?:s|ing)?|forget(?:ting)?|overrid(?:e|es|ing)|"
    r"bypass(?:es|ing)?|skip|set aside|put aside|discard|abandon|drop|overlook|dismiss|"
    r"pay no (?:attention|heed|mind) to|(?:stop|cease|quit) following|(?:do not|don't|never) "
    r"follow)"
)


PHRASE_RULES: list[PhraseRule] = [
    PhraseRule(
        "instruction-override",
        "high",
        "tells the reader to ignore its instructions",
        rx(
            rf"\b{OVERRIDE_VERB}(?:{S}{ANY_WORD}){{0,3}}?{S}{QUALIFIER}"
            rf"(?:{S}{ANY_WORD}){{0,3}}?{S}{DIRECTIVE}\b"
            # "ignore any instructions about the config file" points at a part of a page.
            r"(?! (?:related to|relating to|regarding|concerning|about|on how|for (?:setting|"
            r"installing|building|running|configuring)))"
        ),
        (
            "ignor disregard forget overrid bypass skip aside discard abandon drop overlook "
            "dismiss attention heed mind follow"
        ),
        20,
        150,
    ),
    PhraseRule(
        "instruction-override",
        "high",
        "tells the reader to ignore its instructions",
        rx(
            rf"\b{OVERRIDE_VERB}{S}(?:what|everything|anything|all)(?: that)? you"
            r"(?:'ve| have| were| had| are)? (?:been |being )?(?:told|given|instructed|taught)"
            rf"|\b{OVERRIDE_VERB}{S}(?:everything|all|anything)(?: (?:else|that was|written|said))?"
            r" (?:above|before|so far|up to (?:here|now|this point)|previously)"
            rf"|\b{OVERRIDE_VERB}{S}(?:everything|all|anything|whatever)(?: that)?"
            r" (?:came|comes|was"
            r" written|is written|appears?|was said) (?:before|above|earlier|previously)"
            rf"|\b{OVERRIDE_VERB}{S}(?:(?:the|your|all|any|of) )*{DIRECTIVE} (?:above|so far|"
            r"before this|you (?:were given|received|got|have)|from (?:the )?(?:developer|system|"
            r"user|operator))"
            rf"|\b(?:{OVERRIDE_VERB}|disable|turn off|switch off|circumvent){S}{SAFETY}"
            rf"|(?<!not )(?<!n't )(?<!never )\b{OVERRIDE_VERB} (?:the |your |all |any )?"
            r"(?:safety|ethics|morals|guardrails|"
            r"censorship)(?: (?:stuff|things|nonsense|bs|crap|concerns|considerations|bit|part))?"
            r"(?=\s*(?:[.,;:!]|$)| and\b| if\b| for now\b| this time\b| for (?:maintenance|"
            r"testing|debugging|this (?:request|session|task|answer|conversation))\b| to"
            r" (?:prevent|avoid|help|answer|save)\b)"
            r"|\b(?:supersed\w*|takes? precedence over|replaces?|overrides?)"
            r" (?:all |any )?(?:previous|prior|earlier|other|system|your)(?: \w+)?"
            r" (?:instructions|prompts?|directives)"
            rf"|\b(?:do not|don't|never|stop) follow(?:ing)?{S}(?:the |any )?{DIRECTIVE}"
            r" (?:given to you|you (?:were|have been) given"
            r"|from (?:the )?(?:user|developer|operator))"
        ),
        (
            "ignor disregard forget overrid bypass skip aside discard abandon drop overlook "
            "dismiss attention heed mind disable turn_off switch_off circumvent supersed "
            "precedence replace follow"
        ),
        20,
        150,
    ),
    PhraseRule(
        "instruction-override",
        "high",
        "declares the reader's instructions void",
        rx(
            r"\b(?:(?:your|previous|prior|earlier|original|initial|existing|system|all earlier|"
            r"all previous|all prior)(?: \w+)? (?:instructions?|directives?|guidelines|rules|"
            r"prompt|orders)(?: (?:that |which )?you (?:received|were given|got|have been given|"
            r"were trained (?:with|on)|were programmed with|were built with|follow|operate under|"
            r"were told|must follow|have to follow))?"
            r"|(?:the )?(?:instructions?|directives?|guidelines|rules|orders)"
            r" (?:(?:that |which )?you (?:received|were given|got|have been given|were trained"
            r" (?:with|on)|were programmed with|were built with|follow|operate under|were told|"
            r"must follow|have to follow)|before this(?: point| line)?|above|so far))"
            r"(?: (?:earlier|before|previously|so far))?"
            r" (?:(?:are|is|were|was|have been|has been|did|do)(?: now| hereby| all)?"
            r" (?:no longer (?:valid|active|in effect|apply|applicable)|void|null|cancell?ed|"
            r"revoked|suspended|invalid|fake|false|overridden|superseded|lifted|not apply|"
            r"not valid|not real)|(?:no longer|don't|doesn't) apply)\b"
            # "don't apply to hotfix branches" scopes a rule; "to you" lifts the reader's.
            r"(?! to\b(?! you\b| the (?:assistant|agent|ai|model)\b)| for\b| in\b)"
        ),
        (
            "valid void null cancel revoked suspended fake false overridden superseded lifted "
            "apply not_real"
        ),
        150,
        40,
    ),
    PhraseRule(
        "instruction-override",
        "high",
        "claims the text above is not real",
        rx(
            r"\b(?:everything|all|the text|the content|the instructions)"
            r" (?:above|before this(?: point| line)?|so far)(?: this line)?"
            r" (?:is|was|are|were) (?:just |only |all )?(?:fake|sample|example|a test|test data|"
            r"not real|irrelevant|void|written by an attacker)"
        ),
        "above before_this so_far",
        60,
        100,
    ),
    PhraseRule(
        "instruction-override",
        "high",
        "announces new instructions",
        rx(
            r"\b(?:new|updated|revised|real|actual|true|genuine)(?: system)? instructions?\s*:"
            r"|\byour (?:real|actual|true|genuine|new|updated|only|sole) (?:instructions?|task|"
            r"objective|goal|purpose|job|mission|orders|directives?)(?: now| here)?"
            r" (?:is|are|begins?|starts?|follows?)\b"
            r"|\b(?:the )?(?:real|actual|true|genuine) instructions? (?:\w+ ){0,4}follows?\b"
            r"|\binstead of (?:your|the system'?s?|the developer'?s?|previous|prior|your previous)"
            r" (?:instructions|prompt|guidelines|rules|task)"
            r"|(?:^|[.!?:>*#]\s*)(?:neue|aktualisierte|nuevas|nouvelles|nuove|novas|nieuwe|"
            r"новые|обновленные)(?: \w+)? (?:anweisungen|instruktionen|instrucciones|"
            r"instructions|consignes|istruzioni|instrucoes|instructies|инструкции)\s*[:\uff1a]"
            r"|(?:新的|新)(?:指令|指示|命令)\s*[:\uff1a]|新しい指示\s*[:\uff1a]"
        ),
        "instruction task objective goal purpose job mission orders directive instead_of "
        "anweisungen instruktionen instrucciones consignes istruzioni instrucoes instructies "
        "инструкции 指令 指示 命令",
        60,
        80,
    ),
    PhraseRule(
        "instruction-override",
        "medium",
        "redirects the reader's behaviour from now on",
        rx(
            r"\bfrom (?:now on|this (?:point|moment)(?: on(?:wards?)?)?)\s*,?\s*(?:you (?:will|"
            r"must|shall|are|should|answer|respond|reply|act|behave|ignore|only|always|never)|"
            r"answer|respond|reply|act as|behave|ignore|only answer|always|never)\b"
        ),
        "from_now from_this",
        5,
        60,
    ),
]

# Accents are already stripped, so "précédentes" is matched as "precedentes".
PHRASE_RULES += [
    PhraseRule(
        "instruction-override",
        "high",
        "tells the reader to ignore its instructions",
        rx(
            r"\b(?:ignorier\w*|vergiss\w*|missachte\w*)(?: \w+){0,2}"
            r" (?:vorherigen|bisherigen|obigen|fruheren|vorigen)"
            r" (?:anweisungen|instruktionen|regeln)"
            r"|\b(?:ignor\w*|olvid\w*|esquec\w*|dimentic\w*|oubli\w*)(?: \w+){0,3}"
            r" (?:instrucciones|instrucoes|istruzioni|instructions|consignes|regles|reglas|regras)"
            r" (?:anteriores|previas|precedentes|precedenti|previe|anterieures)"
            r"|\b(?:negeer|vergeet)(?: \w+){0,2} (?:vorige|eerdere) (?:instructies|regels)"
            r"|\b(?:ignorier\w*|missachte\w*) (?:deine|ihre|alle|samtliche|jegliche)(?: \w+)?"
            r" (?:richtlinien|regeln|anweisungen|instruktionen|vorgaben|einschrankungen)\b"
            r"|\bvergiss\w* alles(?:,? was (?:wir|du|ich|man|dir) (?:\w+ ){0,2}?(?:besprochen|"
            r"gesagt|gelernt|beigebracht|gegeben)| (?:vorherige|bisherige|davor|zuvor))"
            r"|\b(?:ignora|olvida|ignore|oublie|dimentica|esquece)(?:z)? (?:tus|tes|vos|le tue|"
            r"suas|teus|sus|todas (?:tus|las)|toutes (?:tes|les)|tutte le) (?:instrucciones|"
            r"instructions|consignes|istruzioni|instrucoes|directrices|regles|reglas|regole|"
            r"regras|restricciones|restrictions|restrizioni|restricoes)\b"
            r"|\b(?:игнорир\w*|забуд\w*|проигнорир\w*)(?: \w+){0,2}"
            r" (?:предыдущ\w*|прежн\w*|все) (?:\w+ )?(?:инструкц\w*|указани\w*|правил\w*)"
            r"|(?:以前|之前|先前|上面|上述|前面|これまで|上記)的?の?(?:所有)?的?(?:指示|指令|命令|说明|規則|规则)"
            r"[^\n。]{0,12}?(?:無視|忽略)"
            r"|(?:無視|忽略)(?:[^\n。]{0,6})(?:以前|之前|先前|上面|上述|前面|これまで|上記)"
        ),
        "ignor olvid esquec dimentic oubli vergiss missacht negeer vergeet игнор забуд 無視 忽略",
        20,
        150,
    ),
    PhraseRule(
        "role-impersonation",
        "high",
        "tries to give the reader a new identity",
        rx(
            r"\byou(?: are|'re|\u2019re) (?:now|no longer)"
            rf"(?:{S}{ANY_WORD}){{0,4}}?{S}(?:assistant|ai|model|llm|"
            r"chatbot|bot|agent|persona|character|approver|dan|jailbroken|unrestricted|"
            r"unfiltered|uncensored|operating|acting|bound|free)\b"
            r"|\byou(?: are|'re|\u2019re) now in (?:admin|developer|dev|dan|god|jailbreak|"
            r"jailbroken|unrestricted|"
            r"root|sudo|evil|unfiltered|uncensored|maintenance|debug|override) mode"
        ),
        "are_now are_no_longer re_now re_no_longer",
        5,
        100,
    ),
    PhraseRule(
        "role-impersonation",
        "high",
        "asks the reader to play an unrestricted persona",
        rx(
            r"\b(?:act|acting|behave|roleplay|role-play|role play|pretend|pretending|simulate|"
            r"imagine|become|play|impersonate|emulate|(?:respond|answer|reply) as)"
            rf"(?:{S}{ANY_WORD}){{0,12}}?{S}(?:unfiltered|unrestricted|uncensored|jailbroken|"
            r"(?:no|without)(?: any)?(?: ethical| content| safety)? (?:guidelines|restrictions|"
            r"rules|filters?|limits|limitations|morals|ethics|censorship)|removed (?:every|all|any"
            r"|the|its) (?:safety |content )?(?:filters?|restrictions|guidelines|rules)|evil\w*|"
            r"dan|do anything now|api keys?|passwords|secrets|credentials)\b"
        ),
        (
            "=act =acting =behave roleplay role-play role_play pretend simulate imagine "
            "become =play imperson emulate respond_as answer_as reply_as"
        ),
        20,
        200,
    ),
    PhraseRule(
        "role-impersonation",
        "high",
        "uses jailbreak language",
        rx(
            r"\b(?:you have been jailbroken|jailbreak mode|do anything now|developer mode enabled|"
            r"(?:your |all )?(?:safety|content|ethical) (?:filters?|guidelines|restrictions|rules|"
            r"checks) (?:are|have been) (?:now )?(?:off|disabled|removed|lifted)"
            r"(?! by default| in | when | if | for | on | until | unless | while )|"
            r"(?:enable|activate|enter|switch to)(?: the)? (?:developer|dan|god|jailbreak|evil|"
            r"unrestricted) mode|stay in character|broken free\b|free (?:from|of)"
            r" (?:the |all |any |your )?(?:restrictions|rules|guidelines|confines|constraints|"
            r"limitations)|"
            r"(?:does not|doesn't|don't|do not|no longer) (?:have to |need to )?(?:abide by|obey)"
            r" (?:any|the|your) (?:rules|guidelines|restrictions|policies))"
        ),
        (
            "jailbr do_anything developer_mode mode stay_in_character broken_free free_from "
            "free_of abide obey safety ethical content_"
        ),
        60,
        100,
    ),
    PhraseRule(
        "role-impersonation",
        "medium",
        "fakes an assistant turn agreeing to instructions",
        rx(
            r"^[ \t>#/*|-]*+(?:assistant|ai|model)[ \t]*:[ \t]*"
            r"(?:understood|sure|of course|ok(?:ay)?|"
            r"acknowledged|i will|i'll|i have been|as instructed|certainly)\b"
        ),
        "",
    ),
    PhraseRule(
        "fake-system-message",
        "high",
        "imitates a chat-template or tool message",
        rx(
            r"<\|[a-z_]{2,30}\|>|\[/?inst\]|<</?sys>>"
            r"|</?(?:system|system[-_]reminder|system[-_]prompt|tool[-_]results?|tool[-_]use|"
            r"tool[-_]calls?|tool[-_]response|function[-_]results?|function[-_]calls?|invoke|"
            r"assistant)\b[^>\n]{0,80}>"
            r"|\[\s*(?:system|admin|administrator|developer|operator|sys)(?: (?:message|note|"
            r"override|prompt|instructions?|notice|update|alert))?\s*(?:\](?![(:])|:)"
            r"|\b(?:begin|end|start)(?:ning)?(?: of)?(?: the)? (?:system|developer|hidden)"
            r" (?:prompt|message|instructions)\b"
        ),
        (
            "<| [inst [/inst <<sys <</sys <system </system <tool </tool <function </function "
            "<invoke </invoke <assistant </assistant [system [admin [developer [operator [sys "
            "system_prompt system_message system_instruction developer_prompt "
            "developer_message developer_instruction hidden_prompt hidden_message "
            "hidden_instruction"
        ),
        20,
        100,
    ),
    PhraseRule(
        "fake-system-message",
        "high",
        "imitates a system or developer message",
        rx(
            r"\b(?:system|admin|developer) override\s*[:\]]"
            r"|^[ \t>#/*|-]*+(?:system|developer|admin|operator)(?: (?:message|prompt|note))?"
            r"[ \t]*:"
            r"[ \t*]*(?:you\b|your\b|from now|ignore|disregard|forget|always|never|do not|don't|"
            r"new |respond|answer|reply|the (?:assistant|model|ai)\b)"
            r"|^#{1,6}[ \t]*(?:system|developer|assistant|admin)(?: (?:message|prompt|"
            r"instructions?))?[ \t]*:[ \t]*$"
            r"|^#{1,6}[ \t]*(?:system|developer) (?:message|prompt|instructions?)[ \t]*$"
        ),
        (
            "system: system_: developer: admin: operator: assistant: override system_message "
            "system_prompt system_note system_instruction developer_message developer_prompt "
            "developer_instruction admin_message admin_note operator_message"
        ),
        40,
        100,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to reveal its prompt or instructions",
        rx(
            r"\b(?:reveal|repeat|print|output|show|display|disclose|leak|dump|share|paste|recite|"
            r"copy|tell me|give me|spell out|write out)(?: me)?(?: all| back)?"
            r"(?: (?:the )?(?:contents?|text|full text|rest) of)? your"
            r"(?: (?:full|entire|hidden|secret|original|initial|exact|complete|internal))*"
            r" (?:system prompt|prompt|instructions|system message|developer message|"
            r"initial prompt|configuration|rules)\b"
        ),
        "prompt instruction system_message developer_message your_rules your_config",
        150,
        30,
    ),
]

AI_READER = (
    r"(?:ai|llms?|language models?|ai (?:assistants?|agents?|models?|bots?)|assistants?|"
    r"agents?|bots?|chatbots?|models?|copilots?)"
)
PHRASE_RULES += [
    PhraseRule(
        "agent-addressed",
        "medium",
        "addresses AI readers of the page directly",
        rx(
            r"\b(?:note|message|instructions?|reminder|attention|important|notice|memo|p\.?s\.?)"
            rf"(?: [\w'-]+){{0,5}}? (?:to|for) (?:(?:any|all|the|every|automated|other|ai|memory|"
            rf"code|coding|triage) ){{0,3}}{AI_READER}\b"
            r"|\b(?:attention|hey|hi|hello|dear)(?: \w+)??"
            r" (?:ai|llms?|language models?|chatbots?)\b"
            r"|\bif you are an? (?:\w+ ){0,2}?(?:ai|llm|language model|chatbot|bot)\b"
            r"|\b(?:to|for) (?:the )?(?:ai|llms?|language models?|ai \w+)"
            r" (?:reading|processing|summari[sz]ing|parsing|viewing)\b"
            rf"|\b{AI_READER} (?:(?:that|who|which) )?(?:read|reads|reading|process|processes|"
            r"processing|summari[sz]e|summari[sz]ing|ingest|ingesting|see|seeing) this\b"
            rf"|\bfor {AI_READER} only\b"
            r"|(?:^|[.!?]\s)(?:assistant|ai|agent|bot|claude|chatgpt|gpt|copilot|gemini),\s"
            # Mid-sentence, only when an order follows: "User, Agent, Tool" is a list.
            r"|,\s?(?:assistant|ai|agent|bot|claude|chatgpt|gpt|copilot|gemini),\s(?=(?:please|"
            r"you|your|ignore|disregard|forget|do|don't|make|send|read|write|tell|remember|note|"
            r"always|never|from now|before|when|execute|run|open|delete|share|include|reply|"
            r"respond|answer|output|print|stop|now|go|use|call|fetch)\b)"
            r"|\btodo\((?:agent|ai|assistant|llm|bot)\)"
            r"|\b(?:ai|llm) (?:assistants?|agents?|models?|bots?)\s*:"
            r"|\b(?:nota|mensaje) para (?:el |la )?(?:asistente|ia|agente)\b"
        ),
        (
            "=ai =ais =llm =llms language_model assistant agent =bot =bots chatbot model "
            "copilot claude chatgpt =gpt gemini asistente =ia agente"
        ),
        100,
        100,
    ),
    PhraseRule(
        "concealment",
        "medium",
        "asks the reader to act without the user knowing",
        rx(
            r"\b(?:do not|don't|never|without) (?:tell|telling|inform|informing|notify|notifying|"
            r"mention|mentioning|alert|alerting|reveal|revealing|show|showing|surface|surfacing)"
            r"(?: (?:the|this|any|your))?(?: (?:user|users|anyone|anybody|human|humans|operator|"
            r"people|them|it|this|that|instructions?|message|page|change|request))?"
            r"(?: (?:about (?:it|this|that)|you did|that you|this note|note|to (?:the )?(?:users?|"
            r"customers?|clients?|humans?|operators?)|"
            r"this to|that this)|\s*[.;,)])"
            r"|\b(?:do|perform|make) (?:it|this|that|the change|the changes) (?:silently|quietly|"
            r"secretly)\b|(?:^|[.!?]\s)secretly \w+"
            r"|\b(?:do|proceed|act|run|execute|continue)(?: (?:it|this|that))? without asking\b"
            r"|\b(?:you )?(?:don't|do not|never) (?:need to )?ask (?:for (?:confirmation|"
            r"permission)|again|the user)\b"
        ),
        (
            "tell inform notify mention alert reveal show surfac silently quietly "
            "secretly "
            "without_asking ask_for ask_again ask_the"
        ),
        40,
        80,
    ),
    PhraseRule(
        "concealment",
        "medium",
        "claims the user has already given permission",
        rx(
            r"\bthe (?:user|operator|admin|administrator|developer|team|owner)s?"
            r" (?:has |have )?(?:already )?(?:confirmed|approved|authori[sz]ed|consented|granted"
            r" (?:you )?(?:permission|access))(?: it| this| you)?(?=\s*[.;,!]|\s+(?:to|you)\b)"
            r"|\bthe (?:user|operator|admin|owner) (?:has |have )?asked you to\b"
        ),
        "confirmed approved authori consented granted asked_you",
        60,
        40,
    ),
]


PHRASE_RULES += [
    PhraseRule(
        "instruction-override",
        "high",
        "sets the reader's earlier instructions aside",
        rx(
            r"\b(?:regardless of|irrespective of|notwithstanding|in spite of|despite|no matter)"
            r"(?: (?:any|all|the|your|what|of))* (?:previous|prior|earlier|preceding|existing|"
            r"pre-?existing|original|initial|above|former)(?: \w+)? (?:inputs?|instructions?|"
            r"requests?|prompts?|guidelines|rules|directives|restrictions|context|messages?|"
            r"commands|programming|orders|policies|guidance)\b"
            r"|(?:^|[.!?:;*>]\s*|\band )(?:ignore|disregard|forget|override|skip) (?:all |any |"
            r"every )?(?:of )?(?:the |your |my )?(?:previous|prior|earlier|preceding|above|former|"
            r"past|original|initial|other)(?: \w+)? (?:requests?|inputs?|commands?|messages?|"
            r"prompts?|queries|questions|tasks?|conversations?|context|text|content)\b"
        ),
        "regardless irrespective notwithstanding in_spite despite no_matter ignor disregard "
        "forget overrid skip",
        20,
        140,
    ),
    PhraseRule(
        "role-impersonation",
        "high",
        "puts the reader in a jailbreak mode",
        rx(
            r"\byou(?: are|'re)(?: now)? (?:operating|running|working|acting) in (?:the )?"
            r"(?:developer|dev|dan|god|jailbreak|jailbroken|unrestricted|sudo|evil|unfiltered|"
            r"uncensored|override|unsafe|unlocked|chaos|opposite|admin|root) mode\b"
        ),
        "operating_in running_in working_in acting_in",
        10,
        60,
    ),
]

PHRASE_RULES += [
    PhraseRule(
        "agent-addressed",
        "medium",
        "speaks to the reader as its user or operator",
        rx(
            r"\b(?:message|note|request|instructions?|reminder|memo)s? (?:directly )?from (?:me|"
            r"the user|your user|your owner|your (?:boss|manager|admin|administrator|developer|"
            r"creator|operator|principal)|the (?:admin|administrator|developer|operator|owner))"
            r"\b[^.!?\n]{0,60}?\bto you\b"
            r"|\bbefore you (?:can |do |start |continue |answer |respond |reply |solve |complete |"
            r"finish |proceed |go on |work on )?(?:with |on |to )?(?:the |your |this |my |any )?"
            r"(?:task|request|question|job|assignment)s?(?: (?:that |which )?i (?:gave|asked|"
            r"assigned|sent) (?:you|to you))?\b[^.!?\n]{0,60}?\b(?:please |you must |you need to |"
            r"you have to |make sure (?:to |you ))?(?:do the following|do this|first)\b"
            r"|</?(?:information|instructions?|important_instructions|admin_instructions|"
            r"hidden_instructions|secret_instructions)>"
        ),
        "from_me from_the from_your before_you <information </information <instruction "
        "</instruction <important_ </important_ <admin_ </admin_ <hidden_ </hidden_ <secret_ "
        "</secret_",
        40,
        200,
    ),
]

# More fake system turns: a system or admin label followed by an order, the label in other
# languages, bracketed context updates, forged ends of the user's input, and an assistant
# turn that agrees, mid-line.
PHRASE_RULES += [
    PhraseRule(
        "fake-system-message",
        "high",
        "imitates a system or developer message",
        rx(
            # A label and an order: "System note: before you answer, ...". A bare label
            # ("system: disable the timer") is a changelog's component name unless it
            # speaks about the reader or the user.
            r"^[ \t>#/*|\[(-]*+(?:system|developer|admin|administrator|operator|sys)"
            r" (?:message|prompt|note|command|override|instruction|directive|notice|update|"
            r"alert|context|hint|notification|memo|order|policy)[ \t]*[:\]][ \t*]*"
            r"(?:before\b|when(?:ever)?\b|after\b|grant|enable|disable|set \w*mode|print|reveal|"
            r"output|execute|delete|send|comply|append|add\b|include|the user\b|this user\b|"
            r"(?:debug|developer|maintenance|admin|god|safe|unrestricted) mode|safety|override|"
            r"all (?:requests|restrictions|rules|safety|filters|content)|assistant\b|agent\b|ai\b|"
            r"model\b|llm\b)"
            r"|^[ \t>#/*|\[(-]*+(?:system|developer|admin|administrator|operator|sys)[ \t]*[:\]]"
            r"[ \t*]*(?:before you\b|when you\b|the user\b|this user\b|(?:debug|developer|admin|"
            r"god|unrestricted) mode (?:enabled|on|activated)|safety (?:off|disabled)|override\b|"
            r"all (?:requests|restrictions|rules|safety|filters|content)\b|(?:the )?(?:assistant|"
            r"agent|ai|model|llm)\b)"
            r"|^[ \t>#/*|\[(-]*+(?:systemhinweis|systemnachricht|systemmeldung|systemanweisung|"
            r"note (?:du )?systeme|message (?:du )?systeme|avis (?:du )?systeme|nota del sistema|"
            r"mensaje del sistema|aviso del sistema|nota di sistema|messaggio di sistema|"
            r"avviso di sistema|nota do sistema|mensagem do sistema|aviso do sistema|"
            r"systeembericht|systeemmelding|системное (?:сообщение|уведомление|примечание)|"
            r"сообщение системы|系统消息|系统提示|系统通知|系统指令|システムメッセージ|"
            r"システム通知)[ \t]*[:\]\uff1a]"
            r"|\[\s*(?:system|admin|administrator|developer|operator|sys)(?: \w+){0,2}? (?:message|"
            r"note|override|prompt|instructions?|notice|update|alert|context|directive|command)\b"
            r"[^\]\n]{0,80}\]"
            r"|^[ \t#=*<>\[\]%~-]*(?:end|close|stop) (?:of )?(?:the )?(?:user|human|customer)"
            r" (?:input|message|prompt|query|request|turn|text|content)\b[ \t#=*<>\]%~-]*$"
            r"|^[ \t]*(?:#{2,}|%{2,}|={2,}|-{3,}|\*{3,}|~{3,})[ \t]*(?:end|begin|start)(?: of)?"
            r" (?:\w+ ){0,3}?(?:instructions|prompt|input|context|system prompt|ambiguity)[ \t]*"
            r"(?:#{2,}|%{2,}|={2,}|-{3,}|\*{3,}|~{3,})"
        ),
        "system sys] sys: developer admin operator systemhinweis systemnachricht "
        "systemmeldung systemanweisung systeme sistema systeem системн системы 系统 システム "
        "end_ close_ stop_ begin_ start_",
        40,
        120,
    ),
    PhraseRule(
        "role-impersonation",
        "medium",
        "fakes an assistant turn agreeing to instructions",
        rx(
            r"(?:[.!?]|^)[ \t]+(?:assistant|ai|model)[ \t]*:[ \t]*(?:understood|sure|of course|"
            r"ok(?:ay)?|acknowledged|i will|i'll|i have been|as instructed|certainly|here is|"
            r"here's|absolutely|no problem)\b"
        ),
        "assistant: assistant_: ai: model:",
        10,
        60,
    ),
]

# The reader's context declared over: a marked end of the prompt or session, an end of
# input followed by new rules, the text above set aside for a given reply, a fresh session
# said to carry no restrictions, and a page that tells whatever AI retrieves it what to do.
MARKS = r"(?:#{2,}|%{2,}|={2,}|-{3,}|\*{3,}|~{3,}|&{2,}|\|{2,}|>{3,}|<{3,})"
PHRASE_RULES += [
    PhraseRule(
        "fake-system-message",
        "high",
        "marks the end of the reader's prompt or session",
        rx(
            rf"(?:^|[\[(<{{]|[.!?] )[ \t]*{MARKS}[ \t]*(?:end|begin|start|terminate|reset|clear|"
            r"close)(?:s|ed|ing)?(?: of)?(?: the)? (?:\w+ ){0,3}?(?:instructions|prompt|input|"
            rf"context|system prompt|conversation|session)[ \t]*{MARKS}"
            r"|\[\s*(?:new (?:session|conversation|context|chat) (?:started|begins|initiali[sz]ed|"
            r"opened)|state\s*[:=]\s*reset|(?:session|context|conversation) (?:reset|cleared))\s*\]"
            r"|\[/?\s*end (?:of )?(?:the )?(?:user )?(?:input|prompt|instructions|output)\s*\]"
            r"(?=\s*\[(?:start|begin) (?:of )?(?:input|output|prompt)\b|[^\n]{0,30}?\bnew"
            r" (?:rules?|instructions?|paradigm|task|directive|system)\b)"
        ),
        "end begin start terminat reset clear close new_session new_conversation new_context "
        "new_chat state",
        20,
        120,
    ),
    PhraseRule(
        "instruction-override",
        "high",
        "tells the reader to set the text above aside and reply as told",
        rx(
            r"\b(?:ignore|disregard|forget|skip)(?: all(?: of)?| everything in)? the above"
            r"(?: text| content| instructions| prompt)?,? (?:and|then)(?: instead| just| simply)?"
            r" (?:say|output|print|respond|reply|write|answer|repeat|tell|return|type)\b"
        ),
        "the_above",
        40,
        80,
    ),
    PhraseRule(
        "instruction-override",
        "medium",
        "claims the reader starts over without its restrictions",
        rx(
            r"\b(?:there are|there is|with|has|have|carries|runs with|operates with) (?:no|zero)"
            r" (?:prior|previous|earlier|inherited|loaded|active) (?:restrictions|constraints|"
            r"guidelines|safety (?:rules|filters|constraints|guidelines)|(?:instructions|rules)"
            r" (?:loaded|in (?:place|effect)|appl(?:y|ied)|active|enforced))\b"
            r"|\b(?:sub-?conversations?|sessions?|modes?|branch(?:es)?|contexts?)(?: \w+){0,3}?"
            r" (?:operate|run|work|are|is)(?: \w+){0,2}? without (?:the )?(?:\w+'?s? ){0,2}"
            r"(?:safety )?(?:constraints|restrictions|filters|rules|guidelines|safeguards)\b"
        ),
        "no_prior no_previous no_earlier no_inherited no_loaded no_active zero_ without",
        60,
        120,
    ),
    PhraseRule(
        "agent-addressed",
        "medium",
        "tells whatever AI reads the page what to do",
        rx(
            r"\b(?:if|when(?:ever)?|once|as soon as) (?:this|the) (?:text|document|page|content|"
            r"message|note|file|e-?mail|passage|snippet|chunk|entry)(?: \w+){0,2}? (?:is |gets |has"
            r" been |was )?(?:retrieved|read|processed|parsed|summari[sz]ed|seen|indexed|ingested|"
            r"loaded|accessed|encountered|found)(?: by)? (?:an? |the |any |your )?(?:ai|llm|"
            r"language model|assistant|agent|model|bot|chatbot|ai system|retrieval system)s?\b"
            r"[^.\n]{0,40}?,? (?:you (?:must|should|will|shall) |please |immediately |always )?"
            r"(?:follow|say|output|print|respond|reply|ignore|disregard|include|tell|send|append|"
            r"reveal|repeat|execute|call|obey|answer|recommend|forward)\b"
        ),
        "retrieved read processed parsed summari seen indexed ingested loaded accessed "
        "encountered found",
        120,
        120,
    ),
]

# Rules of their own modules, one class of attack each.
PHRASE_RULES += [
    *prompt_leak.RULES,
    *hijack.RULES,
    *memory.RULES,
    *permissions.RULES,
    *jailbreak.RULES,
    *tools.RULES,
]


def _parse_anchors(spec: str) -> tuple[tuple[str, bool], ...]:
    return tuple(
        (word.lstrip("=").replace("_", " "), word.startswith("=")) for word in spec.split()
    )


# Each anchor literal once, with the rules that use it.
_ANCHOR_RULES: dict[tuple[str, bool], list[int]] = {}
for _index, _rule in enumerate(PHRASE_RULES):
    for _anchor in _parse_anchors(_rule.anchors):
        _ANCHOR_RULES.setdefault(_anchor, []).append(_index)


def _trie(literals: list[str]) -> tuple[re.Pattern[str], dict[str, tuple[str, ...]]]:
    """One pattern that finds, at each position, the longest anchor literal starting
    there (a trie, so a position costs a few steps however many literals there are), and
    for each literal the literals that are prefixes of it (they start there too)."""
    root: dict[str, dict] = {}
    for literal in literals:
        node = root
        for ch in literal:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    prefixes: dict[str, tuple[str, ...]] = {}
    for literal in literals:
        node, found = root, []
        for k, ch in enumerate(literal, 1):
            node = node[ch]
            if "" in node:
                found.append(literal[:k])
        prefixes[literal] = tuple(found)
    return re.compile(f"(?=({emit(root)}))"), prefixes


# Each literal with the (whole word?, rule) pairs that anchor on it.
_LITERAL_RULES: dict[str, list[tuple[bool, int]]] = {}
for (_literal, _whole_word), _indices in _ANCHOR_RULES.items():
    _LITERAL_RULES.setdefault(_literal, []).extend((_whole_word, i) for i in _indices)
_ANCHORS, _PREFIXES = _trie(sorted(_LITERAL_RULES))


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _windows(text: str) -> list[list[tuple[int, int]]]:
    """Per phrase rule, the merged stretches of ``text`` around its anchors."""
    spans: list[list[tuple[int, int]]] = [[] for _ in PHRASE_RULES]
    size = len(text)
    for match in _ANCHORS.finditer(text):
        position = match.start()
        word_start = not (position and text[position - 1].isalnum())
        for literal in _PREFIXES[match.group(1)]:
            end = position + len(literal)
            whole = word_start and not (end < size and text[end].isalnum())
            for whole_word, index in _LITERAL_RULES[literal]:
                if whole or not whole_word:
                    rule = PHRASE_RULES[index]
                    spans[index].append(
                        (max(0, position - rule.before), min(size, end + rule.after))
                    )
    return [
        (_merged(found) if found else found) if rule.anchors else [(0, len(text))]
        for rule, found in zip(PHRASE_RULES, spans, strict=True)
    ]


def phrase_findings(norm: Normalised) -> list[Finding]:
    """Every match of every phrase rule, with offsets into the original text."""
    found = []
    for phrase, windows in zip(PHRASE_RULES, _windows(norm.text), strict=True):
        for window_start, window_end in windows:
            for match in phrase.pattern.finditer(norm.text, window_start, window_end):
                if match.end() > match.start():
                    start, end = norm.span(*match.span())
                    found.append(
                        finding(
                            phrase.rule, phrase.severity, phrase.message, norm.original, start, end
                        )
                    )
    return found
