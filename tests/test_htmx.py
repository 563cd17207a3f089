"""One helper decides whether a dashboard request gets a fragment or the whole page."""

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from django_htmx.middleware import HtmxMiddleware

from memoryhub.engine.htmx import htmx_partial, htmx_render

HTMX = {"HX-Request": "true"}
RESTORE = {"HX-Request": "true", "HX-History-Restore-Request": "true"}
BOOSTED = {"HX-Request": "true", "HX-Boosted": "true"}


def request_with(headers: dict[str, str]):
    request = RequestFactory().get("/somewhere/", headers=headers)
    HtmxMiddleware(lambda r: HttpResponse())(request)
    return request


def vary_of(response) -> set[str]:
    return {part.strip() for part in response.get("Vary", "").split(",") if part.strip()}


def test_an_htmx_request_wants_a_fragment():
    assert htmx_partial(request_with(HTMX)) is True


def test_a_plain_request_a_history_restore_and_a_boosted_link_want_the_page():
    assert htmx_partial(request_with({})) is False
    assert htmx_partial(request_with(RESTORE)) is False
    assert htmx_partial(request_with(BOOSTED)) is False


def test_a_request_the_middleware_never_saw_wants_the_page():
    assert htmx_partial(RequestFactory().get("/")) is False


@pytest.mark.django_db
def test_the_fragment_and_the_page_both_say_they_vary_on_the_htmx_headers(owner):
    for headers, partial in ((HTMX, True), ({}, False), (RESTORE, False)):
        request = request_with(headers)
        request.user = owner
        response = htmx_render(
            request,
            "error.html",
            {"status": 404, "title": "T", "reason": "R"},
            partial="error-card",
        )
        html = response.content.decode()
        assert ("<html" in html) is not partial, headers
        assert {"HX-Request", "HX-History-Restore-Request"} <= vary_of(response)


# --- Every app's views answer through it -------------------------------------------------

PAGES = [
    "/memory/",
    "/memory/?sort=importance",
    "/memory/recall/",
    "/memory/forget/?topic=deploys",
    "/memory/reviews/",
    "/wiki/",
    "/codegraph/search/?q=login",
    "/agents/",
    "/audit/",
]


@pytest.mark.django_db
@pytest.mark.parametrize("path", PAGES)
def test_each_dashboard_list_gives_a_fragment_to_htmx_and_the_page_to_a_history_restore(
    owner_client, path
):
    fragment = owner_client.get(path, headers=HTMX)
    assert fragment.status_code == 200
    assert "<html" not in fragment.content.decode()
    assert "HX-Request" in vary_of(fragment)

    restored = owner_client.get(path, headers=RESTORE)
    assert restored.status_code == 200
    assert '<nav class="nav"' in restored.content.decode()
    assert "HX-Request" in vary_of(restored)

    plain = owner_client.get(path)
    assert '<nav class="nav"' in plain.content.decode()
    assert "HX-Request" in vary_of(plain)


@pytest.mark.django_db
def test_a_history_restore_of_a_missing_page_gets_the_whole_error_page(owner_client):
    response = owner_client.get("/memory/999999/", headers=RESTORE)
    assert response.status_code == 404
    assert '<nav class="nav"' in response.content.decode()
    card = owner_client.get("/memory/999999/", headers=HTMX)
    assert card.content.decode().lstrip().startswith('<section class="card error-page"')
