"""Scans: incremental rescans, skipped files, bad folders, alias-aware callers."""

import os
from pathlib import Path

import pytest

from codegraph import services
from codegraph.models import CallRef, CodeProject, ImportRef, ScanState, SourceFile, Symbol
from codegraph.search import SYMBOL_FTS
from codegraph.services import examine
from codegraph.services import scan as scan_module
from memoryhub.engine.errors import InvalidInput
from teams.services import Actor

pytestmark = pytest.mark.django_db

PKG = {
    "shop/__init__.py": "",
    "shop/auth.py": (
        "def login(request, user):\n"
        "    return user\n"
        "\n"
        "def relogin(request, user):\n"
        "    return login(request, user)\n"
    ),
    "shop/views.py": (
        "from shop.auth import login as auth_login\n"
        "from shop import auth\n"
        "from .auth import login\n"
        "\n"
        "class LoginView:\n"
        "    def post(self, request, user):\n"
        "        auth_login(request, user)\n"
        "        auth.login(request, user)\n"
        "        self.client.login()\n"
        "        other.login(request)\n"
        "\n"
        "def plain(request, user):\n"
        "    login(request, user)\n"
    ),
    "shop/unrelated.py": ("def login():\n    pass\n\ndef go():\n    login()\n"),
    "shop/mixed.py": (
        "import shop.auth\n"
        "import shop.auth as sa\n"
        "\n"
        "def f(request, user):\n"
        "    shop.auth.login(request, user)\n"
        "    sa.login(request, user)\n"
        "    # login(request, user) in a comment\n"
        "    text = 'login(request, user)'\n"
    ),
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def tree(tmp_path, settings) -> Path:
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    write_tree(root, PKG)
    return root


@pytest.fixture
def project(owner, tree) -> CodeProject:
    return services.code_project_register(actor=Actor(user=owner), name="shop", path=str(tree))


def scan(project: CodeProject) -> services.ScanResult:
    result = services.code_project_scan(project_id=project.pk)
    project.refresh_from_db()
    return result


def bump(path: Path, text: str | None = None) -> None:
    if text is not None:
        path.write_text(text)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


def test_a_first_scan_indexes_every_file(project):
    result = scan(project)
    assert result.parsed == 5 and result.full
    assert project.state == ScanState.DONE
    assert project.files_done == project.files_total == 5
    assert project.language_counts["python"]["files"] == 5
    assert Symbol.objects.filter(project=project, name="login").count() == 2
    # Every symbol is in the FTS index.
    assert SYMBOL_FTS.ids() >= set(Symbol.objects.values_list("id", flat=True))


def test_an_unchanged_rescan_parses_nothing(project):
    scan(project)
    ids = set(Symbol.objects.values_list("id", flat=True))
    result = scan(project)
    assert (result.parsed, result.unchanged, result.added, result.deleted) == (0, 5, 0, 0)
    assert set(Symbol.objects.values_list("id", flat=True)) == ids


def test_a_touched_but_identical_file_is_hashed_not_parsed(project, tree):
    scan(project)
    bump(tree / "shop/auth.py")
    result = scan(project)
    assert result.parsed == 0
    assert scan(project).unchanged == 5  # the new mtime was remembered


def test_an_edited_file_is_parsed_again(project, tree):
    scan(project)
    bump(tree / "shop/unrelated.py", "def logout():\n    pass\n")
    result = scan(project)
    assert result.parsed == 1
    edited = Symbol.objects.filter(file__path="shop/unrelated.py")
    names = set(edited.values_list("name", flat=True))
    assert names == {"logout"}
    assert not CallRef.objects.filter(file__path="shop/unrelated.py").exists()
    assert len(SYMBOL_FTS.ids()) == Symbol.objects.count()


def test_deleted_and_added_files_are_dropped_and_indexed(project, tree):
    scan(project)
    (tree / "shop/unrelated.py").unlink()
    write_tree(tree, {"shop/extra.py": "from shop.auth import login\n\nlogin(1, 2)\n"})
    result = scan(project)
    assert (result.added, result.deleted, result.parsed) == (1, 1, 1)
    paths = set(SourceFile.objects.values_list("path", flat=True))
    assert "shop/unrelated.py" not in paths and "shop/extra.py" in paths
    assert len(SYMBOL_FTS.ids()) == Symbol.objects.count()


def test_an_extractor_version_change_reindexes_everything(project, monkeypatch):
    scan(project)
    counts = [model.objects.count() for model in (SourceFile, Symbol, CallRef, ImportRef)]
    monkeypatch.setattr(scan_module, "EXTRACTOR_VERSION", 999)
    result = scan(project)
    assert result.full and result.parsed == 5
    assert project.extractor_version == 999
    # Every file's old rows were replaced, not added to.
    assert [m.objects.count() for m in (SourceFile, Symbol, CallRef, ImportRef)] == counts
    assert len(SYMBOL_FTS.ids()) == counts[1]
    assert scan(project).parsed == 0


def test_binary_and_huge_files_are_skipped_with_a_reason(project, tree, settings):
    settings.CODEGRAPH_MAX_FILE_BYTES = 2000
    (tree / "shop/blob.py").write_bytes(b"def x():\n\0\0\0binary")
    (tree / "shop/huge.py").write_text("x = 1\n" * 1000)
    result = scan(project)
    assert result.skipped == 2 and project.state == ScanState.DONE
    reasons = dict(
        SourceFile.objects.exclude(skipped_reason="").values_list("path", "skipped_reason")
    )
    assert reasons["shop/blob.py"] == "binary content"
    assert reasons["shop/huge.py"].startswith("too large")
    assert project.skipped_count == 2


def test_dependency_build_hidden_and_virtualenv_folders_are_not_walked(project, tree):
    write_tree(
        tree,
        {
            "node_modules/lib/index.js": "function a() {}\n",
            "build/out.py": "def b(): pass\n",
            ".hidden/c.py": "def c(): pass\n",
            "venv/lib/d.py": "def d(): pass\n",
            "venv/pyvenv.cfg": "home = /usr\n",
            "vendor/e.go": "package e\n",
        },
    )
    scan(project)
    assert {p.split("/")[0] for p in SourceFile.objects.values_list("path", flat=True)} == {"shop"}


def test_the_servers_own_data_folder_is_never_walked(project, tree, settings):
    # The server runs from the tree it is asked to index, its data folder inside it
    # under a name that is neither hidden nor a build folder.
    write_tree(tree, {"memoryhub-data/queue/task.py": "def queued(): pass\n"})
    settings.DATA_DIR = tree / "memoryhub-data"
    scan(project)
    assert not SourceFile.objects.filter(path__startswith="memoryhub-data/").exists()
    assert SourceFile.objects.filter(path__startswith="shop/").exists()


def test_the_file_cap_stops_the_walk_and_says_so(project, settings):
    settings.CODEGRAPH_MAX_FILES = 3
    scan(project)
    assert project.file_count == 3
    assert "CODEGRAPH_MAX_FILES" in project.warning


@pytest.mark.parametrize(
    "path, message",
    [
        ("missing", "does not exist"),
        ("src/shop/auth.py", "is a file, not a folder"),
    ],
)
def test_bad_folders_are_refused_and_nothing_is_created(owner, tree, tmp_path, path, message):
    with pytest.raises(InvalidInput, match=message):
        services.code_project_register(actor=Actor(user=owner), name="x", path=str(tmp_path / path))
    assert not CodeProject.objects.exists()


def test_a_folder_outside_the_allowed_roots_is_refused(owner, tree):
    with pytest.raises(InvalidInput, match="outside the folders CodeGraph may read"):
        services.code_project_register(actor=Actor(user=owner), name="x", path="/usr")
    assert not CodeProject.objects.exists()


def test_a_vanished_folder_fails_the_scan_with_a_message(project, tree):
    import shutil

    shutil.rmtree(tree)
    scan(project)
    assert project.state == ScanState.FAILED
    assert "does not exist" in project.error


def test_a_second_scan_waits_for_the_running_one(project):
    from django.utils import timezone

    CodeProject.objects.filter(pk=project.pk).update(
        state=ScanState.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    assert services.code_project_scan(project_id=project.pk).errors == ["Another scan is running."]
    assert not SourceFile.objects.exists()


def test_a_scan_with_no_sign_of_life_for_long_does_not_block_a_new_one(project, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.CODEGRAPH_SCAN_STALE_SECONDS = 60
    CodeProject.objects.filter(pk=project.pk).update(
        state=ScanState.RUNNING,
        started_at=timezone.now() - timedelta(hours=2),
        heartbeat_at=timezone.now() - timedelta(seconds=61),
    )
    assert scan(project).parsed == 5 and project.state == ScanState.DONE


SYMBOL_VALUES = ("name", "qualified_name", "kind", "line", "end_line", "signature")
IMPORT_VALUES = ("module", "name", "alias", "line", "target_module", "target_file__path")


def index_of(project: CodeProject) -> dict[str, list[tuple]]:
    """A project's whole index, without row ids, in a stable order."""
    symbols = Symbol.objects.filter(project=project).order_by("id")
    return {
        "symbols": [
            (*row, SYMBOL_FTS.content_of(pk))
            for pk, *row in symbols.values_list("id", "file__path", *SYMBOL_VALUES)
        ],
        "imports": list(
            ImportRef.objects.filter(project=project)
            .order_by("id")
            .values_list("file__path", *IMPORT_VALUES)
        ),
        "calls": list(
            CallRef.objects.filter(project=project)
            .order_by("id")
            .values_list("file__path", "callee", "receiver", "caller", "line")
        ),
        "files": list(
            SourceFile.objects.filter(project=project)
            .order_by("path")
            .values_list("path", "module", "sha256", "has_errors", "skipped_reason")
        ),
    }


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_worker_processes_build_the_same_index_as_one_process(owner, tree, monkeypatch, settings):
    write_tree(tree, {"shop/broken.py": "def broken(:\n    pass\n", "web/app.js": "go();\n"})
    (tree / "shop/blob.py").write_bytes(b"\0binary")
    alone = services.code_project_register(actor=Actor(user=owner), name="one", path=str(tree))
    scan(alone)
    settings.CODEGRAPH_PARALLEL_MIN_FILES = 1
    monkeypatch.setattr(examine, "WORKER_CHUNK", 2)
    monkeypatch.setattr(scan_module, "BATCH_SIZE", 3)
    monkeypatch.setattr(examine.os, "cpu_count", lambda: 2)
    shared = services.code_project_register(actor=Actor(user=owner), name="two", path=str(tree))
    result = scan(shared)
    assert result.workers == 2, "the scan ran in one process"
    assert (result.parsed, result.skipped) == (7, 1)
    assert index_of(shared) == index_of(alone)
    assert shared.symbol_count == alone.symbol_count > 0
