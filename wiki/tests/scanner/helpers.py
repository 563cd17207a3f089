"""Shared by the scanner tests: the labelled corpus and the first finding of a rule."""

from pathlib import Path

from wiki.scanner import Finding, scan

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def corpus(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).glob("*.md"))


def first(text: str, rule: str) -> Finding:
    """The first finding of ``rule`` in ``text``; fails when there is none."""
    found = [f for f in scan(text) if f.rule == rule]
    assert found, f"no {rule} finding in {text!r}: {scan(text)}"
    return found[0]


def rules(text: str) -> set[str]:
    return {f.rule for f in scan(text) if f.severity != "low"}
