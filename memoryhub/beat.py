"""One scheduling beat however many run: celery beat with a lease in Redis.

Every beat process ticks, but only the one holding the lease (a Redis key with a
time-to-live, renewed every tick) sends due tasks; the others stand by and check the
lease every few seconds, so when the leader dies another takes over once its lease
runs out. Without Redis (the filesystem queue of one machine) the only beat leads.
"""

from __future__ import annotations

import logging
import uuid

import redis
from celery.beat import PersistentScheduler
from django.conf import settings

logger = logging.getLogger(__name__)

LEASE_KEY = "memoryhub:beat:leader"
# Renew the lease only if this beat still holds it.
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)


class SingleBeatScheduler(PersistentScheduler):
    def __init__(self, *args, **kwargs) -> None:
        self._token = uuid.uuid4().hex
        self._lease_ms = int(settings.MEMORYHUB_BEAT_LEASE_SECONDS * 1000)
        self._redis = (
            redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)
            if settings.REDIS_URL
            else None
        )
        self._leading: bool | None = None
        super().__init__(*args, **kwargs)

    def _holds_lease(self) -> bool:
        if self._redis is None:
            return True
        try:
            if self._redis.set(LEASE_KEY, self._token, nx=True, px=self._lease_ms):
                return True
            return bool(self._redis.eval(_RENEW, 1, LEASE_KEY, self._token, self._lease_ms))
        except redis.RedisError as exc:  # no broker either: nothing could be sent
            logger.warning("beat cannot reach Redis for its lease: %s", exc)
            return False

    def tick(self, *args, **kwargs) -> float:
        leading = self._holds_lease()
        if leading != self._leading:
            logger.info(
                "beat %s: %s",
                self._token[:8],
                "this beat schedules the periodic tasks"
                if leading
                else "another beat schedules the periodic tasks; this one stands by",
            )
            self._leading = leading
        # Come back before the lease runs out, to renew it (or to look for it again).
        renew_within = self._lease_ms / 1000 / 3
        if not leading:
            return renew_within
        return min(super().tick(*args, **kwargs), renew_within)
