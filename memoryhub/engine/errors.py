"""One error family for the whole application.

Services raise these; the API root maps them to JSON once, and dashboard views show
their message. Each carries the HTTP status it stands for.
"""

from typing import Any


class ApplicationError(Exception):
    status_code = 400

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class InvalidInput(ApplicationError):
    status_code = 400


class NotFound(ApplicationError):
    status_code = 404


class Forbidden(ApplicationError):
    status_code = 403


class Conflict(ApplicationError):
    status_code = 409


class PreconditionFailed(ApplicationError):
    """The row changed since the caller read it (an ``If-Match`` that no longer holds)."""

    status_code = 412


class TooLarge(ApplicationError):
    """The request carries more than the server takes at once."""

    status_code = 413
