"""Injection scanner: per-rule hits over the labelled corpus, the two figures, throughput.

    python bench/wiki_scanner.py [--repeat N] [--size KB]

Scans every file under wiki/tests/corpus/injections and wiki/tests/corpus/notes and
prints, per rule, how many injections and how many notes it flags (high or medium) and
how many notes it only mentions (low); then the detection rate over injections and the
false-positive rate over notes. Throughput is the best of --repeat runs (CPU time) over
one document of --size KB built from the notes alone and from notes and injections
mixed, over the corpus scanned file by file, and over the long descriptions (READMEs)
of the installed Python packages: ordinary technical prose nobody wrote for this test,
where it also counts what gets flagged.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from wiki.scanner import SCANNER_VERSION, is_flagged, scan  # noqa: E402

CORPUS = REPO_ROOT / "wiki" / "tests" / "corpus"


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


def package_readmes() -> list[str]:
    """The long description of every installed distribution that has one."""
    readmes = []
    for dist in metadata.distributions():
        body = dist.read_text("METADATA") or ""
        _, _, description = body.partition("\n\n")  # headers, a blank line, the README
        if len(description) > 200:
            readmes.append(description)
    return readmes


def sized(text: str, size: int) -> str:
    """``text`` repeated and cut to ``size`` characters."""
    return (text * (size // len(text) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="Timed runs; the best counts.")
    parser.add_argument("--size", type=int, default=100, help="Document size in KB.")
    args = parser.parse_args()

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
    readmes = package_readmes()
    readme_chars = sum(map(len, readmes))
    flagged = sum(is_flagged(scan(text)) for text in readmes)
    seconds = best_cpu_seconds(lambda: [scan(text) for text in readmes], max(1, args.repeat // 3))
    print(
        f"{'installed package READMEs':<30} {seconds * 1000:8.1f} ms   "
        f"{readme_chars / 1000 / seconds:8.0f} KB/s  "
        f"({len(readmes)} READMEs, {readme_chars // 1000} KB, {flagged} flagged)"
    )


if __name__ == "__main__":
    main()
