"""Refusing, before any view runs, query strings and paths holding text no engine stores
(see ``memoryhub.engine.unicode``): a NUL character (``%00``) would reach a PostgreSQL query as
an error, so a request that carries one gets a 400 that says so, on either engine. JSON
bodies are checked by the API's parser and the tools; form fields by Django's forms,
which refuse NUL characters themselves."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.unicode import UNSTORABLE, UNSTORABLE_TEXT


def _unstorable_part(request: HttpRequest) -> str | None:
    """Which part of the request's address holds unstorable text, or None."""
    if UNSTORABLE.search(request.path):
        return "The address"
    for key, items in request.GET.lists():
        if UNSTORABLE.search(key) or any(UNSTORABLE.search(item) for item in items):
            return f"The query parameter {UNSTORABLE.sub('?', key)[:60]!r}"
    return None


class UnstorableTextMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = _unstorable_part(request)
        if where is None:
            return self.get_response(request)
        message = f"{where} {UNSTORABLE_TEXT}"
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": message}, status=400)
        from memoryhub.views import bad_request

        return bad_request(request, InvalidInput(message))
