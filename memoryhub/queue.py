"""Broker and result-backend settings for the two ways MemoryHub queues work."""

from pathlib import Path
from typing import Any


def celery_queue_settings(*, redis_url: str, data_dir: Path) -> dict[str, Any]:
    """Celery settings (lower-case keys) for Redis when ``redis_url`` is set, else for
    Celery's filesystem transport under ``data_dir/queue``."""
    if redis_url:
        return {
            "broker_url": redis_url,
            "result_backend": redis_url,
            "broker_transport_options": {},
        }
    queue_dir = data_dir / "queue"
    for sub in ("messages", "processed", "control", "results"):
        (queue_dir / sub).mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": "filesystem://",
        "broker_transport_options": {
            "data_folder_in": str(queue_dir / "messages"),
            "data_folder_out": str(queue_dir / "messages"),
            "processed_folder": str(queue_dir / "processed"),
            "control_folder": str(queue_dir / "control"),
            "store_processed": False,
            # Kombu polls the folder; its default of once a second idles the worker
            # between short tasks.
            "polling_interval": 0.1,
        },
        "result_backend": "file://" + str(queue_dir / "results"),
    }
