"""Extractor throughput on the installed Django package, beside Universal Ctags.

    python bench/codegraph_extract.py [--path DIR] [--repeat N] [--jobs N] [--misses N]

Extracts every .py file under DIR (default: the installed `django` package) and prints
files, definitions, imports, calls and seconds (best of --repeat runs, reading files
included), and the time tree-sitter alone takes to parse the same files. When `ctags`
(Universal Ctags) is on PATH it also runs `ctags -R --languages=Python --fields=+nKz`
on the same tree, prints its time and the ratios, and the share of ctags' function /
class / member entries (name + line) that our definitions contain.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codegraph.extractor import FileIndex, extract

CTAGS_KINDS = {"function", "class", "member"}


def python_files(root: Path) -> list[Path]:
    """Every .py file under root, in a stable order."""
    found = []
    for directory, _, names in os.walk(root):
        found.extend(Path(directory, name) for name in names if name.endswith(".py"))
    return sorted(found)


def extract_paths(paths: list[str]) -> list[tuple[str, FileIndex]]:
    """Read and extract each path."""
    results = []
    for path in paths:
        with open(path, "rb") as handle:
            results.append((path, extract(path, handle.read())))
    return results


def run_ours(files: list[Path], jobs: int) -> tuple[float, list[tuple[str, FileIndex]]]:
    """Time one extraction pass over files, with `jobs` worker processes (1 = inline)."""
    paths = [str(path) for path in files]
    if jobs <= 1:
        started = time.perf_counter()
        results = extract_paths(paths)
        return time.perf_counter() - started, results
    # Small chunks keep the workers busy while the parent unpickles earlier results.
    chunks = [paths[i : i + 32] for i in range(0, len(paths), 32)]
    with ProcessPoolExecutor(jobs) as pool:
        # Warm the workers (imports, grammar loading) outside the timed pass.
        list(pool.map(extract_paths, [[] for _ in range(jobs)]))
        started = time.perf_counter()
        results = [item for part in pool.map(extract_paths, chunks) for item in part]
        return time.perf_counter() - started, results


def run_parse_only(files: list[Path]) -> float:
    """Time reading and parsing every file with no extraction: the floor under ours."""
    from tree_sitter import Parser

    from codegraph.extractor.languages import spec_for

    parser = Parser(spec_for("python").language)
    started = time.perf_counter()
    for path in files:
        parser.parse(path.read_bytes())
    return time.perf_counter() - started


def run_ctags(ctags: str, root: Path) -> tuple[float, str]:
    """Time one ctags run over root; returns seconds and its tags output."""
    command = [ctags, "-R", "--languages=Python", "--fields=+nKz", "-f", "-", str(root)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=True, text=True)
    return time.perf_counter() - started, done.stdout


def ctags_entries(output: str, root: Path) -> set[tuple[str, str, int]]:
    """(relative path, name, line) of ctags' function, class and member tags."""
    entries = set()
    for row in output.splitlines():
        # The search pattern may hold tabs; the extension fields after `;"` do not.
        head, _, tail = row.rpartition(';"\t')
        name, path, _ = head.split("\t", 2)
        fields = dict(item.split(":", 1) for item in tail.split("\t") if ":" in item)
        if fields.get("kind") in CTAGS_KINDS:
            relative = os.path.relpath(path, root)
            entries.add((relative, name, int(fields["line"])))
    return entries


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, help="tree to index (default: django)")
    parser.add_argument("--repeat", type=int, default=3, help="runs; best is reported")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--misses", type=int, default=10, help="ctags misses to list")
    args = parser.parse_args()

    if args.path is None:
        import django

        args.path = Path(django.__file__).parent
    root = args.path.resolve()
    files = python_files(root)

    ours = float("inf")
    results: list[tuple[str, FileIndex]] = []
    for _ in range(args.repeat):
        seconds, results = run_ours(files, args.jobs)
        ours = min(ours, seconds)
    definitions = sum(len(index.definitions) for _, index in results)
    imports = sum(len(index.imports) for _, index in results)
    calls = sum(len(index.calls) for _, index in results)
    with_errors = sum(index.has_errors for _, index in results)

    print(f"tree         {root}")
    print(f"files        {len(files)}  ({with_errors} with syntax errors)")
    print(f"definitions  {definitions}")
    print(f"imports      {imports}")
    print(f"calls        {calls}")
    print(f"seconds      {ours:.3f}  (best of {args.repeat}, jobs={args.jobs})")
    parse_only = min(run_parse_only(files) for _ in range(args.repeat))
    print(f"parse only   {parse_only:.3f}  (tree-sitter parse, no extraction, one process)")

    ctags = shutil.which("ctags")
    if ctags is None:
        print("ctags        not found (apt-get install universal-ctags)")
        return
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True)
    if "Universal Ctags" not in version.stdout:
        print("ctags        not Universal Ctags; skipped")
        return
    theirs = float("inf")
    output = ""
    for _ in range(args.repeat):
        seconds, output = run_ctags(ctags, root)
        theirs = min(theirs, seconds)
    expected = ctags_entries(output, root)
    ours_set = {
        (os.path.relpath(path, root), definition.name, definition.line)
        for path, index in results
        for definition in index.definitions
    }
    found = expected & ours_set
    share = 100.0 * len(found) / len(expected) if expected else 100.0
    print(f"ctags        {theirs:.3f} s  (definitions only, best of {args.repeat})")
    print(f"ratio        {ours / theirs:.2f}x ctags  (parse only {parse_only / theirs:.2f}x)")
    print(f"agreement    {share:.2f}%  ({len(found)} of {len(expected)} ctags entries)")
    for relative, name, line in sorted(expected - ours_set)[: args.misses]:
        print(f"  missing    {relative}:{line} {name}")


if __name__ == "__main__":
    main()
