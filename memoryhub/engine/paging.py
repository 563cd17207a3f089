"""Limit and offset of the JSON API's list endpoints, checked in one place."""

from django.http import HttpRequest

from memoryhub.engine.errors import InvalidInput

# Past any real table, and a number every database takes (a bigger one fails in SQL).
MAX_OFFSET = 1_000_000_000


def page_window_check(*, limit: int, offset: int, max_limit: int = 200) -> None:
    """Refuse a page size or start the list endpoints do not serve (a 400 that says so)."""
    if not 1 <= limit <= max_limit:
        raise InvalidInput(f"limit must be between 1 and {max_limit}.")
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET}.")


def next_page_url(request: HttpRequest, *, limit: int, offset: int, count: int) -> str | None:
    """The URL of the page after this one, with the same filters; None on the last."""
    if offset + limit >= count:
        return None
    params = request.GET.copy()
    params["offset"], params["limit"] = str(offset + limit), str(limit)
    return f"{request.path}?{params.urlencode()}"
