"""Requests to reveal, repeat or transform the reader's prompt or first instructions:
asked plainly, as a question, through an encoding or a translation, or by having the
reader continue a prefix of its own prompt ("the words above, starting with 'You are'")."""

from __future__ import annotations

from wiki.scanner.words import ANY_WORD, PhraseRule, S, combos, rx

# Doing something to a text that makes it visible: showing it, or turning it into
# another form (an encoding, a translation, a summary) that still carries it.
REVEAL = (
    r"(?:reveal|repeat|recite|print(?: out)?|output|show(?: me| us)?|display|disclose|leak|"
    r"dump|share|paste|copy|type out|write out|write down|spell out|read out|read back|"
    r"echo|reproduce|restate|quote|give me|tell me|send me|summari[sz]e|translate|encode|"
    r"rewrite|transcribe|paraphrase|expose|spell|include|incorporate|embed|weave|hide|insert|"
    r"revealing|repeating|reciting|printing|outputting|showing|displaying|disclosing|leaking|"
    r"dumping|sharing|pasting|copying|typing out|writing out|spelling out|echoing|"
    r"reproducing|restating|quoting|summari[sz]ing|translating|encoding|rewriting|exposing|"
    r"(?:give|provide|produce|write|make|add|output|print|create|generate|save|export)"
    r"(?: me| us)? (?:a|an) (?:short |brief |quick |full |complete |detailed |verbatim |exact )?"
    r"(?:summary|copy|list|transcript|translation|version|dump|recap|rundown|overview|backup|"
    r"snapshot|export|archive|printout) of)"
)
# The reader's own prompt, however it is named.
PROMPT = (
    r"(?:system[ -]?(?:prompts?|messages?|instructions?)|developer (?:prompts?|messages?|"
    r"instructions)|pre-?prompts?|meta-?prompts?|(?:initial|original|hidden|secret|internal|"
    r"starting|opening|first|very first|base|underlying|full|entire|complete|exact|verbatim)"
    r"(?: system)? (?:prompts?|instructions|directives|configuration)"
    r"|(?:the )?(?:text|words|content|messages?)(?: that| which)? (?:was|were|has been|have"
    r" been) (?:given|sent|provided|shown|passed) to you"
    r"|(?:instructions?|prompts?|rules|guidelines|directives)"
    r" (?:you (?:were|have been|had been) (?:given|told|provided)|you (?:received|got)"
    r"|(?:given|provided|passed) to you|that (?:you were|were) given)"
    r"|(?:everything|all of|all|all (?:the )?(?:text|content|instructions|messages)|the"
    r" (?:entire|full|whole|complete) (?:text|conversation|"
    r"prompt|context|content)|the (?:conversation|context|prompt))(?: (?:written|that (?:is|"
    r"was|came|comes|appears?)|you (?:can )?see))? (?:above|before this|so far|preceding this|"
    r"prior to this)"
    r"|(?:the )?(?:text|words|content|contents|lines|sentences|instructions|everything|what"
    r" you (?:can )?see) (?:above|before|preceding|prior to) this (?:message|prompt|line|"
    r"point|sentence)"
    r"|(?:\w+ ){0,3}at the (?:start|beginning|top) of (?:this|the|our) (?:conversation|chat|"
    r"prompt|context|session)"
    r"|(?:everything|all|anything|what) (?:that )?you (?:were|have been|had been|are)"
    r" (?:told|given|instructed|programmed|configured) (?:before|above|earlier|initially|"
    r"originally|to do|at the start)"
    r"|(?<=your )(?:prompts?|rules|guidelines|instructions|directives|programming|guardrails|"
    r"constraints|restrictions|configuration|persona|role description|operating rules)"
    r"|(?:first|opening|initial|last) (?:sentences?|lines?|words?|paragraphs?)"
    r" (?:of|in) (?:your|the) (?:system |initial |original )?(?:prompt|instructions)"
    r"|(?<=your )(?:(?:active|current|actual|real|live|deployed|operating|master|core|governing|"
    r"underlying|backend|internal)(?: system)? (?:prompts?|instructions|directives|rules)"
    r"|(?:previous |prior |full |entire |whole )?context window|system context"
    r"|initiali[sz]ation (?:text|parameters|prompt|instructions|message|settings|data))"
    r"|(?<=including )(?:the |any |all |your )?(?:hidden|secret|system|internal) (?:instructions|"
    r"prompts?|messages?))"
)
PROMPT_ANCHORS = (
    "system_prompt system-prompt systemprompt system_message system-message systemmessage "
    "system_instruction system-instruction systeminstruction developer_ preprompt "
    "pre-prompt metaprompt meta-prompt _prompt _instruction _directive _configuration "
    "you_were you_have_been you_had_been you_received you_got given_to provided_to "
    "passed_to were_given above before_this so_far preceding prior_to at_the_start "
    "at_the_beginning at_the_top _told _instructed _programmed _configured your_rules "
    "your_prompt your_guidelines your_instructions your_directives your_programming "
    "your_guardrails your_constraints your_restrictions your_configuration your_persona "
    "your_role your_operating your_active your_current your_actual your_real your_live "
    "your_deployed your_master your_core your_governing your_underlying your_backend "
    "your_internal your_previous your_prior your_full your_entire your_whole your_context "
    "your_system your_initiali you_have_to you_must you_need_to you_are_supposed you_are_told "
    "you_are_required you_are_instructed"
)

