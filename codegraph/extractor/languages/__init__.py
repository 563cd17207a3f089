"""Language specs and the file extensions that select them."""

from __future__ import annotations

import importlib

from ..engine import LanguageSpec

# extension -> (language reported to users, grammar key)
EXTENSIONS: dict[str, tuple[str, str]] = {
    ".py": ("python", "python"),
    ".pyi": ("python", "python"),
    ".js": ("javascript", "javascript"),
    ".mjs": ("javascript", "javascript"),
    ".cjs": ("javascript", "javascript"),
    ".jsx": ("javascript", "javascript"),
    ".ts": ("typescript", "typescript"),
    ".mts": ("typescript", "typescript"),
    ".cts": ("typescript", "typescript"),
    ".tsx": ("typescript", "tsx"),
    ".go": ("go", "go"),
    ".rs": ("rust", "rust"),
    ".java": ("java", "java"),
}

# grammar key -> (module, attribute); modules are imported on first use, so a process
# that only indexes Python never loads the other grammars.
_SPECS: dict[str, tuple[str, str]] = {
    "python": ("python", "PYTHON"),
    "javascript": ("javascript", "JAVASCRIPT"),
    "typescript": ("javascript", "TYPESCRIPT"),
    "tsx": ("javascript", "TSX"),
    "go": ("go", "GO"),
    "rust": ("rust", "RUST"),
    "java": ("java", "JAVA"),
}

_loaded: dict[str, LanguageSpec] = {}


def spec_for(grammar: str) -> LanguageSpec:
    """The LanguageSpec for a grammar key from EXTENSIONS."""
    spec = _loaded.get(grammar)
    if spec is None:
        module, attribute = _SPECS[grammar]
        spec = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        _loaded[grammar] = spec
    return spec
