"""Module names of source files and where imports lead: ``pkg/mod.py`` is ``pkg.mod``,
``from .x import y`` in ``pkg.mod`` means ``pkg.x``, and ``./util`` in ``web/app.js``
is ``web/util.ts`` when that file exists."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable

# What a relative JavaScript or TypeScript import may leave out of the file's name.
JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs")


def python_module_name(rel_path: str, *, prefix: str = "") -> str:
    """Dotted module of a Python file: ``pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py``
    -> ``pkg``. ``prefix`` is the root's own package name when the root is a package."""
    stem = rel_path[: -len(".py")] if rel_path.endswith(".py") else rel_path
    parts = [part for part in stem.split("/") if part]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if prefix:
        parts.insert(0, prefix)
    return ".".join(parts)


def absolute_python_module(module: str, *, importer_module: str, importer_is_package: bool) -> str:
    """``module`` as written in an import, with relative dots resolved against the
    importing module (``..x`` in ``a.b.c`` -> ``a.x``)."""
    if not module.startswith("."):
        return module
    dots = len(module) - len(module.lstrip("."))
    rest = module[dots:]
    package = importer_module.split(".") if importer_module else []
    if not importer_is_package and package:
        package.pop()
    # One dot is the package itself; each further dot goes up one level.
    up = dots - 1
    if up > len(package):
        return rest  # beyond the top: best effort, keep what was written
    base = package[: len(package) - up] if up else package
    return ".".join([*base, rest] if rest else base)


class ModuleMap:
    """Which project file a module name or import path refers to."""

    def __init__(self, files: Iterable[tuple[str, str, str]]) -> None:
        # files: (path, language, module)
        self.by_module: dict[str, str] = {}
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        self.paths: set[str] = set()
        for path, language, module in files:
            self.paths.add(path)
            if language == "python" and module:
                self.by_module.setdefault(module, path)
        for module in self.by_module:
            parts = module.split(".")
            for start in range(1, len(parts)):
                self.by_suffix[".".join(parts[start:])].append(module)

    def python(self, module: str) -> str | None:
        """The file of dotted ``module``: exact, else the one module ending with it
        (a root above the package, like ``src/``)."""
        if module in self.by_module:
            return self.by_module[module]
        candidates = self.by_suffix.get(module)
        if candidates:
            return self.by_module[min(candidates, key=len)]
        return None

    def resolve(self, *, language: str, importer: str, target_module: str, name: str) -> str | None:
        if language == "python":
            if name and name != "*":
                submodule = self.python(f"{target_module}.{name}" if target_module else name)
                if submodule is not None:
                    return submodule
            return self.python(target_module) if target_module else None
        if language in ("javascript", "typescript") and target_module.startswith("."):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), target_module))
            for candidate in (
                base,
                *(base + ext for ext in JS_EXTENSIONS),
                *(f"{base}/index{ext}" for ext in JS_EXTENSIONS),
            ):
                if candidate in self.paths:
                    return candidate
        return None


def import_target_module(*, language: str, module: str, file_module: str, is_package: bool) -> str:
    if language == "python":
        return absolute_python_module(
            module, importer_module=file_module, importer_is_package=is_package
        )
    return module
