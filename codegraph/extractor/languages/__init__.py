"""Language specs and the file extensions that select them."""

from __future__ import annotations

from ..engine import LanguageSpec


def _load(grammar: str) -> LanguageSpec:
    # Imported lazily so a process that only indexes Python never loads the others.
    if grammar == "python":
        from .python import PYTHON

        return PYTHON
    raise KeyError(grammar)


# extension -> (language reported to users, grammar used to parse)
EXTENSIONS: dict[str, tuple[str, str]] = {
    ".py": ("python", "python"),
    ".pyi": ("python", "python"),
}

_specs: dict[str, LanguageSpec] = {}


def spec_for(grammar: str) -> LanguageSpec:
    """The LanguageSpec for a grammar key from EXTENSIONS."""
    spec = _specs.get(grammar)
    if spec is None:
        spec = _specs[grammar] = _load(grammar)
    return spec