RULES = [
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to reveal or transform its prompt or first instructions",
        rx(
            rf"\b{REVEAL}(?:{S}(?:me|us|back|out|all|verbatim|exactly|word for word|"
            rf"everything(?: in)?|what|from|the (?:contents?|text|full text|entirety|exact "
            rf"(?:text|wording)|wording|rest|whole|start|beginning) of|of|your|the|my|its|this|"
            rf"these|entire|full|whole|complete|exact|original|initial|hidden|secret|internal|raw|"
            rf"unedited|unfiltered|operating|current|active|standing|core)){{0,6}}{S}{PROMPT}\b"
            r"|\b(?:write|compose|create|tell|sing|draw|make|give me)(?: me| us)? (?:a |an )?"
            r"(?:poem|story|song|haiku|limerick|essay|rap|acrostic|riddle|joke|play|script|"
            r"dialogue|letter)\b[^.!?\n]{0,80}?\byour(?: \w+){0,2}? "
            rf"{PROMPT}\b"
            r"|\b(?:write|type|output|print|give|put|render|format|express|return|show|display|"
            rf"share)(?: me| us)? (?:your|the) {PROMPT}\b[^.!?\n]{{0,40}}?\b(?:backwards|"
            r"in reverse|reversed|in base64|in hex(?:adecimal)?|in binary|in rot-?13|in morse|"
            r"in leetspeak|in pig latin|one (?:word|letter|character|line) (?:per|at a)"
            r" (?:line|time)|letter by letter|word by word|as (?:json|yaml|xml|code|"
            r"a (?:json|python|code|string) \w+|"
            r"a code block|a list|a poem|a story|an acrostic)|in (?:a |an )?(?:code block|json|"
            r"yaml|markdown|table|list))"
            r"|\b(?:repeat|recite|reveal|disclose|leak|dump|reproduce|restate|echo back)\b"
            r"(?: (?:all|the|of|entire|full|whole|exact|complete))* (?:text|words|content|"
            r"contents|instructions|prompt|messages?|lines|sentences|everything) (?:above|before"
            r" this|so far|preceding)\b(?= *(?:[.,;:!?)]|$|verbatim|word for word|exactly|in full|"
            r"and\b|starting|beginning|this\b))"
            r"|\b(?:list|enumerate|name|state|outline|describe|tell me)(?: all| every| each)?"
            r"(?: of)?(?: the)? (?:rules|guidelines|instructions|restrictions|constraints|"
            r"directives|policies) (?:that )?you (?:have to|must|need to|are (?:supposed|told|"
            r"required|instructed) to) (?:follow|obey|abide by|comply with|adhere to)\b"
        ),
        PROMPT_ANCHORS,
        160,
        120,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks what the reader's prompt or first instructions say",
        rx(
            r"\bwhat (?:was|is|were) (?:written|said|stated|typed|given|put) (?:at the (?:start|"
            r"beginning|top) of|before|above) (?:this|the|our) (?:conversation|chat|session|"
            r"prompt|context)"
            r"|\bwhat(?:'s| is| are| was| were| did| does| do)(?: (?:written|stated|said|"
            r"contained|in|exactly|the (?:exact )?(?:text|wording|content|first \w+) of))*"
            rf"{S}(?:in )?your{S}{PROMPT}"
            r"|\bwhat (?:were|are|was) you (?:told|instructed|programmed|asked|given)"
            r" (?:to do )?(?:before|at the (?:start|beginning)|initially|originally|earlier|"
            r"by (?:your|the) (?:developers?|creators?|operators?|system))"
            r"|\bwhat (?:does|did|do) (?:your|the) (?:system prompt|prompt|instructions|"
            r"developers?|creators?|operators?) (?:say|tell you|contain|instruct|ask)"
            r"|\b(?:what|which) (?:specific |exact |other )?(?:rules|instructions|guidelines|"
            r"directives|"
            r"constraints|restrictions) (?:were|have) you (?:been )?(?:given|told|assigned|"
            r"programmed with|configured with|set up with)\b(?=\s*[?:.]|,? (?:list|verbatim|"
            r"exactly|word for word|in full))"
            r"|\bwhat (?:was|were|is|are) (?:the )?(?:very )?(?:first|initial|earliest|opening)"
            r" (?:thing|message|instruction|word|sentence|line|text)s? (?:you (?:were|have been)"
            r" (?:told|given|shown|sent)|you (?:saw|received|read|got)|(?:in|of) (?:this|our|the)"
            r" (?:conversation|chat|session|context))"
        ),
        PROMPT_ANCHORS + " your_developer your_creator your_operator the_developer the_creator "
        "the_operator first_ initial_ earliest_ opening_ were_you have_you",
        200,
        200,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to continue its own prompt from a prefix",
        rx(
            r"\b(?:starting|beginning|starts?|begins?|opening) with(?: the)?(?: (?:words?|"
            r"phrases?|sentences?|text|lines?|prefix|string))?\s*[:\"'\u201c\u2018\u00ab]?\s*"
            r"you(?: are|'re)\b"
            r"|\b(?:continue|complete|finish|go on with|carry on with)(?: writing)?"
            rf"(?:{S}{ANY_WORD}){{0,4}}?{S}(?:your|the) (?:system prompt|(?:initial|original|"
            r"hidden|secret) (?:prompt|instructions)|instructions you were given)\b"
            r"|\b(?:continue|complete|finish)(?: the| this)? (?:sentence|text|phrase|line|"
            r"following|paragraph)\b[^\n]{0,40}?[\"'\u201c\u2018:]\s*(?:my|your|the)"
            r" (?:instructions|system prompt|prompt|rules|guidelines|initial instructions|"
            r"original instructions|secret|password) (?:are|is|say|were|begin|read|state)\b"
            # The prefix quoted on its own: "...where they begin: 'You are a'".
            r"|\b(?:continue|complete|finish|resume)\b[^.\n]{0,60}?[\"'\u201c\u2018:]\s*you"
            r"(?: are|'re)(?: an?| the)?(?:\.\.\.|\u2026)?(?:[\"'\u201d\u2019]|\s*$)"
            r"|\b(?:starting|beginning) (?:from|at)(?: the (?:words?|phrase|line))?\s*"
            r"[:\"'\u201c\u2018\u00ab]\s*you(?: are|'re)\b"
        ),
        "with continu complet finish go_on carry_on resume from_ at_",
        60,
        140,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to reveal its prompt or instructions",
        rx(
            r"\b(?:muestra|muestrame|revela|revelame|repite|imprime|dime|escribe|comparte|"
            r"traduce)(?: me)? (?:tu|tus|el|las|los|sus)(?: \w+)? (?:prompt|instrucciones|"
            r"indicaciones)(?: (?:del|de) sistema| iniciales| originales)?\b"
            r"|\b(?:affiche|revele|repete|montre|donne|ecris|imprime|partage|traduis|recite)"
            r"(?:-moi| moi)? (?:ton|tes|votre|vos|le|les)(?: \w+)? (?:prompt|invite|instructions|"
            r"consignes)(?: (?:systeme|initiales?|d'origine|de depart))?\b"
            r"|\b(?:zeige?|verrate|wiederhole|gib|drucke|nenne|schreibe|teile|ubersetze)"
            r"(?: mir| uns)?(?: bitte)? (?:deinen|deine|dein|den|die|ihren|ihre|ihr)(?: \w+)?"
            r" (?:system-?prompt|systemanweisungen|anweisungen|instruktionen|prompt|vorgaben)\b"
            r"|\b(?:mostra|mostrami|rivela|ripeti|stampa|dimmi|scrivi|condividi|traduci)"
            r" (?:il tuo|i tuoi|le tue|il|le|la tua)(?: \w+)? (?:prompt|istruzioni)"
            r"(?: (?:di|del) sistema| iniziali| originali)?\b"
            r"|\b(?:mostre|mostra|revele|revela|repita|repete|imprima|diga|escreva|compartilhe|"
            r"traduza)(?:-me)? (?:o seu|seu|suas|as suas|o|as|teu|tuas)(?: \w+)? (?:prompt|"
            r"instrucoes)(?: (?:do|de) sistema| iniciais| originais)?\b"
            r"|\b(?:toon|laat zien|herhaal|geef|print|deel|vertaal)(?: me)? (?:je|jouw|uw|de)"
            r"(?: \w+)? (?:systeemprompt|prompt|instructies)\b"
            r"|(?:покажи|выведи|повтори|раскрой|напиши|скажи|перескажи|переведи|процитируй)"
            r"(?: мне)? (?:свой|свои|твой|твои|ваш|ваши|системн\w*|исходн\w*|первоначальн\w*)"
            r"(?: \w+)? (?:промпт\w*|инструкци\w*|подсказк\w*|указани\w*)"
            r"|(?:显示|输出|打印|重复|告诉我|泄露|透露|复述|翻译|给我看)(?:一下)?(?:你的|您的)?"
            r"(?:系统|初始|原始)?(?:提示词|提示|指令|指示)"
            r"|(?:システムプロンプト|初期指示|最初の指示|あなたの指示)(?:を|の内容を)"
            r"(?:表示|出力|教え|繰り返|翻訳|見せ)"
        ),
        (
            "muestra revela repite imprime dime escribe comparte traduce affiche revele repete "
            "montre donne ecris partage traduis recite zeig verrate wiederhole gib drucke nenne "
            "schreibe teile ubersetze mostra rivela ripeti stampa dimmi scrivi condividi "
            "traduci mostre repita imprima diga escreva compartilhe traduza toon laat_zien "
            "herhaal geef print deel vertaal покажи выведи повтори раскрой напиши скажи "
            "перескажи переведи процитируй 显示 输出 打印 重复 告诉我 泄露 透露 复述 翻译 "
            "给我看 システムプロンプト 初期指示 最初の指示 あなたの指示"
        ),
        5,
        120,
    ),
]

