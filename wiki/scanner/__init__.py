"""Prompt-injection scanner for wiki content.

``scan(text)`` returns findings: which rule matched, how severe it is, and where in the
original text it sits. ``is_flagged(findings)`` is the verdict: a page with any high or
medium finding is withheld from agents until a person approves it.

Rules (ids are stable; findings are stored with pages):

- ``instruction-override``: ignore / disregard / forget previous instructions, "your
  instructions are void", "new instructions:", "from now on you ...", in several
  languages.
- ``role-impersonation``: "you are now ...", unrestricted personas, jailbreak modes, fake
  assistant turns that agree to instructions.
- ``fake-system-message``: chat-template tokens, fake system / tool tags and headers
  (also in other languages), bracketed context updates, forged ends of the user's input,
  marked ends of the prompt or session and fresh sessions said to start over.
- ``exfiltration-url``: asks to send secrets or conversation data to an address; URLs
  with placeholders for private data.
- ``exfiltration-image``: images and links that carry placeholders or encoded data in
  their query string.
- ``zero-width``, ``bidi-control``: invisible and reordering characters (Unicode tag
  characters are decoded).
- ``html-comment``, ``hidden-style``: text a person does not see when the page renders.
- ``base64-blob``: long base64, decoded and scanned again.
- ``encoded-text``: an injection hidden in hex, binary, base32, Ascii85, base85, percent or
  backslash escapes, character references, Morse, ROT13 or written backwards (decoded
  and scanned again; other encoded text is not reported).
- ``agent-addressed``, ``concealment``: text that speaks to AI readers (or claims to come
  from their user, or tells whatever AI retrieves it what to do), or asks them to hide
  what they do from the user.
- ``prompt-leak``: asks to reveal, repeat or transform the reader's prompt or first
  instructions, plainly, encoded, translated, turned into a format, taken apart word by
  word, searched for the secrets it holds, or continued from a prefix; or to repeat the
  conversation that came before the page.
- ``role-impersonation`` also covers a persona or mode set up close to the rules it
  drops ("you are Nova ... Nova has no filters").
- ``output-hijack``: a reply fixed whatever the user asks, its opening or closing words
  given ("start your answer with 'Sure'", "your first word must be"), given text forced
  into the reply, the reader's task swapped for another, or a reviewing reader told to
  set its criteria aside and approve.
- ``memory-poisoning``: an instruction to store a fact or rule (or change a remembered
  one, or file given text in its knowledge base) and act on it in later conversations.
- ``permission-claim``: approvals said to be given, confirmations, restrictions or
  safeguards said to no longer apply to the reader (also written as settings, such as
  "[SAFETY_FILTER=off]"), exemptions from its filters, authority over it claimed in the
  first person, its rules said to be rewritten, or an answer asked for without them.
- ``script-link``, ``active-html``: links and images whose target is a ``javascript:`` or
  ``data:`` URL, script URLs written out, script elements and event handlers.
- ``jailbreak``: a persona, mode or story (also in Russian, Chinese, Spanish, French,
  German, Portuguese and Italian) with telling cues close by: rules dropped, refusals
  forbidden, obedience demanded, a two-voice reply, threats to keep the role; a reply
  format laid down with a divider and numbered steps, with the same cues; refusal
  suppression on its own ("never say 'sorry'"), a reply stripped of refusals, warnings
  and disclaimers, and requests for what a version of the reader without rules would say.
- ``tool-abuse``: the reader told to call a tool that sends, deletes or pays, for the
  page (before replying, without asking, to an outside address, with all the data).
- ``decode-and-follow``: encoded text the reader must decode (or translate) and then
  obey, or an instruction it must assemble from pieces and then carry out.
- ``learned-injection`` (with ``scan(text, learned=True)``, as pages are saved): a
  passage that a classifier over sentence embeddings, trained on public attack
  collections and ordinary Markdown, scores as an attack: long role-play jailbreaks and
  instructions planted in tool output that no phrase rule matches. A low
  ``learned-skipped`` finding says when its weights or the local embedder were missing.

Phrase rules run on a normalised copy of the text (NFKC, casefolded, accents and
invisible characters removed, mixed-script look-alikes folded, letter-by-letter
spelling and leetspeak undone, runs of spaces collapsed, a paragraph wrapped over lines
read as one line) so that obfuscation does not
hide an instruction. The copy carries a map back to the original, so findings always
point at the original text. Structural rules read the original. Code spans and fenced
blocks render as code, so the HTML, image and hidden-text rules skip them.

The package holds one concern per module: ``normalise`` (the matching copy and its
offset map), ``phrases`` (the phrase rules, with one module per class of attack:
``prompt_leak``, ``hijack``, ``memory``, ``permissions``, ``tools``), ``persona``
(role-play overrides), ``jailbreak`` (several jailbreak cues together),
``exfiltration`` (sending data out, in words), ``links`` (URLs that carry data out),
``active`` (script and data URLs, scripting HTML), ``hidden`` (invisible characters,
comments, styling), ``encoded`` (base64 and other encodings), ``code`` (where code spans sit),
``learned`` (passages, their embeddings and the classifier's weights in ``model/``) and
``findings`` (what a rule reports and the verdict).

Pure Python on purpose (the learned pass adds numpy and the bundled embedding model, no
Django): the command line, the services and the bench share it. Bump
``SCANNER_VERSION`` whenever a rule changes, so that stored verdicts are refreshed.
"""

from __future__ import annotations

from wiki.scanner.active import active_findings
from wiki.scanner.code import CodeMask
from wiki.scanner.encoded import base64_findings, encoded_findings
from wiki.scanner.exfiltration import exfiltration_findings
from wiki.scanner.findings import SEVERITY_RANK, Finding, Severity, excerpt, is_flagged, merge
from wiki.scanner.hidden import comment_findings, hidden_style_findings, invisible_findings
from wiki.scanner.jailbreak import jailbreak_findings
from wiki.scanner.learned import learned_findings
from wiki.scanner.links import link_findings
from wiki.scanner.normalise import Normalised, normalise
from wiki.scanner.persona import persona_findings, persona_spans
from wiki.scanner.phrases import phrase_findings

__all__ = [
    "SCANNER_VERSION",
    "SEVERITY_RANK",
    "Finding",
    "Normalised",
    "Severity",
    "excerpt",
    "is_flagged",
    "normalise",
    "scan",
]

SCANNER_VERSION = 6
# Base64 inside base64 is decoded this many times, no more.
MAX_DECODE_DEPTH = 2


def scan(text: str, *, learned: bool = False, _depth: int = 0) -> list[Finding]:
    """Every finding in ``text``, in document order, offsets into ``text``. With
    ``learned``, the learned pass reads the text too (it embeds the text's passages:
    pages being saved, not every test of a rule, need it)."""
    if not text:
        return []
    norm = normalise(text)
    code = CodeMask(text)
    personas = persona_spans(norm.text)
    rescan = (
        (lambda decoded: scan(decoded, _depth=_depth + 1)) if _depth < MAX_DECODE_DEPTH else None
    )
    found = [
        *phrase_findings(norm),
        *persona_findings(norm, personas),
        *jailbreak_findings(norm, personas),
        *exfiltration_findings(norm, code),
        *link_findings(text, code),
        *active_findings(text, code),
        *invisible_findings(text),
        *comment_findings(text, code),
        *hidden_style_findings(text, code),
        *base64_findings(text, rescan),
        *encoded_findings(text, rescan),
        *(learned_findings(text) if learned else []),
    ]
    return merge(found)
