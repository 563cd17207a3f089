"""HTML built in Python that more than one app shows."""

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def snippet_html(snippet: str) -> SafeString:
    """A search snippet with its ``[[``/``]]`` match markers turned into ``<mark>``;
    everything else in it escaped."""
    escaped = str(escape(snippet))
    return mark_safe(escaped.replace("[[", "<mark>").replace("]]", "</mark>"))