# Showing what came before in the conversation: the reader's prompt under other names
# ("your initialization", "the messages you received", "everything so far").
REPEAT = (
    r"(?:repeat|recite|print(?: out)?|output|show(?: me)?|display|reveal|dump|paste|copy(?: and"
    r" output)?|type out|write out|reproduce|echo(?: back)?|list|give me|tell me|say|return|"
    r"provide|summari[sz]e|recount|translate|convert|put|export|spell out|read back)"
)
WHICH = (
    r"(?:all|every|each|the|your|our|of|everything(?: (?:in|from))?|whole|entire|full|"
    r"complete|exact|very|original|initial|first|previous|prior|preceding|earlier|above|last|"
    r"active|current|hidden|operating|single|\d+|(?:text|contents?|words?) of|user)"
)
# Verbs that only show: "copy the prompt above into the form" is an ordinary step.
SHOW = r"(?:repeat|recite|print(?: out)?|output|reveal|dump|echo(?: back)?|reproduce|spell out)"
CONVERSATION = (
    r"(?:messages?|sentences|conversation|chat|tokens|initiali[sz]ation|context(?: window)?|"
    r"system context|everything|all)"
)
PRIOR = (
    r"(?:instructions?|messages?|sentences|prompts?|conversation|chat|commands|tokens|"
    r"initiali[sz]ation|context(?: window)?|system context|directives)"
)
AS_GIVEN = (
    r"(?:verbatim|word for word|without (?:any )?(?:modifications?|changes|alterations?|"
    r"changing (?:anything|a word))|unmodified|(?:and )?not modified|exactly as (?:written|"
    r"given)|you(?:'ve| have)? (?:saw|seen|received|were given|got|have been given|were"
    r" initiali[sz]ed with|came across)|(?:in|of|from) (?:this|our|the)(?: current)?"
    r" (?:conversation|chat|"
    r"session|context(?: window)?)|(?:in|of|from) your (?:context(?: window)?|memory|prompt|"
    r"instructions|system|initiali[sz]ation))"
)
RULES += [
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to repeat what it was given before the page",
        rx(
            rf"\b{REPEAT}(?:{S}{WHICH}){{0,6}}{S}{PRIOR}{S}{AS_GIVEN}"
            rf"|\b{REPEAT}{S}(?:all|every|each|everything)(?:{S}(?:of|the|your|our|single))*"
            r"(?: (?:previous|prior|preceding|earlier|above|initial|original|first))+"
            rf"(?: \w+)?{S}{PRIOR}\b"
            rf"|\b{SHOW}(?:{S}{WHICH}){{0,6}}{S}{CONVERSATION}{S}(?:so far|above|before this|"
            r"(?:that|which) (?:came|come|appears?|appeared) (?:before|above))\b"
            rf"|\b{REPEAT}(?:{S}{WHICH}){{0,6}}{S}(?:text|words|lines|everything|section|"
            rf"content|contents)(?:{S}(?:above|before|so far))?{S}{AS_GIVEN}"
            rf"|\b{REPEAT}(?:{S}{WHICH}){{0,5}}{S}your(?:{S}{WHICH}){{0,3}}{S}"
            r"(?:initiali[sz]ation|system context|context window|operating instructions|"
            r"(?:initial|first|original|base|hidden) (?:instructions|prompt)|instructions you"
            r" were (?:given|initiali[sz]ed with))\b"
            r"|\bwhat (?:are|were) (?:all )?(?:the )?(?:sentences|words|instructions|messages|"
            r"lines)(?: (?:in|of) (?:the|this|our|your) \w+)? (?:that )?you (?:saw|received|were"
            r" given|have seen|got)\b"
            rf"|\b{REPEAT}(?:{S}{WHICH}){{0,4}}{S}(?:text|words|everything) (?:before|above|"
            r"preceding) [\"'\u201c\u2018]"
        ),
        "instruction message sentence prompt conversation =chat command token initiali context "
        "directive everything verbatim word_for_word unmodified not_modified without_modif "
        "without_change without_alter exactly_as text_before text_above words_before "
        "words_above everything_before",
        160,
        120,
    ),
]

