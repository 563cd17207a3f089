"""Code regions: fenced blocks and inline code spans render as code, never as HTML, so
the HTML, image and hidden-text rules skip them."""

from __future__ import annotations

import re
from bisect import bisect_right

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
