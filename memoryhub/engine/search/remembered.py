"""Figures read from the database that a search may use slightly old (row counts, the
planner's statistics, how words are indexed), kept per process and per database."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

from django.db import connection

# What ``peek`` answers for a value not kept (or no longer fresh).
MISSING = object()


class Remembered[T]:
    """Values keyed by the current database and ``parts``, each kept ``ttl`` seconds
    (None: for the life of the process); once ``kept`` are held, the store starts over
    rather than growing."""

    def __init__(self, ttl: float | None, kept: int = 50_000) -> None:
        self.ttl = ttl
        self.kept = kept
        self._values: dict[tuple, tuple[T, float]] = {}

    @staticmethod
    def _key(parts: tuple[Hashable, ...]) -> tuple:
        return (connection.alias, str(connection.settings_dict["NAME"]), *parts)

    def peek(self, *parts: Hashable) -> T | object:
        """The value kept for ``parts`` if it is still fresh, else ``MISSING``."""
        held = self._values.get(self._key(parts))
        if held is None or (self.ttl is not None and time.monotonic() - held[1] > self.ttl):
            return MISSING
        return held[0]

    def put(self, value: T, *parts: Hashable) -> T:
        if len(self._values) >= self.kept:
            self._values.clear()
        self._values[self._key(parts)] = (value, time.monotonic())
        return value

    def get(self, read: Callable[[], T], *parts: Hashable) -> T:
        """The value kept for ``parts``, or what ``read()`` gives (then kept)."""
        value = self.peek(*parts)
        return self.put(read(), *parts) if value is MISSING else value  # type: ignore[return-value]
