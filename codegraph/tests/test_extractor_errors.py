"""Files with syntax errors: flagged, and indexed as far as the parser recovers."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegraph.extractor import extract

BROKEN = Path(__file__).parent / "fixtures" / "broken"


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("broken.js", "before", "method"),
        ("broken.ts", "before", "after"),
        ("broken.go", "Before", "Broken"),
        ("broken.rs", "before", "after"),
        ("Broken.java", "Broken.before", "Broken.after"),
    ],
)
def test_a_broken_file_is_flagged_and_what_surrounds_the_error_is_kept(
    name: str, before: str, after: str
) -> None:
    path = BROKEN / name
    index = extract(str(path), path.read_bytes())
    assert index.has_errors is True
    names = {d.qualified_name for d in index.definitions}
    assert {before, after} <= names
    calls = {(c.callee, c.caller) for c in index.calls}
    assert ("ok", before) in calls
    # The call after the error is still found, attributed as far as recovery allows.
    assert "later" in {callee for callee, _ in calls}


def test_garbage_bytes_never_raise() -> None:
    index = extract("noise.go", bytes(range(256)) * 4)
    assert index.has_errors is True
    assert index.language == "go"
