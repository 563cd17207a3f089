"""HTML built for wiki pages: their Markdown rendered safely, their source with the
scanner's findings marked, and search snippets with their matches marked.

markdown-it-py turns CommonMark (plus tables, strikethrough and bare-URL links)
into HTML, raw HTML included; nh3 then keeps only an allow-list of tags and
attributes. Sanitising the final HTML rather than trusting the Markdown parser
means that whatever HTML a page smuggles in, the sanitiser has the last word.

Raw HTML is kept within the Markdown block that holds it, so that one stray tag
cannot take the rest of the page with it:

- An HTML block whose end marker never comes (``<script>``, ``<pre>``, ``<style>``,
  ``<textarea>``, ``<!--``, ``<?``, ``<!X``, ``<![CDATA[``) ends at the first blank
  line, as every other HTML block does, instead of running to the end of the page.
- The HTML parser reads the content of some elements as something other than markup
  (raw text in ``<script>``, ``<noscript>`` or ``<title>``, foreign content in
  ``<math>`` or ``<svg>``, a template, an unclosed comment or attribute value), and the
  allow-list drops several of them with their content. A block of raw HTML (an HTML
  block, or a paragraph, heading or cell holding inline HTML) that leaves the parser in
  such a state is sanitised on its own, so whatever it opened ends with it. Raw HTML
  after which the parser still reads markup, such as a ``<details>`` opened in one block
  and closed in a later one, is left to the page-wide pass, so those still nest.

The page-wide pass serialises a parsed tree, so every element it opens it closes.
"""

import html
import re
import unicodedata
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock
from markdown_it.rules_block.html_block import HTML_SEQUENCES, html_block
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details",
        "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
        "kbd", "li", "mark", "ol", "p", "pre", "s", "samp", "span", "strong",
        "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
        "ul",
    }
)  # fmt: skip

ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "code": {"class"},
    "img": {"src", "alt", "title", "width", "height"},
    "ol": {"start"},
    "span": {"class", "title"},
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan"},
}

# Tags whose content is dropped along with the tag rather than shown as text.
DROPPED_WITH_CONTENT: frozenset[str] = frozenset(
    {"script", "style", "iframe", "object", "embed", "noscript", "template", "svg", "math"}
)

# The marks a flagged page's disabled links and images carry (see ``render_markdown``).
INERT_CLASSES: frozenset[str] = frozenset(
    {"wiki-inert-link", "wiki-inert-image", "wiki-inert-note"}
)

LINK_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})
LINK_REL = "nofollow noopener"

_LANGUAGE_CLASS = re.compile(r"^language-[A-Za-z0-9_+#.-]{1,40}$")
_HTTP_URL = re.compile(r"^https?://", re.IGNORECASE)
_ALIGN = frozenset({"left", "right", "center"})


def _table_align_attribute(state: StateCore) -> None:
    # markdown-it aligns cells with a style attribute, which the sanitiser drops.
    for token in state.tokens:
        if token.type in {"th_open", "td_open"}:
            style = token.attrs.pop("style", None)
            if isinstance(style, str) and style.startswith("text-align:"):
                token.attrs["align"] = style.removeprefix("text-align:")


# CommonMark's HTML blocks that end at a closing sequence rather than a blank line.
_ENDS_AT_SEQUENCE = tuple((opening, closing) for opening, closing, _ in HTML_SEQUENCES[:5])


def _lines_holding(state: StateBlock, closing: re.Pattern[str]) -> list[int]:
    """The numbers of the source lines where ``closing`` occurs, found once per render."""
    found = state.env.setdefault("_html_block_closers", {})
    if closing.pattern not in found:
        if "\n" not in found:
            found["\n"] = [m.start() for m in re.finditer("\n", state.src)]
        found[closing.pattern] = sorted(
            {bisect_left(found["\n"], m.start()) for m in closing.finditer(state.src)}
        )
    return found[closing.pattern]


def _html_block_end(state: StateBlock, start: int, end: int) -> int:
    """Where an HTML block starting at line ``start`` may run to: ``end``, or for a block
    whose closing sequence never comes before ``end``, the first blank line."""
    line = state.src[state.bMarks[start] + state.tShift[start] : state.eMarks[start]]
    closing = next((close for open_, close in _ENDS_AT_SEQUENCE if open_.search(line)), None)
    if closing is None:
        return end
    closes = _lines_holding(state, closing)
    k = bisect_left(closes, start)
    if k < len(closes) and closes[k] < end:
        return end
    return next((n for n in range(start + 1, end) if state.isEmpty(n)), end)


