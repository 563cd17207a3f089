"""manage.py wiki_rescan: give stored pages the current scanner's verdict now, rather
than at beat's next run."""

from django.core.management.base import BaseCommand, CommandParser

from wiki import scanner, services


class Command(BaseCommand):
    help = "Scan again every wiki page whose stored verdict an older scanner gave."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=500, help="Pages per batch.")

    def handle(self, *args: object, **options: int) -> None:
        total = 0
        while refreshed := services.wiki_pages_rescan(limit=max(1, options["batch"])):
            total += refreshed
        self.stdout.write(f"{total} page(s) rescanned with scanner v{scanner.SCANNER_VERSION}.")
