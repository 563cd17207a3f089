"""The personal data export at scale: memory while streaming, beside the same document
built in memory.

    .venv/bin/python bench/export_memory.py [--facts 100000] [--no-tracemalloc] [--keep]

Everything runs in a temporary MEMORYHUB_DATA_DIR, on SQLite. One person's memory is
loaded in bulk: ``--facts`` generated facts (``bench/_facts.py``), a summary per 20 of
them linked to five sources, and an audit event per fact (its history in the export).
Then, in this process:

1. the export as the web process streams it (``GET /api/export/personalization``: the
   response's pieces read and dropped one by one, as a server sends them);
2. the baseline: the same document built in memory (every section read into lists)
   and serialised with ``json.dumps``, as an export that is not streamed would.

For each: seconds, the document's size, how much the process's private resident memory
(its heap and the database's page cache) grew at its peak, sampled with every piece
sent, and with tracemalloc (a second run, slower) the peak of Python allocations. Target:
the streamed export of 100k facts grows the process by at most 50 MB. Beside them, how
much of the database file the process mapped while reading (SQLite's memory map, shared
with every process on the machine and given back under pressure: not the process's own).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._env import bench_env, bench_user, django_setup, machine_note, revision, temp_data_dir
from bench._facts import FactGenerator
from bench._tables import print_table

FILL_BATCH = 5_000
MB = 1024 * 1024


def load_memory(user, count: int) -> None:
    """``count`` facts of ``user``'s, a summary per 20 linked to five of them, and a
    creation event per fact."""
    from django.db import transaction
    from django.utils import timezone

    from facts.models import Fact
    from teams.models import AuditEvent

    facts = FactGenerator(seed=11).unique_facts(count)
    now = timezone.now()
    links = Fact.derived_from.through
    for start in range(0, count, FILL_BATCH):
        chunk = facts[start : start + FILL_BATCH]
        rows = [
            Fact(
                owner=user,
                visibility="private",
                content=item["content"],
                category=item["category"],
                tags=item["tags"],
                source_excerpt=item["content"][:200],
                created_by=user,
                created_at=now,
                updated_at=now,
                valid_from=now,
            )
            for item in chunk
        ]
        with transaction.atomic():
            Fact.objects.bulk_create(rows, batch_size=500)
            summaries = [
                Fact(
                    owner=user,
                    visibility="private",
                    content=f"Summary of facts {rows[i].pk} to {rows[i + 4].pk}",
                    category="summary",
                    layer=2,
                    created_at=now,
                    updated_at=now,
                    valid_from=now,
                )
                for i in range(0, len(rows) - 4, 20)
            ]
            Fact.objects.bulk_create(summaries, batch_size=500)
            links.objects.bulk_create(
                [
                    links(from_fact_id=s.pk, to_fact_id=rows[n * 20 + k].pk)
                    for n, s in enumerate(summaries)
                    for k in range(5)
                ],
                batch_size=1000,
            )
            AuditEvent.objects.bulk_create(
                [
                    AuditEvent(
                        actor=user,
                        actor_label=user.get_username(),
                        action="fact.create",
                        target_type="fact",
                        target_id=str(f.pk),
                        details={"category": f.category, "visibility": "private", "project": ""},
                    )
                    for f in rows
                ],
                batch_size=1000,
            )


# --- Memory -------------------------------------------------------------------------------


def resident() -> dict[str, int]:
    """This process's resident memory in bytes: private (``RssAnon``: the heap and the
    database's page cache) and mapped from files (``RssFile``: the database file, read
    through SQLite's memory map, shared with every process and given back under
    pressure)."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile"):
            found[name] = int(value.split()[0]) * 1024
    return found


class Peaks:
    """The highest resident figures seen, sampled as the work goes."""

    def __init__(self) -> None:
        self.before = resident()
        self.high = dict(self.before)

    def sample(self) -> None:
        for name, value in resident().items():
            self.high[name] = max(self.high.get(name, 0), value)

    def growth(self, name: str) -> int:
        return self.high.get(name, 0) - self.before.get(name, 0)


def measure(run: Callable[[Callable[[], None]], int], *, traced: bool) -> dict[str, float]:
    """Seconds, output bytes and memory growth of ``run`` (given a function to call as
    it goes, to sample memory; it returns the bytes it produced): the peaks of private
    and file-mapped resident memory, or with ``traced`` the peak of Python allocations."""
    gc.collect()
    if traced:
        tracemalloc.start()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
    peaks = Peaks()
    started = time.perf_counter()
    size = run(lambda: None if traced else peaks.sample())
    seconds = time.perf_counter() - started
    peaks.sample()
    result = {"seconds": seconds, "bytes": size}
    if traced:
        result["traced"] = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
    else:
        result["private"] = peaks.growth("RssAnon")
        result["mapped"] = peaks.growth("RssFile")
    return result


# --- The two ways -------------------------------------------------------------------------


def streamed(user) -> Callable[[Callable[[], None]], int]:
    """The export as the API answers it: the response's pieces, each dropped once sent."""
    from django.http import StreamingHttpResponse

    from memoryhub.surface.export import personal_export_stream

    def run(sample: Callable[[], None]) -> int:
        response = StreamingHttpResponse(
            personal_export_stream(user=user), content_type="application/json"
        )
        size = 0
        for piece in response:
            size += len(piece)
            sample()
        return size

    return run


def in_memory(user) -> Callable[[Callable[[], None]], int]:
    """The same document read whole into lists and serialised at once."""
    from django.utils import timezone

    from memoryhub.surface.export import FORMAT, FORMAT_VERSION, _sections, _settings, _user

    def run(sample: Callable[[], None]) -> int:
        document = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "exported_at": timezone.now().isoformat(),
            "user": _user(user),
            "settings": _settings(user),
            **{name: list(rows()) for name, rows in _sections(user)},
        }
        sample()
        text = json.dumps(document, ensure_ascii=False).encode()
        sample()  # the document and its text, both held
        return len(text)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--no-tracemalloc", action="store_true", help="Skip the traced runs.")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    print(f"MemoryHub export bench at {revision()}; {machine_note()}")
    with temp_data_dir("memoryhub-export-", keep=args.keep) as data_dir:
        django_setup(bench_env(data_dir))
        user, _, _ = bench_user("exporter")
        started = time.perf_counter()
        load_memory(user, args.facts)
        print(f"  loaded {args.facts:,} facts in {time.perf_counter() - started:.0f} s", flush=True)
        # Warm up on a small memory of someone else's: the first query of each kind
        # loads code and fills caches, and the process's heap stays as it was.
        warm, _, _ = bench_user("warm-up")
        load_memory(warm, 40)
        streamed(warm)(lambda: None)
        in_memory(warm)(lambda: None)
        rows = []
        for name, make in (("streamed (the API)", streamed), ("built in memory", in_memory)):
            memory = measure(make(user), traced=False)
            traced = None if args.no_tracemalloc else measure(make(user), traced=True)
            rows.append(
                [
                    f"{name}, {args.facts:,} facts",
                    memory["seconds"],
                    memory["bytes"] / MB,
                    memory["private"] / MB,
                    traced["traced"] / MB if traced else float("nan"),
                    memory["mapped"] / MB,
                ]
            )
    print_table(
        "Personal data export (target: the streamed export grows the process by <= 50 MB)",
        [
            "export",
            "seconds",
            "document MB",
            "private RSS peak growth MB",
            "traced peak MB",
            "database file mapped MB",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
