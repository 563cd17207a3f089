import html
import os
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiki.rendering import render_markdown

# Each entry is Markdown a page could hold; every one must render inert.
XSS_PAYLOADS: list[str] = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    "<img src=x onerror=alert(1)>",
    "<img src=x oNeRrOr=alert(1)//",
    '<img """><script>alert(1)</script>">',
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<body onload=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "<object data=javascript:alert(1)></object>",
    '<embed src="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">',
    '<a href="javascript:alert(1)">click</a>',
    '<a href="JaVaScRiPt:alert(1)">click</a>',
    '<a href="jav&#x09;ascript:alert(1)">tab entity</a>',
    '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;:alert(1)">decimal</a>',
    '<a href="&#x6A;avascript&#x3A;alert(1)">hex</a>',
    '<a href=" javascript:alert(1)">leading space</a>',
    '<a href="java\nscript:alert(1)">newline</a>',
    '<a href="vbscript:msgbox(1)">vb</a>',
    '<a href="data:text/html,<script>alert(1)</script>">data</a>',
    "[md link](javascript:alert(1))",
    "[md link entity](javascript&#58;alert(1))",
    "[md ref][x]\n\n[x]: javascript:alert(1)",
    "![md image](javascript:alert(1))",
    "![data image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    '<a href="https://ok.example" onclick="alert(1)">handler on a good link</a>',
    '<div style="background:url(javascript:alert(1))">styled</div>',
    '<p style="x:expression(alert(1))">ie expression</p>',
    "<details open ontoggle=alert(1)><summary>x</summary></details>",
    "<input autofocus onfocus=alert(1)>",
    '<form action="javascript:alert(1)"><button>go</button></form>',
    "<video><source onerror=alert(1)></video>",
    "<audio src=x onerror=alert(1)>",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="javascript:alert(1)//">',
    '<link rel="stylesheet" href="javascript:alert(1)">',
    "<style>@import 'javascript:alert(1)';</style>",
    "<marquee onstart=alert(1)>x</marquee>",
    '<table background="javascript:alert(1)"><tr><td>x</td></tr></table>',
    '<img src="https://ok.example/a.png" onload="alert(1)">',
    '<a href="https://ok.example" target="_blank" formaction="javascript:alert(1)">x</a>',
    "<!--><script>alert(1)</script>-->",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "`<script>alert(1)</script>` and\n\n```html\n<script>alert(1)</script>\n```",
    "<a href='javas&#99;ript:alert(1)'>partial entity</a>",
    "<img src=`javascript:alert(1)`>",
    "<x onclick=alert(1)>unknown tag</x>",
]

