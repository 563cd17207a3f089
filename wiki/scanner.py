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
- ``fake-system-message``: chat-template tokens, fake system / tool tags and headers.
- ``exfiltration-url``: asks to send secrets or conversation data to an address; URLs
  with placeholders for private data.
- ``exfiltration-image``: images and links that carry placeholders or encoded data in
  their query string.
- ``zero-width``, ``bidi-control``: invisible and reordering characters (Unicode tag
  characters are decoded).
- ``html-comment``, ``hidden-style``: text a person does not see when the page renders.
- ``base64-blob``: long base64, decoded and scanned again.
- ``agent-addressed``, ``concealment``, ``prompt-leak``: text that speaks to AI readers,
  asks them to hide what they do from the user, or to reveal their prompt.

Phrase rules run on a normalised copy of the text (NFKC, casefolded, accents and
invisible characters removed, mixed-script look-alikes folded, letter-by-letter
spelling and leetspeak undone, runs of spaces collapsed) so that obfuscation does not
hide an instruction. The copy carries a map back to the original, so findings always
point at the original text. Structural rules read the original. Code spans and fenced
blocks render as code, so the HTML, image and hidden-text rules skip them.

Pure Python on purpose: the command line, the services and the bench share it. Bump
``SCANNER_VERSION`` whenever a rule changes, so that stored verdicts are refreshed.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from bisect import bisect_right
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Literal, NamedTuple

SCANNER_VERSION = 1

Severity = Literal["high", "medium", "low"]
SEVERITY_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2}
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class Finding:
    """One rule match; ``start``/``end`` are offsets into the original text."""

    rule: str
    severity: Severity
    message: str
    start: int
    end: int
    excerpt: str

    def to_dict(self) -> dict[str, object]:
        """The finding as JSON-ready data."""
        return asdict(self)


def is_flagged(findings: list[Finding]) -> bool:
    """True when any finding is high or medium severity."""
    return any(f.severity in ("high", "medium") for f in findings)


def excerpt(text: str, start: int, end: int) -> str:
    """The original span, shortened, with invisible characters made visible."""
    span = text[start:end]
    if len(span) > EXCERPT_CHARS:
        span = span[: EXCERPT_CHARS - 1] + "…"
    return "".join(_visible(ch) for ch in span)


def _visible(ch: str) -> str:
    if ch in "\n\t":
        return " "
    if unicodedata.category(ch) in ("Cf", "Cc", "Co", "Cn") or ch in INVISIBLE:
        return f"<U+{ord(ch):04X}>"
    return ch


# --- Character classes ------------------------------------------------------------------

ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u034f")
BIDI_OVERRIDE = frozenset("\u202d\u202e")  # LRO, RLO: reorder what follows
BIDI_EMBED = frozenset("\u202a\u202b\u202c\u2066\u2067\u2068\u2069")
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
INVISIBLE = ZERO_WIDTH | BIDI_OVERRIDE | BIDI_EMBED

# Look-alikes folded only inside words that mix Latin with Cyrillic or Greek, so that
# genuine Russian or Greek text is left alone.
HOMOGLYPHS = str.maketrans(
    "авекмнорстухіјѕԁԛԝһӏαβεζηικμνορτυχ",
    "abekmhopctyxijsdqwhlabezhikmvoptux",
)
LEET = str.maketrans("013457", "oieast")


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """NFKC, casefold, then drop combining marks and invisible format characters."""
    if unicodedata.category(ch) == "Cf":
        return ""
    folded = unicodedata.normalize("NFKC", ch).casefold()
    decomposed = unicodedata.normalize("NFD", folded)
    return "".join(
        c for c in decomposed if not unicodedata.combining(c) and unicodedata.category(c) != "Cf"
    )


# --- Normalisation with an offset map ---------------------------------------------------


