"""Error pages answer inside the dashboard layout and say why; a refused request logs one
line, not a traceback."""

import io
import logging

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def page_of(response) -> str:
    return response.content.decode()


def test_a_refused_page_says_why_inside_the_layout(owner_client):
    response = owner_client.get("/memory/settings/")
    assert response.status_code == 403
    html = page_of(response)
    assert "Only staff can change the memory settings." in html
    assert '<nav class="nav"' in html and "css/app.css" in html
    assert "<title>Not allowed · MemoryHub</title>" in html


def test_htmx_gets_only_the_card_of_a_refusal(owner_client):
    response = owner_client.post("/memory/embeddings/backfill/", headers={"HX-Request": "true"})
    assert response.status_code == 403
    html = page_of(response).strip()
    assert html.startswith('<section class="card error-page" role="alert">')
    assert "Only staff can start the backfill." in html


def test_a_missing_page_names_what_is_missing(owner_client):
    response = owner_client.get("/teams/999999/")
    assert response.status_code == 404
    assert "No such team." in page_of(response)
    assert '<nav class="nav"' in page_of(response)

    response = owner_client.get("/no-such-place/")
    assert response.status_code == 404
    assert "There is no page at /no-such-place/." in page_of(response)


def test_anonymous_visitors_get_a_login_link_on_error_pages(client):
    html = page_of(client.get("/no-such-place/"))
    assert 'href="/login/"' in html
    assert '<nav class="nav"' not in html


def test_an_unreadable_request_is_a_styled_400(owner_client, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    response = owner_client.post("/teams/new/", {f"field{i}": "x" for i in range(20)})
    assert response.status_code == 400
    html = page_of(response)
    assert "The request could not be read: it was malformed or too large." in html
    assert '<nav class="nav"' in html


def test_an_expired_form_says_to_reload(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post("/teams/new/", {"name": "Research"})
    assert response.status_code == 403
    assert "reload the page and send it again" in page_of(response)


def test_a_server_error_is_a_styled_500(owner, monkeypatch):
    def fail(**kwargs: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr("memoryhub.views.memberships_of", fail)
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    response = client.get("/")
    assert response.status_code == 500
    html = page_of(response)
    assert "Something went wrong" in html and "css/app.css" in html
    assert "the database went away" not in html


@pytest.fixture
def server_log():
    """What the configured stdout handler writes, captured."""
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "stdout")
    captured = io.StringIO()
    previous = handler.setStream(captured)
    yield captured
    handler.setStream(previous)


def test_a_refusal_logs_one_line_with_the_reason(owner_client, server_log):
    assert owner_client.get("/memory/settings/").status_code == 403
    lines = server_log.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert "Forbidden (Permission denied): /memory/settings/" in lines[0]
    assert "(Only staff can change the memory settings.)" in lines[0]


def test_a_server_error_still_logs_its_traceback(owner, monkeypatch, server_log):
    def fail(**kwargs: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr("memoryhub.views.memberships_of", fail)
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    assert client.get("/").status_code == 500
    assert "Traceback" in server_log.getvalue()
