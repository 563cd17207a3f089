"""Logging filters named in settings.LOGGING."""

import logging


class ClientErrorsOnOneLine(logging.Filter):
    """A refused request (4xx) is the client's doing, not a fault of the server, yet
    Django logs it with the exception's traceback. Keep one line ending with the reason."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if record.exc_info and status is not None and status < 500:
            message = record.getMessage()
            reason = str(record.exc_info[1] or "")
            if reason:
                message = f"{message} ({reason.encode('unicode_escape').decode('ascii')})"
            record.msg, record.args = message, ()
            record.exc_info = record.exc_text = None
        return True