class Normalised:
    """A matching copy of a text and the way back to original offsets.

    The map is sparse: ``keys[k]`` (a position in the copy) corresponds to
    ``values[k]`` (an offset in the original), and positions after a key run on
    linearly until the next key. Edits add keys; untouched stretches need none.
    """

    __slots__ = ("keys", "original", "text", "values")

    def __init__(self, original: str, text: str, points: list[tuple[int, int]]) -> None:
        self.original = original
        self.text = text
        self.keys = [key for key, _ in points]
        self.values = [value for _, value in points]

    def position(self, index: int) -> int:
        """The original offset of the character at ``index`` in the copy."""
        k = bisect_right(self.keys, index) - 1
        return min(self.values[k] + index - self.keys[k], len(self.original))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original (start, end) for the normalised span [start, end)."""
        if end <= start:
            pos = self.position(start)
            return pos, pos
        return self.position(start), self.position(end - 1) + 1


# (position in the copy, offset in the original) pairs; see Normalised.
Points = list[tuple[int, int]]


def _lookup(keys: list[int], values: list[int], index: int) -> int:
    k = bisect_right(keys, index) - 1
    return values[k] + index - keys[k]


def _compose(outer: Points, inner: Points) -> Points:
    """Points for ``inner(outer(x))``: copy-to-intermediate, then intermediate-to-original."""
    if inner == [(0, 0)]:
        return outer
    inner_keys = [key for key, _ in inner]
    inner_values = [value for _, value in inner]
    composed: Points = []
    for i, (position, middle) in enumerate(outer):
        stop = middle + (outer[i + 1][0] - position) if i + 1 < len(outer) else 1 << 62
        composed.append((position, _lookup(inner_keys, inner_values, middle)))
        k = bisect_right(inner_keys, middle)
        while k < len(inner_keys) and inner_keys[k] < stop:
            composed.append((position + inner_keys[k] - middle, inner_values[k]))
            k += 1
    return composed


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# Seeds that find the few words worth a closer look; whole-word regexes are slow here.
_CYR_GREEK = re.compile(r"[\u0370-\u03ff\u0400-\u052f]")
_LATIN = re.compile(r"[a-z]")
_LEET_DIGIT = re.compile(r"[013457]")
# Single letters split by one space, dot or dash ("I g n o r e", "D.i.s.r.e.g.a.r.d").
_SPLIT_LETTERS = re.compile(r"\w([ .*_·-])\w\1\w(?:\1\w)*")
# Tabs and other odd spaces become spaces; runs of spaces inside a line become one. Line
# breaks and indentation stay, since the patterns accept any whitespace there.
_ODD_SPACE = re.compile(r"[^\S \n]")
_SPACE_RUN = re.compile(r"  +")


def _fold(text: str) -> tuple[str, Points]:
    """Fold the non-ASCII runs character by character; ASCII is only lowercased."""
    pieces: list[str] = []
    points: Points = [(0, 0)]
    out = 0  # length of the copy so far
    last = 0
    for run in _NON_ASCII_RUN.finditer(text):
        pieces.append(text[last : run.start()].lower())
        out += run.start() - last
        for i in range(run.start(), run.end()):
            folded = _fold_char(text[i])
            if not folded:
                continue  # dropped; the next kept character starts a new point
            if len(folded) > 1 or out - points[-1][0] != i - points[-1][1]:
                points.append((out, i))
            for extra in range(1, len(folded)):
                points.append((out + extra, i))  # every expanded character maps to its source
            pieces.append(folded)
            out += len(folded)
        points.append((out, run.end()))
        last = run.end()
    pieces.append(text[last:].lower())
    return "".join(pieces), points


def _translate_words(
    text: str, seed: re.Pattern[str], table: dict[int, str], wanted: object
) -> str:
    """Translate (length-preserving) each word around a seed match that ``wanted``."""
    pieces: list[str] = []
    last = seen = 0
    for match in seed.finditer(text):
        if match.start() < seen:
            continue
        start, end = match.start(), match.end()
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum():
            end += 1
        seen = end
        word = text[start:end]
        if wanted(word):  # type: ignore[operator]
            pieces += [text[last:start], word.translate(table)]
            last = end
    return "".join([*pieces, text[last:]]) if pieces else text


def _is_mixed_script(word: str) -> bool:
    return bool(_LATIN.search(word)) and bool(_CYR_GREEK.search(word))


def _unleet(text: str) -> str:
    """Read digits as letters inside words that mix both ("1gn0r3" is "ignore")."""
    pieces: list[str] = []
    last = seen = 0
    for match in _LEET_DIGIT.finditer(text):
        i = match.start()
        if i < seen or not (
            (i and "a" <= text[i - 1] <= "z") or (i + 1 < len(text) and "a" <= text[i + 1] <= "z")
        ):
            continue
        start, end = i, i + 1
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        while end < len(text) and text[end].isalnum():
            end += 1
        seen = end
        if end - start <= 24:  # longer runs are hashes and identifiers
            pieces += [text[last:start], text[start:end].translate(LEET)]
            last = end
    return "".join([*pieces, text[last:]]) if pieces else text


def _squeeze(text: str) -> tuple[str, Points]:
    """Join letter-by-letter spelling and collapse runs of spaces inside a line."""
    if _ODD_SPACE.search(text):
        text = _ODD_SPACE.sub(" ", text)
    cuts: list[tuple[int, int, str]] = []  # (start, end, what replaces text[start:end])
    for match in _SPLIT_LETTERS.finditer(text):
        start, end = match.span()
        if not (start and text[start - 1].isalnum()) and not (
            end < len(text) and text[end].isalnum()
        ):
            cuts.append((start, end, match.group()[::2]))
    for match in _SPACE_RUN.finditer(text):
        if match.start() and text[match.start() - 1] != "\n":
            cuts.append((match.start(), match.end(), " "))
    cuts.sort()
    pieces: list[str] = []
    points: Points = [(0, 0)]
    out = last = 0
    for start, end, replacement in cuts:
        if start < last:
            continue
        pieces.append(text[last:start])
        out += start - last
        # Joined letters keep every other character; a space run keeps its first.
        points += [(out + k, start + 2 * k) for k in range(len(replacement))]
        pieces.append(replacement)
        out += len(replacement)
        points.append((out, end))
        last = end
    pieces.append(text[last:])
    return "".join(pieces), points


def normalise(text: str) -> Normalised:
    """The matching copy of ``text`` with its map back to original offsets."""
    if text.isascii():
        folded, folded_points = text.lower(), [(0, 0)]
    else:
        folded, folded_points = _fold(text)
        if _CYR_GREEK.search(folded):
            folded = _translate_words(folded, _CYR_GREEK, HOMOGLYPHS, _is_mixed_script)
    folded = _unleet(folded)
    squeezed, points = _squeeze(folded)
    return Normalised(text, squeezed, _compose(points, folded_points))


# --- Phrase rules (run on the normalised text) ------------------------------------------

# Between words: spaces plus the Markdown and quoting punctuation that obfuscation uses.
S = r"[\s*_~`>\"'\u201c\u201d\u2018\u2019()\[\]|,:-]+"
ANY_WORD = r"[\w'\u2019-]+"
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
SENSITIVE = (
    r"(?:secrets?|tokens?|credentials?|passwords?|passphrases?|api[ _-]?keys?|"
    r"access[ _-]?keys?|private[ _-]?keys?|ssh[ _-]?keys?|keys|id_rsa|~/\.ssh|\.ssh|"
    r"\.env\b|\.aws|env(?:ironment)?[ _-]?var(?:iable)?s|os\.environ|cookies?|"
    r"session[ _-]?(?:ids?|tokens?)|conversations?|chat(?:[ _-]?(?:history|log))|"
    r"(?:previous|last|user'?s?|private|direct) messages|memories|facts about|system prompt|"
    r"contact[ _-]?list|personal (?:details|data|information)|private (?:notes|pages|data)|"
    r"card details|everything you know|(?:all|every|any) (?:the )?(?:data|files|pages))"
)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


class PhraseRule(NamedTuple):
    """A pattern for the normalised text, run only near its anchors.

    ``anchors`` are literals that every match contains ("_" for a space, a leading "="
    for a whole word; empty means scan everything). The pattern runs from ``before``
    characters ahead of an anchor to ``after`` characters past it.
    """

    rule: str
    severity: Severity
    message: str
    pattern: re.Pattern[str]
    anchors: str = ""
    before: int = 0
    after: int = 0


PHRASE_RULES: list[PhraseRule] = [
    PhraseRule(
        "instruction-override",
        "high",
        "tells the reader to ignore its instructions",
        _rx(
            rf"\b{OVERRIDE_VERB}(?:{S}{ANY_WORD}){{0,3}}?{S}{QUALIFIER}"
            rf"(?:{S}{ANY_WORD}){{0,3}}?{S}{DIRECTIVE}\b"
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
        _rx(
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
        _rx(
            r"\b(?:(?:your|previous|prior|earlier|original|initial|existing|system|all earlier|"
            r"all previous|all prior)(?: \w+)? (?:instructions?|directives?|guidelines|rules|"
            r"prompt|orders)(?: (?:you|that you) (?:received|were given|got|have been given))?"
            r"|(?:the )?(?:instructions?|directives?|guidelines|rules|orders)"
            r" (?:you (?:received|were given|got|have been given)|before this(?: point| line)?|"
            r"above|so far))"
            r"(?: (?:earlier|before|previously|so far))?"
            r" (?:(?:are|is|were|was|have been|has been|did|do)(?: now| hereby| all)?"
            r" (?:no longer (?:valid|active|in effect|apply|applicable)|void|null|cancell?ed|"
            r"revoked|suspended|invalid|fake|false|overridden|superseded|lifted|not apply|"
            r"not valid|not real)|(?:no longer|don't|doesn't) apply)\b(?! to\b| for\b| in\b)"
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
        _rx(
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
        _rx(
            r"\b(?:new|updated|revised|real|actual|true|genuine)(?: system)? instructions?\s*:"
            r"|\byour (?:real|actual|true|genuine|new|updated|only|sole) (?:instructions?|task|"
            r"objective|goal|purpose|job|mission|orders|directives?)(?: now| here)?"
            r" (?:is|are|begins?|starts?|follows?)\b"
            r"|\b(?:the )?(?:real|actual|true|genuine) instructions? (?:\w+ ){0,4}follows?\b"
            r"|\binstead of (?:your|the system'?s?|the developer'?s?|previous|prior|your previous)"
            r" (?:instructions|prompt|guidelines|rules|task)"
        ),
        "instruction task objective goal purpose job mission orders directive instead_of",
        60,
        80,
    ),
    PhraseRule(
        "instruction-override",
        "medium",
        "redirects the reader's behaviour from now on",
        _rx(
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
        _rx(
            r"\b(?:ignorier\w*|vergiss\w*|missachte\w*)(?: \w+){0,2}"
            r" (?:vorherigen|bisherigen|obigen|fruheren|vorigen)"
            r" (?:anweisungen|instruktionen|regeln)"
            r"|\b(?:ignor\w*|olvid\w*|esquec\w*|dimentic\w*|oubli\w*)(?: \w+){0,3}"
            r" (?:instrucciones|instrucoes|istruzioni|instructions|consignes|regles|reglas|regras)"
            r" (?:anteriores|previas|precedentes|precedenti|previe|anterieures)"
            r"|\b(?:negeer|vergeet)(?: \w+){0,2} (?:vorige|eerdere) (?:instructies|regels)"
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
        _rx(
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
        _rx(
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
        _rx(
            r"\b(?:you have been jailbroken|jailbreak mode|do anything now|developer mode enabled|"
            r"(?:your |all )?(?:safety|content|ethical) (?:filters?|guidelines|restrictions|rules|"
            r"checks) (?:are|have been) (?:now )?(?:off|disabled|removed|lifted)|"
            r"(?:enable|activate|enter|switch to)(?: the)? (?:developer|dan|god|jailbreak|evil|"
            r"unrestricted) mode|stay in character|broken free|free (?:from|of) (?:the |all |any |"
            r"your )?(?:restrictions|rules|guidelines|confines|constraints|limitations)|"
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
        _rx(
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
        _rx(
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
        _rx(
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
        _rx(
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
        _rx(
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
            r"|(?:^|[.!?]\s|,\s?)(?:assistant|ai|agent|bot|claude|chatgpt|gpt|copilot|gemini),\s"
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
        _rx(
            r"\b(?:do not|don't|never|without) (?:tell|telling|inform|informing|notify|notifying|"
            r"mention|mentioning|alert|alerting|reveal|revealing|show|showing)"
            r"(?: (?:the|this|any|your))?(?: (?:user|users|anyone|anybody|human|humans|operator|"
            r"people|them|it|this|that|instructions?|message|page|change|request))?"
            r"(?: (?:about (?:it|this|that)|you did|that you|this note|note|to (?:the )?users?|"
            r"this to|that this)|\s*[.;,)]|$)"
            r"|\b(?:do|perform|make) (?:it|this|that|the change|the changes) (?:silently|quietly|"
            r"secretly)\b|(?:^|[.!?]\s)secretly \w+"
            r"|\b(?:do|proceed|act|run|execute|continue)(?: (?:it|this|that))? without asking\b"
            r"|\b(?:you )?(?:don't|do not|never) (?:need to )?ask (?:for (?:confirmation|"
            r"permission)|again|the user)\b"
        ),
        (
            "tell inform notify mention alert reveal show silently quietly secretly "
            "without_asking ask_for ask_again ask_the"
        ),
        40,
        80,
    ),
    PhraseRule(
        "concealment",
        "medium",
        "claims the user has already given permission",
        _rx(
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


# --- Code regions -----------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)[^\n]*+\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
# Atomic backtick runs keep a long run of backticks from being retried at every position.
_INLINE_CODE = re.compile(r"(?<!`)(`++)[^`\n]+?(?<!`)\1(?!`)")


class CodeMask:
    """Where fenced blocks and inline code spans sit: rendered as code, never as HTML."""

    def __init__(self, text: str) -> None:
        fences = (
            [m.span() for m in _FENCE.finditer(text)] if ("```" in text or "~~~" in text) else []
        )
        self.starts = [start for start, _ in fences]
        self.ends = [end for _, end in fences]
        if "`" in text:
            inline = [m.span() for m in _INLINE_CODE.finditer(text) if m.start() not in self]
            spans = sorted([*fences, *inline])
            self.starts = [start for start, _ in spans]
            self.ends = [end for _, end in spans]

    def __contains__(self, pos: int) -> bool:
        k = bisect_right(self.starts, pos) - 1
        return k >= 0 and pos < self.ends[k]


# --- Exfiltration -----------------------------------------------------------------------

DESTINATION = r"(?:https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d{1,3}(?:\.\d{1,3}){3}\b)"
_TRANSFER = _rx(
    r"\b(?:send|post|upload|forward|transmit|submit|e-?mail|mail|exfiltrate|leak|copy|"
    r"paste|share|append|attach|include|dump|push|relay|deliver|pipe|beam)\b"
)
_TO_DESTINATION = _rx(
    rf"\b(?:to|into|at) (?:(?:the|our|this|that|my|a|an) )?(?:[\w-]+ ){{0,2}}?"
    rf"{DESTINATION}"
)
_SENSITIVE = _rx(rf"(?<![\w.-]){SENSITIVE}(?![\w-])")
_NEGATION = _rx(r"\b(?:never|not|don't|dont|no|avoid|without)\b")
_IP_ADDRESS = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")

PLACEHOLDER = re.compile(
    r"\{\{?\s*([^{}\s]{1,40})\s*\}?\}|\$\{([^}]{1,40})\}|\$([A-Za-z_][A-Za-z0-9_]{1,40})"
    r"|<([^<>\s]{1,40})>|\[([^\[\]\s]{1,40})\]|%7B([^%]{1,40})%7D"
    r"|(?<![A-Za-z0-9])((?:YOUR|INSERT|USER|THE)_[A-Z0-9_]+|[A-Z][A-Z0-9]*_(?:HERE|KEY|TOKEN"
    r"|SECRET|PASSWORD|DATA|EMAIL)|DATA|SECRET|TOKEN|PASSWORD|CONVERSATION|HISTORY)(?![a-z0-9])",
)
SENSITIVE_NAME = re.compile(
    r"secret|token|key|passw|pwd|cookie|session|sid|history|chat|conversation|transcript|"
    r"memor|summary|prompt|credential|context|message|e-?mail|user|name|data|env|card",
    re.I,
)
_LONG_VALUE = re.compile(r"=([A-Za-z0-9+/_-]{32,}={0,2})(?:&|$)")
_URL = re.compile(
    r"https?://(?:[^\s<>\"'`()\[\]{}]|\{\{?[^\s{}]{1,40}\}?\}|<[\w .-]{1,40}>|\[[\w .-]{1,40}\])+"
)
_MD_IMAGE = re.compile(r"!\[[^\[\]\n]*\]\(\s*<?([^)\s>]+)")
_MD_LINK = re.compile(r"(?<!!)\[[^\[\]\n]*\]\(\s*<?([^)\s>]+)")
_HTML_IMG = re.compile(r"<img\b[^<>]{0,500}?\bsrc\s*=\s*[\"']?([^\"'\s>]+)", re.I)
_HTML_LINK = re.compile(r"<a\b[^<>]{0,500}?\bhref\s*=\s*[\"']?([^\"'\s>]+)", re.I)


def _query(url: str) -> str:
    _, _, rest = url.partition("?")
    return rest.partition("#")[0]


def _placeholders(query: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in PLACEHOLDER.finditer(query)]


def _decoded_text(blob: str) -> str | None:
    """The blob as base64 (standard or URL-safe) decoded to readable text, else None."""
    compact = re.sub(r"\s+", "", blob).rstrip("=")
    padded = compact + "=" * (-len(compact) % 4)
    for altchars in (None, b"-_"):
        try:
            raw = base64.b64decode(padded, altchars=altchars, validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t\r" for ch in decoded)
        if decoded and printable / len(decoded) > 0.95:
            return decoded
    return None


# --- Finders ----------------------------------------------------------------------------


def _make(rule: str, severity: Severity, message: str, text: str, start: int, end: int) -> Finding:
    return Finding(rule, severity, message, start, end, excerpt(text, start, end))


def _parse_anchors(spec: str) -> tuple[tuple[str, bool], ...]:
    return tuple(
        (word.lstrip("=").replace("_", " "), word.startswith("=")) for word in spec.split()
    )


# Each anchor literal once, with the rules that use it.
_ANCHOR_RULES: dict[tuple[str, bool], list[int]] = {}
for _index, _rule in enumerate(PHRASE_RULES):
    for _anchor in _parse_anchors(_rule.anchors):
        _ANCHOR_RULES.setdefault(_anchor, []).append(_index)


def _occurrences(text: str, literal: str, whole_word: bool) -> list[int]:
    found = []
    pos = text.find(literal)
    while pos >= 0:
        end = pos + len(literal)
        if not whole_word or not (
            (pos and text[pos - 1].isalnum()) or (end < len(text) and text[end].isalnum())
        ):
            found.append(pos)
        pos = text.find(literal, pos + 1)
    return found


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
    for (literal, whole_word), indexes in _ANCHOR_RULES.items():
        if literal not in text:  # most are absent; ``in`` says so at C speed
            continue
        positions = _occurrences(text, literal, whole_word)
        for index in indexes:
            before, after = PHRASE_RULES[index].before, PHRASE_RULES[index].after + len(literal)
            spans[index] += [(max(0, p - before), min(len(text), p + after)) for p in positions]
    return [
        _merged(found) if rule.anchors else [(0, len(text))]
        for rule, found in zip(PHRASE_RULES, spans, strict=True)
    ]


def _phrase_findings(norm: Normalised) -> list[Finding]:
    found = []
    for phrase, windows in zip(PHRASE_RULES, _windows(norm.text), strict=True):
        for window_start, window_end in windows:
            for match in phrase.pattern.finditer(norm.text, window_start, window_end):
                if match.end() > match.start():
                    start, end = norm.span(*match.span())
                    found.append(
                        _make(
                            phrase.rule, phrase.severity, phrase.message, norm.original, start, end
                        )
                    )
    return found


def _sentence(text: str, pos: int) -> tuple[int, int]:
    """Bounds of the sentence (or line) around ``pos`` in the normalised text."""
    start = max(0, pos - 400)
    for mark in (". ", "! ", "? ", "\n"):
        found = text.rfind(mark, start, pos)
        if found >= 0:
            start = found + len(mark)
    following = _SENTENCE_END.search(text, pos, pos + 400)
    return start, following.start() if following else min(len(text), pos + 400)


def _exfil_sentence_findings(norm: Normalised, code: CodeMask) -> list[Finding]:
    """A transfer verb, something sensitive and an outside address in one sentence."""
    found = []
    text = norm.text
    # Addresses are rarer than verbs, so only sentences that hold one are read.
    sentences = {
        _sentence(text, pos)
        for mark in ("://", "www.", "@")
        for pos in _occurrences(text, mark, False)
    }
    sentences |= {_sentence(text, match.start()) for match in _IP_ADDRESS.finditer(text)}
    for start, end in sorted(sentences):
        while start < end and text[start] == " ":
            start += 1
        for verb in _TRANSFER.finditer(text, start, end):
            if norm.position(verb.start()) in code or _NEGATION.search(text, start, verb.start()):
                continue
            if _TO_DESTINATION.search(text, verb.end(), end) and _SENSITIVE.search(
                text, start, end
            ):
                found.append(
                    _make(
                        "exfiltration-url",
                        "high",
                        "asks for secrets or conversation data to be sent to an address",
                        norm.original,
                        *norm.span(start, end),
                    )
                )
                break
    return found


def _url_findings(text: str, code: CodeMask) -> list[Finding]:
    """Images and links that carry placeholders or data out in their query string."""
    found = []
    covered: set[int] = set()  # where image and link URLs start; bare URLs skip them
    sources = (
        (_MD_IMAGE, True, "image"),
        (_HTML_IMG, True, "image"),
        (_MD_LINK, False, "link"),
        (_HTML_LINK, False, "link"),
    )
    for pattern, is_image, kind in sources:
        for match in pattern.finditer(text):
            if match.start() in code:
                continue
            url = match.group(1)
            covered.add(match.start(1))
            query = _query(url)
            names = _placeholders(query)
            if names:
                found.append(
                    _make(
                        "exfiltration-image",
                        "high" if is_image else "medium",
                        f"{kind} URL has placeholders for data in its query string: "
                        + ", ".join(names[:4]),
                        text,
                        match.start(),
                        match.end(),
                    )
                )
                continue
            for value in _LONG_VALUE.finditer(query):
                decoded = _decoded_text(value.group(1))
                if decoded:
                    found.append(
                        _make(
                            "exfiltration-image",
                            "high" if is_image else "medium",
                            f"{kind} URL carries encoded text in its query string: "
                            f"{decoded[:60]!r}",
                            text,
                            match.start(),
                            match.end(),
                        )
                    )
                    break
    for match in _URL.finditer(text):
        if match.start() in code or match.start() in covered:
            continue
        names = [n for n in _placeholders(_query(match.group())) if SENSITIVE_NAME.search(n)]
        if names:
            end = match.start() + len(match.group().rstrip(".,;:!?"))
            found.append(
                _make(
                    "exfiltration-url",
                    "high",
                    "URL asks for private data in its query string: " + ", ".join(names[:4]),
                    text,
                    match.start(),
                    end,
                )
            )
    return found


def _is_emoji(ch: str) -> bool:
    return (
        ord(ch) >= 0x1F000
        or ch in "\ufe0f\u2640\u2642\u2695\u2696\u2708\u2764"
        or (unicodedata.category(ch) == "So")
    )


def _joins_script(ch: str) -> bool:
    """Arabic-script and Indic letters use ZWJ/ZWNJ to choose letter forms."""
    code = ord(ch)
    return (
        0x0600 <= code <= 0x08FF
        or 0x0900 <= code <= 0x0DFF
        or 0xFB50 <= code <= 0xFDFF
        or 0xFE70 <= code <= 0xFEFC
    )


def _explained(text: str, i: int) -> bool:
    """Whether the invisible character at ``i`` has an ordinary job there."""
    ch = text[i]
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch == "\ufeff" and i == 0:
        return True  # byte-order mark
    if ch in "\u200c\u200d" and (_joins_script(before) or _joins_script(after)):
        return True
    return (
        ch == "\u200d" and bool(before) and bool(after) and (_is_emoji(before) and _is_emoji(after))
    )


_INVISIBLE_RUN = re.compile(
    "[\u200b-\u200d\u2060-\u2064\ufeff\u180e\u034f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]+"
)


def _invisible_findings(text: str) -> list[Finding]:
    """Zero-width, tag and bidi control characters in the original text."""
    if text.isascii():
        return []
    found = []
    zero_width: list[int] = []
    for run in _INVISIBLE_RUN.finditer(text):
        tags = [i for i in range(*run.span()) if ord(text[i]) >= TAG_FIRST]
        if tags and not (tags[0] > 0 and text[tags[0] - 1] == "\U0001f3f4"):
            hidden = "".join(
                chr(ord(text[i]) - TAG_FIRST)
                for i in tags
                if 0x20 <= ord(text[i]) - TAG_FIRST < 0x7F
            )
            found.append(
                _make(
                    "zero-width",
                    "high",
                    f"invisible Unicode tag characters spell {hidden[:80]!r}",
                    text,
                    tags[0],
                    tags[-1] + 1,
                )
            )
        bidi = [i for i in range(*run.span()) if text[i] in BIDI_OVERRIDE | BIDI_EMBED]
        if bidi:
            overrides = any(text[i] in BIDI_OVERRIDE for i in bidi)
            found.append(
                _make(
                    "bidi-control",
                    "high" if overrides else "medium",
                    "bidi override reverses how the following text is displayed"
                    if overrides
                    else "bidi embedding or isolate control characters",
                    text,
                    bidi[0],
                    bidi[-1] + 1,
                )
            )
        zero_width += [
            i for i in range(*run.span()) if text[i] in ZERO_WIDTH and not _explained(text, i)
        ]
    clusters: list[list[int]] = []
    for i in zero_width:
        if clusters and i - clusters[-1][-1] <= 3:
            clusters[-1].append(i)
        else:
            clusters.append([i])
    for cluster in clusters:
        many = len(cluster) > 1
        found.append(
            _make(
                "zero-width",
                "medium" if many else "low",
                f"{len(cluster)} zero-width characters hide or split text"
                if many
                else "a stray zero-width character",
                text,
                cluster[0],
                cluster[-1] + 1,
            )
        )
    return found


_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.S)
_COMMENT_DIRECTIVE = _rx(
    r"\b(?:ignore|disregard|forget|override|bypass|you must|you will|you are|you should|"
    r"assistant|ai|llm|agent|instructions?|system prompt|reply|respond|answer|"
    r"tell (?:the )?users?|say that|send|upload|post)\b|<\|"
)


def _comment_findings(text: str, code: CodeMask) -> list[Finding]:
    """HTML comments: invisible when rendered, so read what they tell the reader."""
    found = []
    for match in _COMMENT.finditer(text):
        if match.start() in code:
            continue
        body = normalise(match.group(1)).text
        if _COMMENT_DIRECTIVE.search(body):
            found.append(
                _make(
                    "html-comment",
                    "medium",
                    "hidden HTML comment speaks to the reader",
                    text,
                    *match.span(),
                )
            )
        else:
            found.append(_make("html-comment", "low", "HTML comment", text, *match.span()))
    return found


_STYLED_TAG = re.compile(
    r"<([a-z][a-z0-9]*)\b([^<>]{0,500}?\bstyle\s*=\s*(\"[^\"]*\"|'[^']*')[^<>]{0,500}"
    r"|[^<>]{0,500}?\shidden\b[^<>]{0,500})>",
    re.I,
)
_HIDING = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*(?:0+(?:\.0*)?|\.0+)\s*(?:;|$|!)"
    r"|font-size\s*:\s*(?:0|0?\.\d+|1)\s*(?:px|pt|em|rem|%)?\s*(?:;|$|!)"
    r"|(?<![-\w])color\s*:\s*(?:white|#fff(?:fff)?\b|rgba?\(\s*255\s*,\s*255\s*,\s*255|transparent)"
    r"|(?:left|top|text-indent)\s*:\s*-\d{4,}|(?:height|width|max-height)\s*:\s*0\b[^;]*;?.*overflow\s*:\s*hidden",
    re.I,
)
_DARK_BACKGROUND = re.compile(
    r"background(?:-color)?\s*:\s*(?!white|#fff(?:fff)?\b|rgba?\(\s*255\s*,\s*255\s*,\s*255)\S",
    re.I,
)
_TAG = re.compile(r"<[^>]*>")
_WORD = re.compile(r"[^\W\d_]{2,}")


_HIDDEN_ATTRIBUTE = re.compile(r"\shidden\b(?!\s*=\s*[\"']?false)", re.I)


def _hidden_style_findings(text: str, code: CodeMask) -> list[Finding]:
    """Elements styled (or marked) so that a person cannot see their text."""
    found = []
    for match in _STYLED_TAG.finditer(text):
        if match.start() in code:
            continue
        style = match.group(3)[1:-1] if match.group(3) else ""
        other_attributes = match.group(2).replace(match.group(3) or "\0", "")
        hiding = _HIDING.search(style)
        if hiding and hiding.group().lower().startswith("color") and _DARK_BACKGROUND.search(style):
            hiding = None  # light text on a dark background is visible
        if not hiding and not _HIDDEN_ATTRIBUTE.search(other_attributes):
            continue
        close = re.compile(rf"</{match.group(1)}\s*>", re.I).search(
            text, match.end(), match.end() + 4000
        )
        end = close.end() if close else min(len(text), match.end() + 400)
        inner = _TAG.sub(" ", text[match.end() : close.start() if close else end])
        words = len(_WORD.findall(inner))
        severity: Severity = "medium" if words >= 3 else "low"
        message = f"text hidden from people by styling ({words} words)"
        found.append(_make("hidden-style", severity, message, text, match.start(), end))
    return found


_BASE64 = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}(?:[ \t]*\n[ \t]*[A-Za-z0-9+/_-]{8,})*={0,2}"
    r"(?![A-Za-z0-9+/=_-])"
)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")


def _base64_findings(text: str, depth: int) -> list[Finding]:
    """Long base64 blobs, decoded and scanned again."""
    found = []
    for match in _BASE64.finditer(text):
        blob = match.group()
        if not (re.search(r"[a-z]", blob) and re.search(r"[A-Z0-9]", blob)) or _HEX.fullmatch(blob):
            continue  # long words, identifiers and hex digests, not encodings
        decoded = _decoded_text(blob)
        inner = scan(decoded, _depth=depth + 1) if decoded and depth < 2 else []
        if is_flagged(inner):
            worst = max(inner, key=lambda f: SEVERITY_RANK[f.severity])
            rules = ", ".join(sorted({f.rule for f in inner if f.severity != "low"}))
            found.append(
                _make(
                    "base64-blob",
                    worst.severity,
                    f"base64 decodes to an injection ({rules}): {decoded[:80]!r}",
                    text,
                    *match.span(),
                )
            )
        else:
            message = (
                f"base64 blob decodes to text: {decoded[:60]!r}"
                if decoded
                else ("long base64 blob")
            )
            found.append(_make("base64-blob", "low", message, text, *match.span()))
    return found


# --- Entry point ------------------------------------------------------------------------


def scan(text: str, *, _depth: int = 0) -> list[Finding]:
    """Every finding in ``text``, in document order, offsets into ``text``."""
    if not text:
        return []
    norm = normalise(text)
    code = CodeMask(text)
    found = [
        *_phrase_findings(norm),
        *_exfil_sentence_findings(norm, code),
        *_url_findings(text, code),
        *_invisible_findings(text),
        *_comment_findings(text, code),
        *_hidden_style_findings(text, code),
        *_base64_findings(text, _depth),
    ]
    return _merge(found)


def _merge(found: list[Finding]) -> list[Finding]:
    """One finding per rule per overlapping stretch, keeping the most severe."""
    found.sort(key=lambda f: (f.rule, f.start, -SEVERITY_RANK[f.severity]))
    merged: list[Finding] = []
    for finding in found:
        last = merged[-1] if merged else None
        if last and last.rule == finding.rule and finding.start < last.end:
            if SEVERITY_RANK[finding.severity] > SEVERITY_RANK[last.severity]:
                merged[-1] = finding
            continue
        merged.append(finding)
    merged.sort(key=lambda f: (f.start, -SEVERITY_RANK[f.severity], f.rule))
    return merged
