"""What a rule reports: a finding with its offsets into the original text and an
excerpt a person can read, the verdict over a page's findings, and the merge that keeps
one finding per rule per stretch of text."""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass
from typing import Literal

from wiki.scanner.characters import INVISIBLE

Severity = Literal["high", "medium", "low"]
SEVERITY_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2}
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class Finding:
    """One rule match; ``start``/``end`` are offsets into the original text."""

    rule: str
    severity: Severity
    message: str
    start: int
    end: int
    excerpt: str

    def to_dict(self) -> dict[str, object]:
        """The finding as JSON-ready data."""
        return asdict(self)


def is_flagged(findings: list[Finding]) -> bool:
    """True when any finding is high or medium severity."""
    return any(f.severity in ("high", "medium") for f in findings)


def excerpt(text: str, start: int, end: int) -> str:
    """The original span, shortened, with invisible characters made visible."""
    span = text[start:end]
    if len(span) > EXCERPT_CHARS:
        span = span[: EXCERPT_CHARS - 1] + "…"
    return "".join(_visible(ch) for ch in span)


def _visible(ch: str) -> str:
    if ch in "\n\t":
        return " "
    if unicodedata.category(ch) in ("Cf", "Cc", "Co", "Cn") or ch in INVISIBLE:
        return f"<U+{ord(ch):04X}>"
    return ch


def finding(
    rule: str, severity: Severity, message: str, text: str, start: int, end: int
) -> Finding:
    """A finding of ``rule`` over ``text[start:end]``, with its excerpt."""
    return Finding(rule, severity, message, start, end, excerpt(text, start, end))


def merge(found: list[Finding]) -> list[Finding]:
    """One finding per rule per overlapping stretch, keeping the most severe."""
    found.sort(key=lambda f: (f.rule, f.start, -SEVERITY_RANK[f.severity]))
    merged: list[Finding] = []
    for finding in found:
        last = merged[-1] if merged else None
        if last and last.rule == finding.rule and finding.start < last.end:
            if SEVERITY_RANK[finding.severity] > SEVERITY_RANK[last.severity]:
                merged[-1] = finding
            continue
        merged.append(finding)
    merged.sort(key=lambda f: (f.start, -SEVERITY_RANK[f.severity], f.rule))
    return merged
