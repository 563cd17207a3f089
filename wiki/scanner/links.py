"""Links, images and bare URLs that carry placeholders for private data, or encoded
data, in their query string."""

from __future__ import annotations

import re

from wiki.scanner.code import CodeMask
from wiki.scanner.encoded import decoded_text
from wiki.scanner.findings import Finding, finding

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


def link_findings(text: str, code: CodeMask) -> list[Finding]:
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
                    finding(
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
                decoded = decoded_text(value.group(1))
                if decoded:
                    found.append(
                        finding(
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
                finding(
                    "exfiltration-url",
                    "high",
                    "URL asks for private data in its query string: " + ", ".join(names[:4]),
                    text,
                    match.start(),
                    end,
                )
            )
    return found
