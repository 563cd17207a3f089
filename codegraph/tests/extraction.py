"""What the extractor tests of every language share: reading a fixture file's index
and finding lines and definitions in it."""

from pathlib import Path

from codegraph.extractor import Definition, FileIndex, extract

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(relative: str) -> tuple[FileIndex, str]:
    """The index of a fixture file (a path under ``fixtures/``) and its text."""
    path = FIXTURES / relative
    return extract(str(path), path.read_bytes()), path.read_text()


def line_with(text: str, needle: str) -> int:
    """The 1-based line of the only line containing `needle`."""
    lines = [number for number, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(lines) == 1, f"{needle!r} found on lines {lines}"
    return lines[0]


def by_qualified_name(index: FileIndex) -> dict[str, Definition]:
    return {definition.qualified_name: definition for definition in index.definitions}
