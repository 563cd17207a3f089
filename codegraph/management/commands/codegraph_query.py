"""manage.py codegraph_query NAME_OR_SYMBOL [--callers] [--project NAME] [--user USERNAME]"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from codegraph.tools import codegraph_query
from memoryhub.engine.cli import user_named
from memoryhub.engine.errors import ApplicationError
from teams.services import Actor


class Command(BaseCommand):
    help = "Find symbols by name, or the callers of a symbol, in CodeGraph projects."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query", help="A name (fuzzy) or, with --callers, a symbol")
        parser.add_argument("--callers", action="store_true", help="List call sites")
        parser.add_argument("--project", help="Project name or id (default: all visible)")
        parser.add_argument("--user", help="Act as this user (default: the admin account)")
        parser.add_argument("--limit", type=int, default=20)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            answer = codegraph_query(
                actor=Actor(user=user_named(options["user"])),
                query=options["query"],
                project=options["project"],
                callers=options["callers"],
                limit=options["limit"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(answer.text)
