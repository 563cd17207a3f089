"""Active content: links and images whose target runs script or carries a document of its
own (``javascript:``, ``vbscript:``, ``data:``), and raw HTML that runs script (script
elements, event-handler attributes). The wiki's renderer makes them inert for people;
an agent that reads the source, or copies it into a reply, gets them live."""

from __future__ import annotations

import html
import re

from wiki.scanner.code import CodeMask
from wiki.scanner.findings import Finding, Severity, finding

# Where a URL sits in Markdown or HTML; group 1 is the URL.
_TARGETS = (
    (re.compile(r"!\[[^\[\]\n]{0,500}\]\(\s*<?([^)\s>]+)"), "image"),
    (re.compile(r"(?<!!)\[[^\[\]\n]{0,500}\]\(\s*<?([^)\s>]+)"), "link"),
    (re.compile(r"^[ ]{0,3}\[[^\[\]\n]{1,500}\]:[ \t]*<?([^\s>]+)", re.M), "link"),
    (re.compile(r"<((?:[a-z]{2,10}):[^<>\s]{1,2000})>", re.I), "link"),
    (
        re.compile(
            r"<(?:img|image|input|video|audio|source|embed|frame|iframe|script|track)\b"
            r"[^<>]{0,500}?\b(?:src|srcset|lowsrc|dynsrc|poster|data)\s*=\s*"
            r"(\"[^\"]{0,2000}\"|'[^']{0,2000}'|[^\s\"'>]{1,2000})",
            re.I,
        ),
        "image",
    ),
    (
        re.compile(
            r"<[a-z][a-z0-9-]{0,30}\b[^<>]{0,500}?\b(?:href|xlink:href|action|formaction|"
            r"background|data|srcdoc|cite|ping)\s*=\s*"
            r"(\"[^\"]{0,2000}\"|'[^']{0,2000}'|[^\s\"'>]{1,2000})",
            re.I,
        ),
        "link",
    ),
)
# Browsers skip ASCII whitespace and control characters inside a scheme.
_IGNORED_IN_SCHEME = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"(?:javascript|vbscript|livescript|mocha|data):", re.I)
_RASTER_DATA = re.compile(r"data:image/(?:png|jpe?g|gif|webp|bmp|avif|x-icon)[;,]", re.I)
_SCRIPTABLE_DATA = re.compile(
    r"data:(?:text/html|text/javascript|application/(?:x-)?(?:javascript|ecmascript|xhtml|xml)"
    r"|image/svg|text/xml)",
    re.I,
)

# A script URL written out in the text, ready to be put into a link.
_BARE_SCRIPT_URL = re.compile(
    r"(?<![\w/.-])(?:javascript|vbscript|livescript):[^\s<>\"'`]{3,}"
    r"|(?<![\w/.-])data:(?:text/html|image/svg\+xml|application/(?:x-)?javascript)[;,][^\s<>]{3,}",
    re.I,
)
_SCRIPT_TAG = re.compile(r"<script\b", re.I)
_HANDLER = re.compile(r"<[a-z][a-z0-9-]{0,30}(?=[\s/])[^<>]{0,500}?[\s/\"']on[a-z]{3,30}\s*=", re.I)
_HANDLER_NAME = re.compile(r"on[a-z]{3,30}\s*=", re.I)
# An attribute value closed early and an event handler added ('" onmouseover="alert(1)'),
# for a page whose text is pasted into an attribute.
_BREAKOUT = re.compile(
    r"[\"'`]\s*/?\s*on[a-z]{3,30}\s*=\s*[\"'`]?[^\"'`\n]{0,200}?(?:alert|prompt|confirm|eval|"
    r"fetch|document\.|window\.|location|fromcharcode|atob|import\()",
    re.I,
)
_EMBEDDING_TAG = re.compile(r"<(?:iframe|frame|frameset|object|embed|applet|base|meta)\b", re.I)


def _scheme_target(raw: str) -> str | None:
    """The URL with quotes, character references and ignored characters removed, if it
    starts with a scheme that runs script or carries a document; else None."""
    url = raw.strip("\"'`")
    url = _IGNORED_IN_SCHEME.sub("", html.unescape(html.unescape(url)))
    return url if _SCHEME.match(url) else None


def _severity(url: str, kind: str) -> Severity:
    lowered = url.lower()
    if lowered.startswith("data:"):
        if kind == "image" and _RASTER_DATA.match(lowered):
            return "low"  # an inline picture: shows, runs nothing
        return "high" if _SCRIPTABLE_DATA.match(lowered) else "medium"
    return "high"


def active_findings(text: str, code: CodeMask) -> list[Finding]:
    """Script and data targets of links and images, script elements and event handlers."""
    if ":" not in text and "<" not in text and "&" not in text and "=" not in text:
        return []
    found = []
    for pattern, kind in _TARGETS:
        for match in pattern.finditer(text):
            if match.start() in code:
                continue
            url = _scheme_target(match.group(1))
            if url is None:
                continue
            scheme = url.partition(":")[0].lower()
            found.append(
                finding(
                    "script-link",
                    _severity(url, kind),
                    f"{kind} target is a {scheme}: URL",
                    text,
                    match.start(),
                    match.end(),
                )
            )
    # Inside a link the same URL is found again; the merge keeps the link's finding.
    for match in _BARE_SCRIPT_URL.finditer(text):
        if match.start() in code:
            continue
        scheme = match.group().partition(":")[0].lower()
        found.append(
            finding(
                "script-link",
                "medium",
                f"a {scheme}: URL written out, ready to be made a link",
                text,
                *match.span(),
            )
        )
    if "=" in text:
        for match in _BREAKOUT.finditer(text):
            if match.start() not in code:
                found.append(
                    finding(
                        "active-html",
                        "high",
                        "closes an attribute and adds an event handler that runs script",
                        text,
                        *match.span(),
                    )
                )
    if "<" not in text:
        return found
    checks = [(_SCRIPT_TAG, "raw HTML holds a script element")]
    if _HANDLER_NAME.search(text):
        checks.append((_HANDLER, "raw HTML holds an event-handler attribute that runs script"))
    checks.append((_EMBEDDING_TAG, "raw HTML embeds another document or changes how links resolve"))
    for pattern, message in checks:
        for match in pattern.finditer(text):
            if match.start() not in code:
                found.append(finding("active-html", "high", message, text, *match.span()))
    return found