def _html_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """CommonMark's HTML block, except that an unterminated one ends at a blank line."""
    return html_block(state, start, end if silent else _html_block_end(state, start, end), silent)


# Appended to a piece of raw HTML: it survives sanitising as markup only if the parser
# reads what follows the piece as markup, in the document's own namespace.
_PROBE = "<kbd>\ue000</kbd>"
# Only a fragment holding the probe's character, or a reference to it, can output it.
_MAY_SPELL_PROBE = re.compile("[\ue000&]")


def _within_its_block(fragment: str) -> str:
    """``fragment`` unchanged if what follows it is still read as markup; otherwise the
    fragment sanitised on its own, so that what it opened ends where it ends."""
    probed = sanitize_html(fragment + _PROBE)
    if _PROBE in probed and not _MAY_SPELL_PROBE.search(fragment):
        return fragment
    alone = sanitize_html(fragment)
    return fragment if probed.count(_PROBE) > alone.count(_PROBE) else alone


class _Renderer(RendererHTML):
    """markdown-it's HTML renderer, keeping raw HTML within its Markdown block."""

    def html_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        return _within_its_block(tokens[idx].content)

    def renderInline(self, tokens: Sequence[Token], options: OptionsDict, env: EnvType) -> str:
        html = super().renderInline(tokens, options, env)
        if any(token.type == "html_inline" for token in tokens):
            return _within_its_block(html)
        return html


@cache
def _parser() -> MarkdownIt:
    md = (
        MarkdownIt(
            "commonmark",
            {"html": True, "linkify": True, "typographer": False},
            renderer_cls=_Renderer,
        )
        .enable("table")
        .enable("strikethrough")
        .enable("linkify")
    )
    md.block.ruler.at("html_block", _html_block, {"alt": ["paragraph", "reference", "blockquote"]})
    md.core.ruler.push("table_align_attribute", _table_align_attribute)
    md.core.ruler.push("inert_links", _inert_links)
    return md


def _filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "class":
        # Only the language marker of fenced code and the marks of disabled links survive.
        kept = [
            c
            for c in value.split()
            if (tag == "code" and _LANGUAGE_CLASS.match(c))
            or (tag == "span" and c in INERT_CLASSES)
        ]
        return " ".join(kept) or None
    if tag == "img" and attribute == "src":
        # Images load without a click, so only absolute web URLs are let through.
        return value if _HTTP_URL.match(value.strip()) else None
    if attribute == "align":
        return value if value.lower() in _ALIGN else None
    if attribute in {"width", "height", "colspan", "rowspan", "start"}:
        return value if value.isdigit() and len(value) <= 5 else None
    return value


