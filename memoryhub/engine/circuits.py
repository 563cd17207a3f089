"""Circuit breakers around the edges we do not own (the broker, the shared cache, the
chat model, a remote embedder): a listener that says in the log when one stops answering
and when it answers again, and a circuit for calls that run side by side."""

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pybreaker


class CircuitLog(pybreaker.CircuitBreakerListener):
    """Logs ``opened`` (a warning; ``%g`` takes the seconds until the next try) when the
    circuit opens, and ``closed`` when it closes again after being open."""

    def __init__(self, logger: logging.Logger, *, opened: str, closed: str) -> None:
        self.logger, self.opened, self.closed = logger, opened, closed

    def state_change(
        self,
        cb: pybreaker.CircuitBreaker,
        old_state: pybreaker.CircuitBreakerState | None,
        new_state: pybreaker.CircuitBreakerState,
    ) -> None:
        if new_state.name == pybreaker.STATE_OPEN:
            self.logger.warning(self.opened, cb.reset_timeout)
        elif (
            new_state.name == pybreaker.STATE_CLOSED
            and old_state is not None
            and old_state.name != pybreaker.STATE_CLOSED
        ):
            self.logger.info(self.closed)


@dataclass(frozen=True)
class RequestLimits:
    """How long a request thread may wait on an edge (the chat model, a remote embedder),
    and when it stops asking: ``deadline`` seconds in all for one call (every attempt
    and every wait between them), the circuit opening after ``failures`` failed calls in
    a row and letting one call through again after ``retry_seconds``."""

    deadline: float
    failures: int = 3
    retry_seconds: float = 30.0


class CircuitOpen(Exception):
    """The edge failed too often lately: it is not asked until ``retry_after`` seconds
    have passed; ``last`` says how its last call failed."""

    def __init__(self, *, retry_after: float, failures: int, last: str) -> None:
        super().__init__(f"failed {failures} times in a row; last: {last}")
        self.retry_after, self.failures, self.last = retry_after, failures, last


class EdgeCircuit:
    """A pybreaker circuit around calls to an edge that run side by side.

    ``pybreaker.CircuitBreaker.call`` holds the breaker's lock for the whole call, so
    guarded calls would take turns: here the call runs outside it, and only its outcome
    goes through the breaker. ``guard()`` raises :class:`CircuitOpen` at once while the
    circuit is open; once ``retry_seconds`` have passed, one call (the probe) is let
    through while the others are still refused: if it gets an answer the circuit
    closes, if not it stays open for another ``retry_seconds``. An exception for which
    ``outage(exc)`` is false (the edge answered, though not usefully) counts as an
    answer."""

    def __init__(
        self,
        *,
        name: str,
        failures: int,
        retry_seconds: float,
        outage: Callable[[BaseException], bool],
        log: CircuitLog,
    ) -> None:
        self._outage = outage
        self._lock = threading.Lock()
        self._probing = False
        self._opened_at = 0.0
        self._last = ""
        self.breaker = pybreaker.CircuitBreaker(
            fail_max=failures,
            reset_timeout=retry_seconds,
            listeners=[log, _OpenedAt(self)],
            name=name,
        )

    @property
    def is_open(self) -> bool:
        return self.breaker.current_state != pybreaker.STATE_CLOSED

    def retry_in(self) -> float:
        """Seconds until the next call is let through (0 when it would be now)."""
        if not self.is_open:
            return 0.0
        return max(0.0, self._opened_at + self.breaker.reset_timeout - time.monotonic())

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        probe = self._admit()
        try:
            yield
        except BaseException as exc:
            self._record(exc if self._outage(exc) else None)
            raise
        else:
            self._record(None)
        finally:
            if probe:
                with self._lock:
                    self._probing = False

    def _admit(self) -> bool:
        with self._lock:
            if not self.is_open:
                return False
            wait = self.retry_in()
            if wait > 0 or self._probing:
                raise CircuitOpen(
                    retry_after=max(1.0, math.ceil(wait)),
                    failures=self.breaker.fail_max,
                    last=self._last,
                )
            self._probing = True
            return True

    def _record(self, failure: BaseException | None) -> None:
        if failure is not None:
            self._last = str(failure) or type(failure).__name__

        def outcome() -> None:
            if failure is not None:
                raise _Failed

        # Refused (CircuitBreakerError) when the circuit opened while this call was on
        # its way: the outcome of a call let through before is not a probe's.
        with contextlib.suppress(_Failed, pybreaker.CircuitBreakerError):
            self.breaker.call(outcome)


class _Failed(Exception):
    """The guarded call failed (its own exception is the caller's)."""


class _OpenedAt(pybreaker.CircuitBreakerListener):
    def __init__(self, circuit: EdgeCircuit) -> None:
        self.circuit = circuit

    def state_change(
        self,
        cb: pybreaker.CircuitBreaker,
        old_state: pybreaker.CircuitBreakerState | None,
        new_state: pybreaker.CircuitBreakerState,
    ) -> None:
        if new_state.name == pybreaker.STATE_OPEN:
            self.circuit._opened_at = time.monotonic()
