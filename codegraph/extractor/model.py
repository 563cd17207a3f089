"""What the extractor returns for one file: plain immutable records."""

from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import starmap
from operator import attrgetter
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Definition:
    """A named declaration.

    `line` is the line of the declared name (so a decorated Python function or an
    annotated Java method is reported on its `def` / declaration line, as ctags does);
    `end_line` is the last line of the whole declaration. Lines are 1-based.
    `qualified_name` joins enclosing definitions with dots (`Outer.Inner.method`); a
    module-level function is just its name. Go methods are qualified by their receiver
    type and Rust items in an `impl` block by the implemented type.
    """

    name: str
    qualified_name: str
    kind: str
    line: int
    end_line: int
    signature: str


@dataclass(frozen=True, slots=True)
class Import:
    """One imported thing.

    `module` is the module path as written (Python keeps the leading dots of relative
    imports, Rust joins with `::`, Go and JS keep the string); `name` is the imported
    name, `""` when the module itself is imported (`import x`, `require("x")`), `"*"`
    for a wildcard and `"default"` for a JS default import; `alias` is the local name
    when one is given. `line` is the line of the imported name.
    """

    module: str
    name: str
    alias: str
    line: int


@dataclass(frozen=True, slots=True)
class Call:
    """A call site.

    `callee` is the last identifier of the called expression, `receiver` the text before
    it (`self.repo` in `self.repo.save()`, `""` for a bare call), `caller` the qualified
    name of the innermost enclosing definition (`""` at module level).
    """

    callee: str
    receiver: str
    caller: str
    line: int


@dataclass(frozen=True, slots=True)
class FileIndex:
    """Everything extracted from one file.

    `has_errors` is true when the parser had to recover from syntax errors; whatever
    it recovered is still indexed.
    """

    language: str
    definitions: tuple[Definition, ...]
    imports: tuple[Import, ...]
    calls: tuple[Call, ...]
    has_errors: bool

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Pickled as plain tuples: several times faster than one object per record,
        # which matters when indexes come back from worker processes.
        return (
            _restore,
            (
                self.language,
                list(map(_DEFINITION_FIELDS, self.definitions)),
                list(map(_IMPORT_FIELDS, self.imports)),
                list(map(_CALL_FIELDS, self.calls)),
                self.has_errors,
            ),
        )


# The records' fields as plain tuples, in declaration order.
DefinitionRow = tuple[str, str, str, int, int, str]
ImportRow = tuple[str, str, str, int]
CallRow = tuple[str, str, str, int]


class FileRows(NamedTuple):
    """A FileIndex's content as plain tuples: cheaper to build and to send between
    processes than one object per record, for callers that only store the values."""

    language: str
    definitions: list[DefinitionRow]
    imports: list[ImportRow]
    calls: list[CallRow]
    has_errors: bool

    def index(self) -> FileIndex:
        return _restore(*self)


def _fields(record: type) -> attrgetter[tuple[object, ...]]:
    return attrgetter(*(field.name for field in fields(record)))


_DEFINITION_FIELDS = _fields(Definition)
_IMPORT_FIELDS = _fields(Import)
_CALL_FIELDS = _fields(Call)


def _restore(
    language: str,
    definitions: list[DefinitionRow],
    imports: list[ImportRow],
    calls: list[CallRow],
    has_errors: bool,
) -> FileIndex:
    return FileIndex(
        language,
        tuple(starmap(Definition, definitions)),
        tuple(starmap(Import, imports)),
        tuple(starmap(Call, calls)),
        has_errors,
    )
