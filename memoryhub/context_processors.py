from typing import Any

from django.http import HttpRequest

from memoryhub.engine.config import SWITCHABLE, feature_enabled, memory_config_get


def nav(request: HttpRequest) -> dict[str, Any]:
    """The first path segment, so the navigation can mark the current section, and the
    features switched off, whose links it leaves out."""
    path = request.path.strip("/")
    section = "settings" if path.startswith("memory/settings") else path.split("/", 1)[0]
    config = memory_config_get()
    off = {app for app in SWITCHABLE if not feature_enabled(app, config=config)}
    return {"nav_section": section, "features_off": off}
