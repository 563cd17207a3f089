"""Checks Django runs before serving (``manage.py check``, ``migrate``, ``runall``):
settings that would make the server wait on itself."""

from typing import Any

from django.conf import settings
from django.core.checks import Warning, register

from memoryhub.engine.search import readahead


@register()
def pool_leaves_each_thread_a_connection(app_configs: Any = None, **kwargs: Any) -> list:
    """On PostgreSQL each process shares a pool of connections among its threads: the
    web server's and recall's search and read-ahead threads. A pool smaller than those
    together makes a busy process wait for a connection (up to DB_POOL_TIMEOUT)."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if not isinstance(pool, dict) or not pool.get("max_size"):
        return []
    threads = settings.MEMORYHUB_WEB_THREADS
    needed = threads + readahead.CONNECTIONS
    if pool["max_size"] >= needed:
        return []
    return [
        Warning(
            f"DB_POOL_MAX_SIZE={pool['max_size']} is fewer connections than a web process "
            f"may need at once: {threads} web threads (MEMORYHUB_WEB_THREADS) and "
            f"{readahead.CONNECTIONS} search threads. A busy process would wait for a "
            "connection, up to DB_POOL_TIMEOUT seconds.",
            hint=f"Set DB_POOL_MAX_SIZE to {needed} or more, or MEMORYHUB_WEB_THREADS to "
            f"{max(1, pool['max_size'] - readahead.CONNECTIONS)} or fewer.",
            id="memoryhub.W001",
        )
    ]