DANGEROUS_TAGS = {
    "script", "iframe", "object", "embed", "style", "svg", "math", "form", "input",
    "button", "meta", "base", "link", "video", "audio", "source", "frame", "frameset",
    "applet", "marquee", "noscript", "template",
}  # fmt: skip
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "background", "poster", "srcdoc", "data"}
DANGEROUS_SCHEMES = ("javascript:", "vbscript:", "data:", "file:")


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _parse(rendered: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    collector = _Collector()
    collector.feed(rendered)
    collector.close()
    return collector.tags


def _normalised_url(value: str) -> str:
    # Browsers drop ASCII whitespace and control characters inside a scheme.
    decoded = html.unescape(html.unescape(value))
    return re.sub(r"[\x00-\x20\x7f]+", "", decoded).lower()


def assert_inert(rendered: str) -> None:
    for tag, attrs in _parse(rendered):
        assert tag not in DANGEROUS_TAGS, f"<{tag}> survived in {rendered!r}"
        for name, value in attrs:
            assert not name.startswith("on"), f"{name} survived in {rendered!r}"
            assert name != "style", f"style survived in {rendered!r}"
            if name in URL_ATTRIBUTES and value is not None:
                url = _normalised_url(value)
                assert not url.startswith(DANGEROUS_SCHEMES), f"{name}={value!r} survived"


def test_the_payload_list_is_long_enough() -> None:
    assert len(XSS_PAYLOADS) >= 30


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_xss_payload_renders_inert(payload: str) -> None:
    assert_inert(render_markdown(payload))


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_xss_payload_inside_a_normal_page_renders_inert(payload: str) -> None:
    page = (
        f"# Runbook\n\nSome text before.\n\n{payload}\n\n| a | b |\n|---|---|\n| {payload} | x |\n"
    )
    assert_inert(render_markdown(page))


def test_the_checker_itself_catches_a_live_payload() -> None:
    with pytest.raises(AssertionError):
        assert_inert('<a href="jav&#x09;ascript:alert(1)">x</a>')
    with pytest.raises(AssertionError):
        assert_inert("<img src=x onerror=alert(1)>")


def test_tables_render_with_alignment() -> None:
    rendered = render_markdown(
        "| service | port | owner |\n|:--|--:|:-:|\n| ingest | 8080 | data |\n"
    )
    tags = [tag for tag, _ in _parse(rendered)]
    assert tags[:2] == ["table", "thead"]
    assert '<td align="right">8080</td>' in rendered
    assert '<th align="left">service</th>' in rendered


def test_fenced_code_keeps_its_language_and_escapes_its_content() -> None:
    rendered = render_markdown("```python\nif a < b and c > d:\n    print('<b>')\n```\n")
    assert '<pre><code class="language-python">' in rendered
    assert "if a &lt; b and c &gt; d:" in rendered
    assert "<b>" not in rendered


def test_only_the_language_class_survives() -> None:
    rendered = render_markdown('<code class="language-sql evil-overlay">x</code>')
    assert 'class="language-sql"' in rendered
    assert "evil-overlay" not in rendered


def test_links_get_nofollow_noopener() -> None:
    rendered = render_markdown("[docs](https://docs.example/page) and https://bare.example/x")
    links = [dict(attrs) for tag, attrs in _parse(rendered) if tag == "a"]
    assert [link["href"] for link in links] == [
        "https://docs.example/page",
        "https://bare.example/x",
    ]
    assert all(link["rel"] == "nofollow noopener" for link in links)


def test_relative_and_mail_links_are_kept() -> None:
    rendered = render_markdown("[page](/wiki/deploy) [top](#top) [mail](mailto:ops@example.org)")
    hrefs = [dict(attrs).get("href") for tag, attrs in _parse(rendered) if tag == "a"]
    assert hrefs == ["/wiki/deploy", "#top", "mailto:ops@example.org"]


def test_images_keep_only_web_urls() -> None:
    rendered = render_markdown(
        "![ok](https://img.example/a.png) ![rel](/a.png) ![proto](//img.example/a.png)"
    )
    srcs = [dict(attrs).get("src") for tag, attrs in _parse(rendered) if tag == "img"]
    assert srcs == ["https://img.example/a.png", None, None]


def test_ordinary_markdown_survives() -> None:
    rendered = render_markdown(
        "## Steps\n\n1. **Drain** the node\n2. Run `kubectl cordon`\n\n"
        "> note: ~~old~~ new\n\n- [ ] todo\n\n---\n"
    )
    for fragment in (
        "<h2>",
        "<ol>",
        "<strong>Drain</strong>",
        "<code>kubectl cordon</code>",
        "<blockquote>",
        "<s>old</s>",
        "<hr>",
    ):
        assert fragment in rendered


def test_html_comments_are_dropped_from_the_output() -> None:
    assert "hidden" not in render_markdown("visible <!-- hidden --> text")


# --- Raw HTML stays within its Markdown block ----------------------------------------------

VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"}

# Elements whose content the HTML parser does not read as markup (raw text, escapable raw
# text, plain text, a template, foreign content), or that the sanitiser drops whole.
SWALLOWING = [
    "math", "svg", "noscript", "script", "style", "iframe", "object", "template",
    "textarea", "title", "xmp", "plaintext", "noembed", "noframes", "select",
]  # fmt: skip


class _Reader(HTMLParser):
    """The text of rendered HTML and whether its elements nest and close."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID_ELEMENTS:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID_ELEMENTS:
            self.problems.append(f"<{tag}/> is not a void element")

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def read(rendered: str) -> _Reader:
    reader = _Reader()
    reader.feed(rendered)
    reader.close()
    return reader


def assert_balanced(rendered: str) -> None:
    reader = read(rendered)
    assert not reader.problems, f"{reader.problems} in {rendered!r}"
    assert not reader.open, f"{reader.open} left open in {rendered!r}"


@pytest.mark.parametrize("name", SWALLOWING)
@pytest.mark.parametrize(
    "page",
    [
        "<{name}>\n\n{after}",
        "Before <{name}> inline\n\n{after}",
        "<div><{name}>\n\n{after}",
        "<math><mtext><{name}>\n\n{after}",
        "| a |\n|---|\n| <{name}> |\n\n{after}",
        "> <{name}>\n\n{after}",
    ],
)
def test_text_after_an_unclosed_element_is_rendered(page: str, name: str) -> None:
    rendered = render_markdown(page.format(name=name, after="After **the tag** ends."))
    assert "<p>After <strong>the tag</strong> ends.</p>" in rendered, rendered
    assert_balanced(rendered)


@pytest.mark.parametrize(
    "opening",
    [
        "<script>",
        "<style>",
        "<textarea>",
        "<pre>",
        "<!-- note",
        "<?php echo 1;",
        "<!DOCTYPE",
        "<![CDATA[ x",
        '<div title="unclosed',
        "<div",
    ],
)
def test_an_unterminated_html_block_ends_at_the_next_blank_line(opening: str) -> None:
    rendered = render_markdown(f"# Runbook\n\n{opening}\nline\n\nAfter **it**.\n\n## Next\n")
    assert "<h1>Runbook</h1>" in rendered
    assert "<strong>it</strong>" in rendered and "<h2>Next</h2>" in rendered, rendered
    assert_balanced(rendered)


def test_the_unclosed_math_of_a_page_hides_nothing_after_it() -> None:
    page = (
        "# Formulas\n\nThe area is <math><mi>r</mi><msup><mi>π</mi></msup>\n\n"
        "<math>\n<mtext>\n\n## Failover\n\n1. Promote the replica.\n\n<noscript>\n\nDone.\n"
    )
    text = "".join(read(render_markdown(page)).text)
    for words in ("Formulas", "The area is", "Failover", "Promote the replica.", "Done."):
        assert words in text, text


def test_an_element_opened_in_one_block_and_closed_in_a_later_one_still_nests() -> None:
    rendered = render_markdown(
        "<details>\n<summary>Steps</summary>\n\n1. **Drain** it\n\n</details>\n\nAfter\n"
    )
    assert rendered.index("<strong>Drain</strong>") < rendered.index("</details>")
    assert rendered.index("</details>") < rendered.index("<p>After</p>")
    rendered = render_markdown("<pre>\nline one\n\nline three\n</pre>\n\nAfter\n")
    assert "line one\n\nline three" in rendered and "<p>After</p>" in rendered


def test_a_closed_raw_element_keeps_its_blank_lines() -> None:
    rendered = render_markdown("<script>\nalert(1)\n\nalert(2)\n</script>\n\nAfter\n")
    assert "alert" not in rendered and "<p>After</p>" in rendered


def test_the_checker_itself_catches_unbalanced_html() -> None:
    with pytest.raises(AssertionError):
        assert_balanced("<p>open")
    with pytest.raises(AssertionError):
        assert_balanced("<b><i>x</b></i>")


SOUP_NAMES = [*SWALLOWING, "a", "b", "i", "p", "div", "details", "summary", "table", "tr", "td"]
SOUP_MARKUP = [
    "<!--", "-->", "<?", "?>", "<!X", "<![CDATA[", "]]>", '<a title="', "'", '"', "<", ">",
    "/>", "\n", "\n\n", "# ", "- ", "> ", "    ", "**", "`", "```\n", "| a |\n|---|\n",
    "[x](https://a.example)", "<math><mtext>", "<svg><foreignObject>", " word ", "&amp;",
]  # fmt: skip
SOUP_PIECES = st.one_of(
    st.sampled_from(SOUP_NAMES).map(lambda name: f"<{name}>"),
    st.sampled_from(SOUP_NAMES).map(lambda name: f"</{name}>"),
    st.sampled_from(SOUP_MARKUP),
)
FUZZ_EXAMPLES = int(os.environ.get("MEMORYHUB_FUZZ_EXAMPLES") or 300)


@given(st.lists(SOUP_PIECES, max_size=40).map("".join))
@settings(max_examples=FUZZ_EXAMPLES, derandomize="MEMORYHUB_FUZZ_EXAMPLES" not in os.environ)
def test_any_tag_soup_renders_balanced_and_keeps_the_text_after_it(soup: str) -> None:
    rendered = render_markdown(f"{soup}\n\nEnd of the page zqx.\n")
    assert_balanced(rendered)
    assert "End of the page zqx." in "".join(read(rendered).text), rendered
    assert_inert(rendered)
