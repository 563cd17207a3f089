"""The house in layers: the project -> the surface -> the apps -> the engine -> teams.

Read from the source, every import (at the top of a module or inside a function, tests
included) must point down or within its own package: the engine imports no app,
nothing below the surface imports it, no app imports another, and nothing but the
project imports the project's own modules. An app's tests may write the world they need
through another app's services (the concept graph is built from facts), never through
the surface or the project.
"""

import ast
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
APPS = ("facts", "wiki", "codegraph", "concepts")
ENGINE = "memoryhub.engine"
SURFACE = "memoryhub.surface"


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to (None: outside the project)."""
    top = module.split(".")[0]
    if module == ENGINE or module.startswith(ENGINE + "."):
        return "engine"
    if module == SURFACE or module.startswith(SURFACE + "."):
        return "surface"
    if top == "memoryhub":
        return "project"
    if top in APPS:
        return top
    if top == "teams":
        return "teams"
    return None


def refused(importer: str, imported: str, *, test: bool = False) -> bool:
    """Whether a module of layer ``importer`` (a test module: ``test``) may not import
    one of ``imported``."""
    if imported is None or imported == importer:
        return False
    if test and importer in APPS and imported in APPS:
        return False
    allowed = {
        "teams": {"engine"},
        "engine": {"teams"},
        "surface": {"engine", "teams", *APPS},
        "project": {"engine", "teams", "surface", *APPS},
        **{app: {"engine", "teams"} for app in APPS},
    }
    return imported not in allowed[importer]


def imports_of(path: Path) -> list[tuple[int, list[str]]]:
    """Each import statement's line and the modules it may name: ``from a.b import c``
    names ``a.b`` or its module ``a.b.c``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, [alias.name]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found.append((node.lineno, [node.module, *names]))
    return found


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def sources() -> list[Path]:
    folders = [ROOT / name for name in ("memoryhub", "teams", *APPS)]
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


def crossings(paths: list[Path]) -> list[str]:
    wrong = []
    for path in paths:
        importer = layer_of(module_name(path))
        test = "tests" in path.relative_to(ROOT).parts
        for line, names in imports_of(path):
            # ``from memoryhub import celery_app``: the package root holds only the
            # Celery app every process loads; its modules are judged one by one.
            names = [name for name in names if name != "memoryhub"]
            bad = [name for name in names if refused(importer, layer_of(name), test=test)]
            if bad:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({importer}) imports {bad[-1]}")
    return wrong


def test_every_import_points_down_the_layers():
    assert crossings(sources()) == []


def test_the_engine_imports_no_app():
    engine = [p for p in sources() if module_name(p).startswith(ENGINE + ".")]
    assert len(engine) > 50
    imported = {name for path in engine for _, names in imports_of(path) for name in names}
    assert not {name for name in imported if name.split(".")[0] in APPS}


@pytest.mark.parametrize(
    ("where", "line", "why"),
    [
        ("memoryhub/engine/derived.py", "from concepts.tasks import concept_facts_extract", "app"),
        ("facts/api.py", "from memoryhub.surface.forget import memory_forget", "surface"),
        ("wiki/services.py", "from facts.models import Fact", "another app"),
        ("teams/forms.py", "from memoryhub.surface.tools import tool_call", "surface"),
        ("memoryhub/surface/tools.py", "from memoryhub.api import api", "project"),
        ("memoryhub/engine/jobs.py", "from memoryhub import views", "project"),
    ],
)
def test_an_import_against_the_layers_is_found(tmp_path, monkeypatch, where, line, why):
    copy = tmp_path / where
    copy.parent.mkdir(parents=True)
    copy.write_text((ROOT / where).read_text() + f"\n\ndef later():\n    {line}\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)

    found = crossings([copy])

    assert len(found) == 1 and line.split()[1] in found[0], (why, found)


def test_what_stays_in_the_project_package_is_the_project():
    kept = sorted(
        str(p.relative_to(ROOT / "memoryhub"))
        for p in (ROOT / "memoryhub").rglob("*.py")
        if p.relative_to(ROOT / "memoryhub").parts[0] not in ("engine", "surface", "migrations")
    )
    assert kept == [
        "__init__.py",
        "api.py",
        "apps.py",
        "asgi.py",
        "beat.py",
        "celery.py",
        "checks.py",
        "context_processors.py",
        "health.py",
        "log.py",
        "management/__init__.py",
        "management/commands/__init__.py",
        "management/commands/ensure_admin.py",
        "management/commands/mcp.py",
        "management/commands/migrate_to_postgres.py",
        "management/commands/runall.py",
        "middleware.py",
        "settings.py",
        "supervisor.py",
        "urls.py",
        "views.py",
        "wsgi.py",
    ]
