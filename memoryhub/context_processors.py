from django.http import HttpRequest


def nav(request: HttpRequest) -> dict[str, str]:
    """The first path segment, so the navigation can mark the current section."""
    path = request.path.strip("/")
    if path.startswith("memory/settings"):
        return {"nav_section": "settings"}
    return {"nav_section": path.split("/", 1)[0]}
