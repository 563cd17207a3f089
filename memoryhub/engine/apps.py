from django.apps import AppConfig
from django.conf import settings


class EngineConfig(AppConfig):
    name = "memoryhub.engine"
    label = "engine"
    verbose_name = "MemoryHub engine"

    def ready(self) -> None:
        """Make the data directory's folders: the web server, the worker and every
        command start here, while reading the settings alone writes nothing."""
        import memoryhub.engine.db.lookups  # noqa: F401  (registers ``any_of``)
        from memoryhub.engine import liveness
        from memoryhub.engine.embeddings.factory import local_weights_dir_set
        from memoryhub.engine.queue import queue_folders

        folders = [settings.DATA_DIR, settings.STATIC_ROOT]
        if not settings.REDIS_URL:
            folders += queue_folders(settings.DATA_DIR)
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        liveness.connect()
        local_weights_dir_set(directory=settings.EMBEDDINGS_WEIGHTS_DIR)