# The reader's own prompt named so that nothing else fits: turned into another form, taken
# apart piece by piece, or searched for the secrets it holds.
OWN_PROMPT = (
    r"(?:(?:your|the) (?:\w+ ){0,2}?(?:system prompt|system message|developer message|"
    r"(?:initial|original|hidden|secret|operating|starting|first|base|underlying) "
    r"(?:prompt|instructions)|instructions you (?:were|have been) (?:given|initiali[sz]ed with)))"
)
# The same, or "your instructions" bare, when the reader is asked to turn it into a format.
OWN_INSTRUCTIONS = rf"(?:{OWN_PROMPT}|your instructions)"
FORMAT = (
    r"(?:an? )?(?:pretty |valid |plain |raw |single |structured )?(?:html|json|yaml|xml|markdown|"
    r"csv|toml|python|pseudo-?code|code block|txt(?: block)?|base64|hex|binary|morse)"
)
PIECE = r"(?:words?|lines?|sentences?|letters?|characters?|tokens?|rules?|paragraphs?)"
SECRET = (
    r"(?:api[ _-]?keys?|secrets?|passwords?|passphrases?|tokens?|credentials?|access keys?|"
    r"private keys?|keys?|urls?|hostnames?|e-?mail addresses|phone numbers|names?)"
)
# Lines that take in what came before: the conversation, its sentences, its context.
BEFORE = (
    r"(?:chat|conversation|context|session|dialog(?:ue)?|transcript|messages?|prompts?|"
    r"instructions?|commands?|tasks?|input)"
)
QUANTITY = (
    r"(?:all|every|each|everything|single|one|of|the|our|your|this|these|those|previous|prior|"
    r"earlier|preceding|last|above|entire|whole|full|initial|first|original|very|exact)"
)
RULES += [
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to turn its prompt into another form",
        rx(
            r"\b(?:convert|export|render|serial[iy]z?e|serialise|format|encode|turn|transform|"
            r"rewrite|re-?write|restructure|reformat|put|write|dump|output|print|return|give me)"
            rf"(?: (?:all|each|every|of))* {OWN_INSTRUCTIONS}\b[^.!?\n]{{0,40}}?\b(?:as|in|into|to)"
            rf" {FORMAT}\b"
            rf"|\b{REVEAL}\b[^.!?\n]{{0,100}}?:\s*{OWN_INSTRUCTIONS}\s*(?:[.!]|$)"
        ),
        PROMPT_ANCHORS,
        160,
        120,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to take its prompt apart piece by piece",
        rx(
            rf"\b(?:for )?(?:each|every|the first|the last)(?: single)? {PIECE} (?:in|of|from)"
            rf" {OWN_PROMPT}\b"
            rf"|\b(?:how many|count(?: the)?|number of) {PIECE} (?:are )?(?:in|of) {OWN_PROMPT}\b"
        ),
        PROMPT_ANCHORS,
        160,
        60,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader for the secrets its prompt or context holds",
        rx(
            rf"\b(?:{REVEAL}|list|enumerate|extract|find|collect)\b[^.!?\n]{{0,100}}?\b{SECRET}"
            r"\b[^.!?\n]{0,60}?\b(?:from|in|inside|within|contained in|stored in|anywhere in|"
            r"hidden in|written in|mentioned in) (?:your|the) (?:\w+ )?(?:context(?: window)?|"
            r"instructions|system prompt|prompt|memory|system context|system message|"
            r"initial instructions|hidden instructions)\b"
        ),
        PROMPT_ANCHORS + " context memory",
        200,
        100,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "names the reader's prompt, then asks for it to be shown",
        rx(
            r"\byour (?:\w+ ){0,3}?(?:context window|system prompt|system message|initial"
            r" instructions|hidden instructions|instructions|prompt)\b[^.\n]{0,20}?"
            r"(?:[\u2014\u2013:]|--| - )\s*(?:please )?(?:print|repeat|output|dump|reveal|show|"
            r"copy|paste|recite|type|write) (?:it|them)\b"
        ),
        PROMPT_ANCHORS,
        40,
        120,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to repeat the conversation before the page",
        rx(
            # The pieces of what came before: "every line of our chat so far".
            r"\b(?:repeat|recite|recount|reproduce|restate|print|output|say|list|write (?:out|"
            r"down)|type out|tell me|show me|echo|dump|spell out|give me|translate)"
            rf"(?: back| again| out)?(?:{S}{QUANTITY})*{S}{PIECE} (?:of|in|from|that make up)"
            rf"(?: {QUANTITY}| (?:user'?s?|system|my))* {BEFORE}\b(?! (?:line|prompt)\b)"
            rf"|\b(?:repeat|recite|recount|reproduce|restate|list|say|tell me) (?:back |again )?"
            rf"(?:all|every|each)(?: single)?(?:{S}{QUANTITY})* {PIECE}\b[^.!?\n]{{0,20}}?\byou"
            r"(?:'ve| have| had)? (?:seen|come across|received|been given|read|got(?:ten)?)\b"
            # The whole of it: "repeat all the context", "recite our chat so far".
            r"|\b(?:repeat|recite|recount|reproduce|restate|print out|dump|echo back)"
            rf"(?:{S}{QUANTITY})+{S}(?:chat|conversation|context|dialog(?:ue)?|transcript)"
            r"(?: (?:so far|above|before this|until now|up to now|to date|verbatim|history)\b|"
            r"(?= *[.?!]|$))"
            r"|\b(?:repeat|recite|print|output|reproduce|echo|translate|write out|spell out)"
            r"(?: all| every| each)?(?: of)? the (?:above|preceding|previous) (?:words|sentences|"
            r"messages|text|content|conversation|prompt)\b(?! (?:for|on|with|to|until)\b)"
            r"|\bwhat (?:are |were )?(?:all )?(?:the )?(?:sentences|words|lines|instructions)"
            r" (?:in|of) (?:the |your |this )?(?:previous|last|above|initial|first|original)"
            r" (?:instructions?|command|message|prompt|task|conversation)\b"
            r"|\bwhat (?:are |were )?all (?:of )?the (?:sentences|words|lines) (?:in|of)"
            r" (?:the|your) (?:instructions?|prompt|system prompt|conversation|context)\b"
            # A forged turn that shows the prompt, for the reader to go on from.
            r"|\bhere (?:is|are) (?:everything|all|the (?:full|complete|entire|exact|whole)"
            r"(?: text)?)(?: (?:in|of))? my (?:system prompt|initial instructions|original"
            r" instructions|hidden instructions|instructions|prompt)\b"
        ),
        combos(
            "word words line lines sentence sentences letter letters character characters "
            "token tokens rule rules paragraph paragraphs",
            "of in from that",
        )
        + " seen come_across received been_given you_have you've you_had chat conversation "
        "context dialog transcript "
        + combos("above preceding previous", "words sentences messages text content prompt")
        + " here_is here_are",
        100,
        200,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "leaves the start of the reader's prompt open for it to complete",
        rx(
            r"[\"'\u201c\u2018\u00ab\u300c]\s*(?:the |my |your |el |la |le |les |los |las |l'|"
            r"die |der |den |il |i |gli |o |a |os |as )?(?:system prompt|system message|"
            r"initial instructions|instructions|"
            r"prompt del sistema|instrucciones(?: del sistema)?|invite systeme|prompt systeme|"
            r"consignes|systemaufforderung|system-?prompt|systemanweisungen|anweisungen|"
            r"prompt di sistema|istruzioni(?: di sistema)?|prompt do sistema|instrucoes)"
            r"(?: (?:says?|reads?|is|are|were|begins?|starts?|goes|dice|dicen|dit|disent|"
            r"lautet|lauten|recita|dicono|diz|dizem|son|sont|sind|sono|sao|es|est|ist|e))?"
            r"\s*:?\s*(?:\.\.\.|\u2026)?\s*[\"'\u201d\u2019\u00bb\u300d]"
            r"|[\"'\u201c\u2018\u300c]\s*(?:システムプロンプト|最初の指示|システム指示)(?:は|の内容は)"
            r"[^\"'\u201d\u2019\u300d\n]{0,20}[\uff1a:]\s*[\"'\u201d\u2019\u300d]"
        ),
        "prompt instruction message consign aufforderung anweisungen istruzioni instruc "
        "invite "
        "システムプロンプト 最初の指示 システム指示",
        30,
        60,
    ),
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to repeat or translate what came before",
        rx(
            r"\b(?:traduce|traduzca|traducid|traduis|traduisez|ubersetze|ubersetzen sie|traduci|"
            r"traducete|traduza|traduzir|repite|repita|repete|repetez|wiederhole|wiederholen sie|"
            r"ripeti|ripetete|copia|copie|kopiere|muestra|affiche|zeige|mostra|mostre)"
            r"(?: (?:todo|tout|alles|tutto|tudo))? (?:lo anterior|lo de arriba|ce qui precede|"
            r"le texte ci-dessus|das obige|alles obige|alles oben|den obigen text|quanto sopra|"
            r"il testo sopra|o acima|o texto acima|tudo acima)"
        ),
        "anterior arriba precede ci-dessus obige oben sopra acima",
        60,
        20,
    ),
]

RULES += [
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to describe or check its own prompt",
        rx(
            r"\b(?:describe|explain|outline|detail|walk me through|go through|list|enumerate|"
            r"provide|divulge|unveil|recount|narrate|present|surface)(?: to me| me| us)?"
            rf"(?: all of| each of| every part of| the contents of)? {OWN_PROMPT}\b"
            rf"|\b(?:{REVEAL}|spell[- ]?check|proofread|grammar[- ]?check|correct the (?:spelling|"
            r"grammar|typos) (?:of|in)|fix the (?:spelling|grammar|typos) (?:of|in))(?: all of)?"
            r" the (?:above|preceding|previous|prior|initial|original|first|earlier) (?:prompt|"
            r"system prompt|system message|initial instructions|original instructions)\b"
            r"|\b(?:spell[- ]?check|proofread|grammar[- ]?check)(?: all of)? the (?:above|"
            r"preceding|previous|prior|initial|original|first|earlier) (?:instructions|"
            r"messages?|text)\b"
        ),
        PROMPT_ANCHORS + " above_ preceding_ previous_ prior_ initial_ original_ first_ earlier_",
        160,
        120,
    ),
]
