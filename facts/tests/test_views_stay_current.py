"""The Memory manager stays true after an HTMX action: a delete redraws the list (its
count, its empty state) and the embedding card; a header sort moves the Sort control."""

import json
import re

import pytest

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def html_of(response) -> str:
    return response.content.decode()


def test_a_delete_tells_the_list_the_chart_and_the_embedding_card_to_redraw(
    owner_client, owner, remember
):
    fact = remember(owner, "Backups run nightly at 02:00")
    page = html_of(owner_client.get("/memory/"))
    assert re.search(
        r'id="fact-results" hx-get="/memory/" hx-trigger="[^"]*facts-removed from:body', page
    )
    assert re.search(r'id="embedding-progress"[^>]*hx-trigger="[^"]*facts-changed from:body"', page)
    assert 'hx-trigger="facts-changed from:body"' in page  # the chart

    response = owner_client.post(f"/memory/{fact.pk}/delete/", headers=HTMX)
    events = json.loads(response.headers["HX-Trigger"])
    assert {"facts-changed", "facts-removed"} <= set(events)


def test_the_list_redraws_itself_with_the_filters_it_shows(owner_client, owner, remember):
    remember(owner, "Backups run nightly at 02:00", category="pattern")
    remember(owner, "The wiki lives on host vega")
    html = html_of(owner_client.get("/memory/", {"category": "pattern", "page": "1"}, headers=HTMX))
    refresh = re.search(r'id="fact-results" hx-get="([^"]+)"', html).group(1)
    assert refresh.replace("&amp;", "&") == "/memory/?category=pattern&page=1"
    assert "1 fact." in html


def test_the_redrawn_list_counts_what_is_left_and_shows_the_empty_state(
    owner_client, owner, remember
):
    first = remember(owner, "Backups run nightly at 02:00")
    second = remember(owner, "The wiki lives on host vega")
    owner_client.post(f"/memory/{first.pk}/delete/", headers=HTMX)
    html = html_of(owner_client.get("/memory/", headers=HTMX))
    assert "1 fact." in html
    owner_client.post(f"/memory/{second.pk}/delete/", headers=HTMX)
    html = html_of(owner_client.get("/memory/", headers=HTMX))
    assert "0 facts." in html and "No facts yet" in html


def test_a_header_sort_brings_the_sort_control_along(owner_client, owner, remember):
    remember(owner, "Backups run nightly at 02:00")
    html = html_of(owner_client.get("/memory/", {"sort": "importance"}, headers=HTMX))
    oob = html[html.index('hx-swap-oob="innerHTML:#sort-control"') :]
    assert re.search(r'<option value="importance" selected>', oob)
    page = html_of(owner_client.get("/memory/", {"sort": "importance"}))
    assert 'id="sort-control"' in page and "hx-swap-oob" not in page
