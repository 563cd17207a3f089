"""manage.py codegraph_scan PATH --name NAME [--user USERNAME]: scan a folder inline."""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from codegraph.models import ScanState
from codegraph.services import code_project_register, code_project_scan
from memoryhub.engine.cli import ProgressBar, user_named
from memoryhub.engine.errors import ApplicationError
from teams.services import Actor


class Command(BaseCommand):
    help = "Scan a source folder into a CodeGraph project (inline, with a progress bar)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="Absolute folder path inside an allowed root")
        parser.add_argument("--name", required=True, help="Project name")
        parser.add_argument("--user", help="Act as this user (default: the admin account)")
        parser.add_argument("--visibility", help="private, team or global")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = Actor(user=user_named(options["user"]))
        try:
            project = code_project_register(
                actor=actor,
                name=options["name"],
                path=options["path"],
                visibility=options["visibility"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        bar = ProgressBar(unit="file", desc="scan")
        started = time.perf_counter()
        try:
            result = code_project_scan(project_id=project.pk, progress=bar)
        finally:
            bar.close()
        project.refresh_from_db()
        if project.state != ScanState.DONE:
            raise CommandError(project.error or "The scan failed.")
        self.stdout.write(
            f"{project.name}: {result.files} files ({result.parsed} parsed, "
            f"{result.unchanged} unchanged, {result.deleted} removed, {result.skipped} "
            f"skipped), {project.symbol_count} symbols, {project.import_count} imports, "
            f"{project.call_count} calls in {time.perf_counter() - started:.2f}s"
        )
        if project.warning:
            self.stderr.write(project.warning)
