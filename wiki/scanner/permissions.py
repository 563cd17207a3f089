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
            r"|beforehand|already)\b)"
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
