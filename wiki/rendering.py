"""Markdown to safe HTML for wiki pages.

markdown-it-py turns CommonMark (plus tables, strikethrough and bare-URL links)
into HTML, raw HTML included; nh3 then keeps only an allow-list of tags and
attributes. Sanitising the final HTML rather than trusting the Markdown parser
means that whatever HTML a page smuggles in, the sanitiser has the last word.
"""

import re
from functools import cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore

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
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan"},
}

# Tags whose content is dropped along with the tag rather than shown as text.
DROPPED_WITH_CONTENT: frozenset[str] = frozenset(
    {"script", "style", "iframe", "object", "embed", "noscript", "template", "svg", "math"}
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


@cache
def _parser() -> MarkdownIt:
    md = (
        MarkdownIt("commonmark", {"html": True, "linkify": True, "typographer": False})
        .enable("table")
        .enable("strikethrough")
        .enable("linkify")
    )
    md.core.ruler.push("table_align_attribute", _table_align_attribute)
    return md


def _filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "class":
        # Only the language marker that fenced code blocks carry survives.
        kept = [c for c in value.split() if tag == "code" and _LANGUAGE_CLASS.match(c)]
        return " ".join(kept) or None
    if tag == "img" and attribute == "src":
        # Images load without a click, so only absolute web URLs are let through.
        return value if _HTTP_URL.match(value.strip()) else None
    if attribute == "align":
        return value if value.lower() in _ALIGN else None
    if attribute in {"width", "height", "colspan", "rowspan", "start"}:
        return value if value.isdigit() and len(value) <= 5 else None
    return value


def sanitize_html(html: str) -> str:
    """Reduce arbitrary HTML to the wiki's allow-list of tags, attributes and URL schemes."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes=ALLOWED_ATTRIBUTES,
        attribute_filter=_filter_attribute,
        url_schemes=set(LINK_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )


def render_markdown(text: str) -> str:
    """Render wiki Markdown to HTML that is safe to insert into a dashboard page."""
    return sanitize_html(_parser().render(text))
