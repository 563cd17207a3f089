import dj_database_url
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memoryhub.engine.db.move import move_to_postgres, source_total, target_migrate


class Command(BaseCommand):
    help = (
        "Copy this install's SQLite database (every table, the full-text indexes and the "
        "vectors) into a PostgreSQL database with pgvector, then check every count. The "
        "target is migrated and emptied first. Stop the server and workers while it runs; "
        "afterwards start them with DATABASE_URL set to the target."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("target", help="postgres://user:password@host:5432/name")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: object, target: str, no_progress: bool, **options: object) -> None:
        try:
            target_settings = dj_database_url.parse(target)
        except ValueError as exc:
            raise CommandError(f"The target URL cannot be read: {exc}") from None
        if target_settings["ENGINE"] != settings.POSTGRES_ENGINE:
            raise CommandError("The target must be a PostgreSQL URL (postgres://...).")
        if settings.DATABASES["default"]["ENGINE"] != settings.SQLITE_ENGINE:
            raise CommandError("This install does not run on SQLite: there is nothing to move.")
        self.stdout.write("Migrating the target database...")
        try:
            target_migrate(target, settings.BASE_DIR)
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None
        total = source_total()
        with tqdm(total=total, unit="rows", disable=no_progress, desc="Copying") as bar:
            report = move_to_postgres(target_settings, step=bar.update)
        width = max(len(name) for name in report.rows)
        self.stdout.write(f"{'table':<{width}}  {'SQLite':>9}  {'PostgreSQL':>10}")
        for name, (source, copied) in report.rows.items():
            mark = "" if source == copied else "  MISMATCH"
            self.stdout.write(f"{name:<{width}}  {source:>9}  {copied:>10}{mark}")
        if report.nul_values:
            self.stdout.write(
                f"{report.nul_values} text values held NUL characters, which PostgreSQL "
                "cannot store: they were copied without them."
            )
        if not report.consistent:
            raise CommandError("Some counts differ: the target is not a faithful copy.")
        self.stdout.write(self.style.SUCCESS(f"Copied {total} rows; every count matches."))
