"""Where clients reach this server, as the browser that asks reached it."""

from django.conf import settings
from django.http import HttpRequest


def server_url(request: HttpRequest) -> str:
    """The web server's base URL, without a trailing slash."""
    return request.build_absolute_uri("/")[:-1]


def chat_base_url(request: HttpRequest) -> str:
    """The base URL an OpenAI client is given: this host on the chat endpoint's port, or,
    behind a TLS proxy (which routes ``/v1/`` to that port), this site's ``/v1``."""
    if settings.MEMORYHUB_BEHIND_TLS_PROXY:
        return request.build_absolute_uri("/v1")
    host = request.get_host()
    name = host if host.endswith("]") else host.rsplit(":", 1)[0]  # IPv6 keeps its colons
    return f"{request.scheme}://{name}:{settings.MEMORYHUB_CHAT_PORT}/v1"
