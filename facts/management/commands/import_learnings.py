"""``manage.py import_learnings DIR --user NAME``: load ``learnings/<YYYY-MM-DD>.jsonl``
files (one learning a line) into a person's memory, with a progress bar.

Every line is checked before anything is written (a bad line is named by file and line
number) and everything is written in one transaction; importing again adds nothing.
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from facts.learnings import learnings_import
from memoryhub.engine.cli import command_progress, user_named
from memoryhub.engine.errors import ApplicationError
from teams.services import Actor


class Command(BaseCommand):
    help = "Import learnings/<YYYY-MM-DD>.jsonl files (one learning a line) into a memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path, help="The folder (or its learnings/)")
        parser.add_argument("--user", help="Whose memory the learnings go into (username).")
        parser.add_argument("--visibility", help="private, team or global (default: settings)")
        parser.add_argument("--team", help="The team of team learnings")
        parser.add_argument(
            "--no-progress", action="store_true", help="Do not draw the progress bar on stderr."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = user_named(options["user"])
        bar = command_progress(self, options, unit="learning", desc="import")
        try:
            result = learnings_import(
                actor=Actor(user=user),
                directory=options["directory"],
                visibility=options["visibility"],
                team=options["team"],
                progress=bar,
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        finally:
            if bar is not None:
                bar.close()
        self.stdout.write(
            f"{result['created']} learnings created, {result['skipped']} already there "
            f"({result['files']} files)."
        )
