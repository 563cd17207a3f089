"""CodeGraph scan of the installed Django package, beside Universal Ctags.

    python bench/codegraph_scan.py [--repeat N] [--keep]

Copies the Django package into a temporary folder, scans it into a fresh database in a
temporary data directory (nothing touches the real one) and prints: the full scan (the
first scan of a newly registered project: definitions, imports and calls stored and
FTS-indexed), a re-index of the same project (what an extractor upgrade triggers: the
old index is dropped first), an unchanged rescan and a rescan after one edited file;
`ctags -R --languages=Python` on the same tree in the
same run, the ratio, how many of ctags' function / class / member entries (name +
line) our definitions contain, and the callers of `django.contrib.auth.login`, with
every `login(` line grep finds beside them so the list can be checked by hand.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CTAGS_KINDS = {"function", "class", "member"}
TARGET = "django.contrib.auth.login"


def setup(data_dir: Path, tree: Path) -> None:
    """Point the settings at a throwaway data directory, then migrate it."""
    os.environ["MEMORYHUB_DATA_DIR"] = str(data_dir)
    os.environ["CODEGRAPH_ALLOWED_ROOTS"] = str(tree)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    sys.path.insert(0, str(REPO))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def run_ctags(root: Path) -> tuple[float, str]:
    command = ["ctags", "-R", "--languages=Python", "--fields=+nKz", "-f", "-", str(root)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=True, text=True)
    return time.perf_counter() - started, done.stdout


def ctags_entries(output: str, root: Path) -> set[tuple[str, str, int]]:
    """(relative path, name, line) of ctags' function, class and member tags."""
    entries = set()
    for row in output.splitlines():
        head, _, tail = row.rpartition(';"\t')  # the pattern may hold tabs; fields do not
        name, path, _ = head.split("\t", 2)
        fields = dict(item.split(":", 1) for item in tail.split("\t") if ":" in item)
        if fields.get("kind") in CTAGS_KINDS:
            entries.add((os.path.relpath(path, root), name, int(fields["line"])))
    return entries


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def grep_login_lines(root: Path) -> list[str]:
    """Every line holding `login(` (any prefix), as `path:line: text`."""
    pattern = re.compile(r"\w*login\(")
    found = []
    for path in sorted(root.rglob("*.py")):
        for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(text):
                found.append(f"{path.relative_to(root)}:{number}: {text.strip()}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs; best is reported")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--misses", type=int, default=5, help="ctags misses to list")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="codegraph-bench-")).resolve()
    try:
        run(work, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def run(work: Path, args: argparse.Namespace) -> None:
    import django as django_package

    source = Path(django_package.__file__).resolve().parent
    root = work / "tree" / "django"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__"))
    setup(work / "data", work / "tree")

    from django.contrib.auth import get_user_model

    from codegraph.models import CodeProject, Symbol
    from codegraph.selectors import symbol_callers
    from codegraph.services import code_project_delete, code_project_register, code_project_scan
    from teams.services import Actor

    user = get_user_model().objects.create(username="bench")
    actor = Actor(user=user)

    full = float("inf")
    project = None
    for _ in range(args.repeat):
        if project is not None:
            code_project_delete(actor=actor, code_project=project)  # not timed
        project = code_project_register(actor=actor, name="django", path=str(root))
        seconds, _ = timed(code_project_scan, project_id=project.pk)
        full = min(full, seconds)
    reindex = float("inf")
    for _ in range(args.repeat):
        # A stale extractor version makes the next scan drop the index and build it anew.
        CodeProject.objects.filter(pk=project.pk).update(extractor_version=0)
        seconds, _ = timed(code_project_scan, project_id=project.pk)
        reindex = min(reindex, seconds)
    project.refresh_from_db()
    unchanged = min(timed(code_project_scan, project_id=project.pk)[0] for _ in range(args.repeat))
    edited = root / "contrib" / "auth" / "views.py"
    changed = float("inf")
    for round_number in range(args.repeat):
        with edited.open("a") as handle:
            handle.write(f"\n# bench edit {round_number}\n")
        seconds, one = timed(code_project_scan, project_id=project.pk)
        assert one.parsed == 1, one
        changed = min(changed, seconds)

    print(f"tree          django {django_package.__version__} ({source.name}/, copied)")
    print(f"files         {project.file_count}  ({project.skipped_count} skipped)")
    print(f"symbols       {project.symbol_count}")
    print(f"imports       {project.import_count}")
    print(f"calls         {project.call_count}")
    print(
        f"full scan     {full:.3f} s  (first scan of a new project, best of {args.repeat}; "
        "parse + store + FTS)"
    )
    print(f"re-index      {reindex:.3f} s  (drop the old index, then as above)")
    print(f"unchanged     {unchanged:.3f} s  (target <= 0.2 s)")
    print(f"one changed   {changed:.3f} s")

    if shutil.which("ctags") is None:
        print("ctags         not found (apt-get install universal-ctags)")
    else:
        ctags = float("inf")
        output = ""
        for _ in range(args.repeat):
            seconds, output = run_ctags(root)
            ctags = min(ctags, seconds)
        expected = ctags_entries(output, root)
        ours = set(
            Symbol.objects.filter(project=project, file__language="python").values_list(
                "file__path", "name", "line"
            )
        )
        found = expected & ours
        share = 100.0 * len(found) / len(expected) if expected else 100.0
        print(f"ctags         {ctags:.3f} s  (definitions only, best of {args.repeat})")
        print(f"ratio         {full / ctags:.2f}x ctags  (target <= 3x)")
        print(
            f"agreement     {share:.2f}%  ({len(found)} of {len(expected)} ctags entries; "
            "target >= 99%)"
        )
        for path, name, line in sorted(expected - ours)[: args.misses]:
            print(f"  missing     {path}:{line} {name}")

    callers = symbol_callers(user=user, symbol=TARGET)
    print(f"\ncallers of {TARGET} ({len(callers.calls)}; through {', '.join(callers.targets)}):")
    for call in callers.calls:
        print(f"  {call.as_line()}")
    listed = {(call.path, call.line) for call in callers.calls}
    print("\nevery line with `login(` (grep), for checking by hand; * = listed above:")
    for line in grep_login_lines(root):
        path, number, _ = line.split(":", 2)
        print(f"  {'*' if (path, int(number)) in listed else ' '} {line}")


if __name__ == "__main__":
    main()