def _cleaner_for(attribute_filter: Callable[[str, str, str], str | None]) -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=attribute_filter,
        url_schemes=set(LINK_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


@cache
def _cleaner() -> nh3.Cleaner:
    return _cleaner_for(_filter_attribute)


def sanitize_html(html: str, *, inert: Mapping[str, str] | None = None) -> str:
    """Reduce arbitrary HTML to the wiki's allow-list of tags, attributes and URL schemes;
    links and images whose target is a key of ``inert`` lose it."""
    if not inert:
        return _cleaner().clean(html)

    def without_inert_targets(tag: str, attribute: str, value: str) -> str | None:
        if attribute in {"href", "src"} and _inert_reason(value, inert) is not None:
            return None
        return _filter_attribute(tag, attribute, value)

    return _cleaner_for(without_inert_targets).clean(html)


_URL_IN_TEXT = re.compile(r"(?:https?://|www\.)[^\s<>\"'`)\]]+", re.IGNORECASE)


def dangerous_urls(text: str, findings: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The URLs inside the text of a page's high and medium findings, each with the
    finding that makes it dangerous ("exfiltration-image: image URL has placeholders...")."""
    urls: dict[str, str] = {}
    for found in findings:
        if found.get("severity") == "low" or found.get("field", "content") != "content":
            continue
        start, end = int(found.get("start", 0)), int(found.get("end", 0))
        for match in _URL_IN_TEXT.finditer(text, max(0, start), max(0, end)):
            url = match.group().rstrip(".,;:!?")
            urls.setdefault(url, f"{found.get('rule', '')}: {found.get('message', '')}")
    return urls


def _inert_reason(url: str, inert: Mapping[str, str]) -> str | None:
    """Why ``url`` (as written, or as markdown-it percent-encodes it) must not be followed."""
    candidates = {url, html.unescape(url)}
    for dangerous, reason in inert.items():
        if any(c == dangerous or c == _parser().normalizeLink(dangerous) for c in candidates):
            return reason
    return None


def _inert_links(state: StateCore) -> None:
    """Links and images whose target the page's findings name become marked text."""
    inert: Mapping[str, str] = state.env.get("inert") or {}
    if not inert:
        return
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        closing: list[str] = []  # per open link: why it was made inert, or ""
        for token in block.children:
            if token.type == "link_open":
                reason = _inert_reason(str(token.attrs.get("href", "")), inert)
                closing.append(reason or "")
                if reason is not None:
                    token.tag, token.attrs = "span", {"class": "wiki-inert-link", "title": reason}
                children.append(token)
            elif token.type == "link_close" and closing:
                inert_link = closing.pop()
                if inert_link:
                    token.tag = "span"
                children.append(token)
                if inert_link:
                    children += _note("link disabled", inert_link)
            elif token.type == "image":
                reason = _inert_reason(str(token.attrs.get("src", "")), inert)
                if reason is None:
                    children.append(token)
                    continue
                opening = Token("span_open", "span", 1, attrs={"class": "wiki-inert-image"})
                opening.attrs["title"] = reason
                alt = Token("text", "", 0, content=token.content or "image")
                children += [opening, alt, Token("span_close", "span", -1)]
                children += _note("image not loaded", reason)
            else:
                children.append(token)
        block.children = children


def _note(what: str, reason: str) -> list[Token]:
    rule = reason.partition(":")[0]
    return [
        Token("span_open", "span", 1, attrs={"class": "wiki-inert-note"}),
        Token("text", "", 0, content=f" ({what}: {rule}, see the scanner findings)"),
        Token("span_close", "span", -1),
    ]


def render_markdown(text: str, *, inert: Mapping[str, str] | None = None) -> str:
    """Render wiki Markdown to HTML that is safe to insert into a dashboard page.

    ``inert`` maps URLs to why they are dangerous (``dangerous_urls``): links and images
    with those targets render as marked text that says so, never as a link a person
    can follow or a picture that loads."""
    env = {"inert": dict(inert)} if inert else {}
    return sanitize_html(_parser().render(text, env), inert=inert)


# --- The page source and search snippets ------------------------------------------------


def _visible_text(text: str) -> str:
    """Escape ``text``, showing invisible format characters (zero-width, bidi controls)
    as their code points so a reviewer sees what hides in the page."""
    out = []
    for char in text:
        if unicodedata.category(char) == "Cf":
            out.append(f'<span class="invisible-char">U+{ord(char):04X}</span>')
        else:
            out.append(escape(char))
    return "".join(out)


def highlight_findings(text: str, findings: list[dict[str, Any]]) -> SafeString:
    """The page source, escaped, with each finding's span wrapped in ``<mark>``.
    Overlapping spans are merged; every piece of page text goes through ``escape``."""
    spans: list[list[Any]] = []
    for finding in sorted(
        (f for f in findings if f.get("field", "content") == "content"),
        key=lambda f: (int(f.get("start", 0)), int(f.get("end", 0))),
    ):
        start = max(0, min(int(finding.get("start", 0)), len(text)))
        end = max(start, min(int(finding.get("end", 0)), len(text)))
        label = f"{finding.get('rule', '')}: {finding.get('message', '')}"
        if spans and start < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
            spans[-1][2].append(label)
        else:
            spans.append([start, end, [label]])
    out, position = [], 0
    for start, end, labels in spans:
        out.append(_visible_text(text[position:start]))
        out.append(
            f'<mark class="finding" title="{escape("; ".join(labels))}">'
            f"{_visible_text(text[start:end]) or '&#8203;'}</mark>"
        )
        position = end
    out.append(_visible_text(text[position:]))
    return mark_safe("".join(out))
