"""The shared cache: Redis when ``REDIS_URL`` is set, otherwise files under the data
directory.

A Redis that is down must not take the requests that use the cache down with it. Each
call to it is bounded (a Redis that answers does so in well under a millisecond, so half
a second without an answer is an outage) and goes through a circuit breaker: the first
call that finds Redis unreachable opens the circuit, with a log line, and until
``retry_seconds`` have passed every further call fails at once, without trying. A call
that fails raises ``CacheUnavailable`` and each use of the cache says what doing without
it means: failed logins are counted in the database, a job's progress shows once its
work commits, the embedding sweep is left to the backfill. The circuit is per process,
as the task queue's is.
"""

import logging
from pathlib import Path
from typing import Any

import pybreaker
from django.core.cache.backends import redis as django_redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memoryhub.engine.circuits import CircuitLog

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 0.5


class CacheUnavailable(Exception):
    """The shared cache did not answer, now or when it was last tried."""


def _not_an_outage(exc: BaseException) -> bool:
    # A missing key (incr) or a bad value is the caller's business, not Redis being down.
    return not isinstance(exc, RedisConnectionError | RedisTimeoutError)


# pybreaker makes each call under its lock, so a process's cache calls take turns: a
# fraction of a millisecond each while Redis answers; while one call waits on a Redis
# that hangs, the others wait for it, then fail at once.
cache_circuit = pybreaker.CircuitBreaker(
    fail_max=1,
    reset_timeout=30,
    exclude=[_not_an_outage],
    listeners=[
        CircuitLog(
            logger,
            opened="The shared cache (Redis) is unreachable; failed logins are counted in "
            "the database, and Redis is tried again in %g s.",
            closed="The shared cache (Redis) answers again.",
        )
    ],
    name="shared cache",
)


def _guarded(command: Any, *args: Any) -> Any:
    try:
        return cache_circuit.call(command, *args)
    except pybreaker.CircuitBreakerError as exc:
        # The call that opened the circuit says what went wrong; later ones were not tried.
        why = exc.__context__ or "unreachable when last tried, not tried again yet"
        raise CacheUnavailable(f"The shared cache (Redis): {why}") from exc


class _GuardedClient(django_redis.RedisCacheClient):
    """Django's Redis client with every command behind the circuit."""

    def add(self, key: Any, value: Any, timeout: Any) -> bool:
        return _guarded(super().add, key, value, timeout)

    def get(self, key: Any, default: Any) -> Any:
        return _guarded(super().get, key, default)

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        _guarded(super().set, key, value, timeout)

    def touch(self, key: Any, timeout: Any) -> bool:
        return _guarded(super().touch, key, timeout)

    def delete(self, key: Any) -> bool:
        return _guarded(super().delete, key)

    def get_many(self, keys: Any) -> dict[Any, Any]:
        return _guarded(super().get_many, keys)

    def has_key(self, key: Any) -> bool:
        return _guarded(super().has_key, key)

    def incr(self, key: Any, delta: int) -> int:
        return _guarded(super().incr, key, delta)

    def set_many(self, data: dict[Any, Any], timeout: Any) -> None:
        _guarded(super().set_many, data, timeout)

    def delete_many(self, keys: Any) -> None:
        _guarded(super().delete_many, keys)

    def clear(self) -> bool:
        return _guarded(super().clear)


class RedisCache(django_redis.RedisCache):
    """Django's Redis cache that raises ``CacheUnavailable`` at once while Redis is down.
    ``OPTIONS["retry_seconds"]``: how long the circuit stays open after a failure."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = dict(params.get("OPTIONS", {}))
        cache_circuit.reset_timeout = options.pop("retry_seconds", cache_circuit.reset_timeout)
        super().__init__(server, {**params, "OPTIONS": options})
        self._class = _GuardedClient


def cache_settings(*, redis_url: str, data_dir: Path, retry_seconds: float = 30.0) -> dict:
    """Django's ``CACHES``: Redis at ``redis_url`` when it is set, else files under
    ``data_dir/cache``."""
    if redis_url:
        return {
            "default": {
                "BACKEND": "memoryhub.engine.cache.RedisCache",
                "LOCATION": redis_url,
                "KEY_PREFIX": "memoryhub",
                "OPTIONS": {
                    "socket_connect_timeout": TIMEOUT_SECONDS,
                    "socket_timeout": TIMEOUT_SECONDS,
                    "retry_seconds": retry_seconds,
                },
            }
        }
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": data_dir / "cache",
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }
