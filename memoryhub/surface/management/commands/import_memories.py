"""``manage.py import_memories FILE --user NAME``: load a MemoryHub export or a Mem0
dump into a person's memory, as ``POST /api/memories/import`` does, with a progress bar.

Everything is checked before anything is written, and written in one transaction;
importing the same file again adds nothing.
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.engine.cli import command_progress, user_named
from memoryhub.engine.errors import ApplicationError
from memoryhub.surface.imports import document_read_file, memories_import
from teams.services import Actor


class Command(BaseCommand):
    help = "Import a MemoryHub export or a Mem0 memory dump (JSON) into a person's memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--user", help="Whose memory the facts go into (username).")
        parser.add_argument(
            "--no-progress", action="store_true", help="Do not draw the progress bar on stderr."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = user_named(options["user"])
        bar = command_progress(self, options, unit="fact", desc="import")
        try:
            document = document_read_file(options["file"])
            result = memories_import(actor=Actor(user=user), document=document, progress=bar)
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        finally:
            if bar is not None:
                bar.close()
        self.stdout.write(
            f"{result['created']} created, {result['merged']} merged, "
            f"{result['skipped']} already there ({result['format']}); "
            f"{result['links']} links, {result['made_private']} team facts made private, "
            f"{result['not_yours']} of other people left out."
        )
