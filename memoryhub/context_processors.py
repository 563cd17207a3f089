from typing import Any

from django.http import HttpRequest

from memoryhub.engine.config import features_off


def nav(request: HttpRequest) -> dict[str, Any]:
    """The first path segment, so the navigation can mark the current section, and the
    features switched off, whose links it leaves out."""
    path = request.path.strip("/")
    section = "settings" if path.startswith("memory/settings") else path.split("/", 1)[0]
    return {"nav_section": section, "features_off": features_off()}
