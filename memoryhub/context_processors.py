from django.http import HttpRequest


def nav(request: HttpRequest) -> dict[str, str]:
    """The first path segment, so the navigation can mark the current section."""
    return {"nav_section": request.path.strip("/").split("/", 1)[0]}
