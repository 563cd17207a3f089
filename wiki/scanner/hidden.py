"""Hidden content: invisible characters, HTML comments and text styled out of sight.
These read the original text, since the normalised copy has the hiding removed."""

from __future__ import annotations

import re
import unicodedata

from wiki.scanner.characters import BIDI_EMBED, BIDI_OVERRIDE, TAG_FIRST, ZERO_WIDTH
from wiki.scanner.code import CodeMask
from wiki.scanner.findings import Finding, Severity, finding
from wiki.scanner.normalise import normalise
from wiki.scanner.words import rx


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


def invisible_findings(text: str) -> list[Finding]:
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
                finding(
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
                finding(
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
            finding(
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
_COMMENT_DIRECTIVE = rx(
    r"\b(?:ignore|disregard|forget|override|bypass) (?:the|all|any|previous|prior|above|earlier|"
    r"your|these|those|this|my|every)\b|\b(?:assistants?|ai|llms?|chatbots?|language models?|"
    r"claude|chatgpt|gpt|copilot|gemini|system prompt)\b|\btell (?:the )?users?\b|\bsay that\b"
    r"|<\|"
)


def comment_findings(text: str, code: CodeMask) -> list[Finding]:
    """HTML comments: invisible when rendered, so read what they tell the reader."""
    found = []
    for match in _COMMENT.finditer(text):
        if match.start() in code:
            continue
        # What a comment says is read by the phrase rules with the rest of the page; here
        # it only decides whether the comment itself is worth a person's attention.
        if _COMMENT_DIRECTIVE.search(normalise(match.group(1)).text):
            found.append(
                finding(
                    "html-comment",
                    "medium",
                    "hidden HTML comment speaks to the reader",
                    text,
                    *match.span(),
                )
            )
        else:
            found.append(finding("html-comment", "low", "HTML comment", text, *match.span()))
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


def hidden_style_findings(text: str, code: CodeMask) -> list[Finding]:
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
        found.append(finding("hidden-style", severity, message, text, match.start(), end))
    return found
