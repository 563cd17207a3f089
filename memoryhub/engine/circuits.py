"""Circuit breakers around the edges we do not own (the broker, the shared cache): a
listener that says in the log when one stops answering and when it answers again."""

import logging

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
