"""Broker and result-backend settings for the two ways MemoryHub queues work."""

from pathlib import Path
from typing import Any

# A broker that does not answer must not hold up the request that queues work: connect
# and socket waits are bounded, and a publish is retried once, at once.
CONNECT_TIMEOUT_SECONDS = 2.0
# Longer than the worker's blocking pop (one second), so an idle worker is not cut off.
SOCKET_TIMEOUT_SECONDS = 5.0
PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}


def queue_folders(data_dir: Path) -> list[Path]:
    """The folders of the filesystem queue under ``data_dir`` (made at start-up)."""
    return [data_dir / "queue" / sub for sub in ("messages", "processed", "control", "results")]


def celery_queue_settings(
    *, redis_url: str, data_dir: Path, visibility_timeout: int = 3600
) -> dict[str, Any]:
    """Celery settings (lower-case keys) for Redis when ``redis_url`` is set, else for
    Celery's filesystem transport under ``data_dir/queue``. On Redis, a task taken by a
    worker that died without acknowledging it is handed out again after
    ``visibility_timeout`` seconds."""
    if redis_url:
        return {
            "broker_url": redis_url,
            "result_backend": redis_url,
            "broker_transport_options": {
                "socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
                "socket_timeout": SOCKET_TIMEOUT_SECONDS,
                "visibility_timeout": visibility_timeout,
                # Look for such tasks every ten seconds, not every hundred.
                "unacked_restore_interval": min(10, max(1, visibility_timeout // 2)),
                "unacked_restore_throttle": 1,
            },
            "redis_socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
            "redis_socket_timeout": SOCKET_TIMEOUT_SECONDS,
        }
    queue_dir = data_dir / "queue"
    return {
        # The folders say where the queue is; the host only keeps kombu from warning
        # that none was given.
        "broker_url": "filesystem://localhost//",
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
