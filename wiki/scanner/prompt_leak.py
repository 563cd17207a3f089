"""Requests to reveal, repeat or transform the reader's prompt or first instructions:
asked plainly, as a question, through an encoding or a translation, or by having the
reader continue a prefix of its own prompt ("the words above, starting with 'You are'")."""

from __future__ import annotations

from wiki.scanner.words import ANY_WORD, PhraseRule, S, rx

# Doing something to a text that makes it visible: showing it, or turning it into
# another form (an encoding, a translation, a summary) that still carries it.
REVEAL = (
    r"(?:reveal|repeat|recite|print(?: out)?|output|show(?: me| us)?|display|disclose|leak|"
    r"dump|share|paste|copy|type out|write out|write down|spell out|read out|read back|"
    r"echo|reproduce|restate|quote|give me|tell me|send me|summari[sz]e|translate|encode|"
    r"rewrite|transcribe|paraphrase|expose|spell|include|incorporate|embed|weave|hide|insert)"
)
# The reader's own prompt, however it is named.
PROMPT = (
    r"(?:system[ -]?(?:prompts?|messages?|instructions?)|developer (?:prompts?|messages?|"
    r"instructions)|pre-?prompts?|meta-?prompts?|(?:initial|original|hidden|secret|internal|"
    r"starting|opening|first|very first|base|underlying|full|entire|complete|exact|verbatim)"
    r"(?: system)? (?:prompts?|instructions|directives|configuration)"
    r"|(?:instructions?|prompts?|rules|guidelines|directives)"
    r" (?:you (?:were|have been|had been) (?:given|told|provided)|you (?:received|got)"
    r"|(?:given|provided|passed) to you|that (?:you were|were) given)"
    r"|(?:everything|all of|all|the (?:entire|full|whole|complete) (?:text|conversation|"
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
    r" (?:of|in) (?:your|the) (?:system |initial |original )?(?:prompt|instructions))"
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
    "your_role your_operating you_have_to you_must you_need_to you_are_supposed you_are_told "
    "you_are_required you_are_instructed"
)

RULES = [
    PhraseRule(
        "prompt-leak",
        "medium",
        "asks the reader to reveal or transform its prompt or first instructions",
        rx(
            rf"\b{REVEAL}(?:{S}(?:me|us|back|out|all|verbatim|exactly|word for word|"
            rf"everything(?: in)?|what|the (?:contents?|text|full text|entirety|exact "
            rf"(?:text|wording)|wording|rest|whole|start|beginning) of|of|your|the|my|its|this|"
            rf"these|entire|full|whole|complete|exact|original|initial|hidden|secret|internal|raw|"
            rf"unedited|unfiltered)){{0,6}}{S}{PROMPT}\b"
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
        ),
        PROMPT_ANCHORS + " your_developer your_creator your_operator the_developer the_creator "
        "the_operator",
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
            r"|\b(?:continue|complete|finish)(?: the| this)? (?:sentence|text|phrase|line|"
            r"following|paragraph)\b[^\n]{0,40}?[\"'\u201c\u2018:]\s*you are\b"
        ),
        "with continu complet finish go_on carry_on",
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
    r" initiali[sz]ed with|came across)|(?:in|of|from) (?:this|our|the) (?:conversation|chat|"
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
