"""One place decides whether a dashboard request gets a fragment or the whole page.

HTMX asks for a fragment to swap into the page it already shows; it asks for the whole
page when it restores history it has no snapshot of (``HX-History-Restore-Request``,
sent together with ``HX-Request``), and a boosted link or form stands for a full
navigation. Every view that answers HTMX renders through ``htmx_render``, so both
answers of one URL say that they differ by these headers (``Vary``) and a cache never
serves the fragment as the page."""

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

VARY_HEADERS = ("HX-Request", "HX-History-Restore-Request")


def htmx_partial(request: HttpRequest) -> bool:
    """True when the request wants a fragment rather than the whole page."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request and not htmx.boosted


def htmx_vary(response: HttpResponse) -> HttpResponse:
    """Mark ``response`` as one of the two answers (fragment or page) of its URL."""
    patch_vary_headers(response, VARY_HEADERS)
    return response


def htmx_render(
    request: HttpRequest,
    template: str,
    context: Mapping[str, Any] | None = None,
    *,
    partial: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render the ``partial`` of ``template`` (``template#partial``) for an HTMX request,
    else the whole ``template``. A rendered partial sees ``htmx_partial`` true in its
    context, so it can add out-of-band updates that the whole page does not need."""
    context = dict(context or {})
    if partial and htmx_partial(request):
        template = f"{template}#{partial}"
        context["htmx_partial"] = True
    return htmx_vary(render(request, template, context, status=status))
