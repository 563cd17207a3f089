from django.apps import AppConfig


class MemoryHubConfig(AppConfig):
    """The project: its management commands that start things (``runall``,
    ``ensure_admin``, ``mcp``, ``migrate_to_postgres``) and the history of the rows that
    moved to the engine and the surface."""

    name = "memoryhub"
    verbose_name = "MemoryHub"

    def ready(self) -> None:
        from memoryhub import checks  # noqa: F401  (registers them)
