from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from wiki import scanner


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


class Command(BaseCommand):
    help = (
        "Scan Markdown files for prompt injection. Prints file:line:col rule severity message "
        "per finding and a verdict per file; exits 1 when any file is flagged, 2 when a file "
        "cannot be read. The learned pass reads each file as it reads a page being saved."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE", help="Files to scan.")
        parser.add_argument(
            "--rules-only",
            action="store_true",
            help="Skip the learned pass (no embedding model is loaded).",
        )

    def handle(self, *args: object, **options: Any) -> None:
        flagged = unreadable = 0
        for name in options["files"]:
            try:
                text = Path(name).read_text(encoding="utf-8")
            except UnicodeDecodeError:
                self.stderr.write(f"{name}: cannot read: not UTF-8 text")
                unreadable += 1
                continue
            except OSError as exc:
                self.stderr.write(f"{name}: cannot read: {exc.strerror or exc}")
                unreadable += 1
                continue
            findings = scanner.scan(text, learned=not options["rules_only"])
            for finding in findings:
                line, column = line_and_column(text, finding.start)
                self.stdout.write(
                    f"{name}:{line}:{column} {finding.rule} {finding.severity} {finding.message}"
                )
            if scanner.is_flagged(findings):
                flagged += 1
                serious = sum(f.severity != "low" for f in findings)
                self.stdout.write(f"{name}: FLAGGED ({_count(serious, 'high or medium finding')})")
            else:
                self.stdout.write(f"{name}: clean ({_count(len(findings), 'low finding')})")
        if unreadable:
            raise CommandError(f"{unreadable} file(s) could not be read.", returncode=2)
        if flagged:
            # Not a CommandError: the findings above are the message, not an error.
            raise SystemExit(1)
