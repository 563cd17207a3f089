"""manage.py rebuild_fact_keys [--if-stale]: re-key every active fact for near-duplicate
lookups, with a progress bar."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from facts.dedupe import KEYS_VERSION, fact_keys_rebuild, fact_keys_stale
from memoryhub.engine.cli import ProgressBar
from memoryhub.engine.config import memory_config_get


class Command(BaseCommand):
    help = "Rebuild the near-duplicate keys of every active fact."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-stale",
            action="store_true",
            help="Only when the keys were built by another version of the rules",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        memory_config_get()  # the row that records the version
        with transaction.atomic():
            if options["if_stale"] and not fact_keys_stale():
                self.stdout.write(f"Near-duplicate keys are current (version {KEYS_VERSION}).")
                return
            bar = ProgressBar(unit="fact", desc="keys")
            try:
                count = fact_keys_rebuild(progress=bar)
            finally:
                bar.close()
        self.stdout.write(f"Keyed {count} active facts (version {KEYS_VERSION}).")
