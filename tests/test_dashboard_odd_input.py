"""Every dashboard page and form, sent odd values in every parameter it may read,
answers below 500: a message or a 4xx, never a server error."""

import pytest

from facts.services.create import fact_create
from teams.services import Actor, team_create
from wiki.services import wiki_page_upsert

# Unicode digits int() refuses, a number no column holds, a word, a NUL, a long text, a
# text past SQLite's LIKE pattern limit, full-text syntax, JSON holding a lone surrogate.
ODD = [
    "²", "1" + "0" * 30, "abc", "\x00", "x" * 3000, "t" * 50_001, 'NEAR("a" "b") OR ^*',
    '{"\\ud800": 1}', '["\\udfff"]',
]  # fmt: skip
QUERY = [
    "q", "page", "team", "layer", "category", "visibility", "status", "sort", "project",
    "kind", "mode", "limit", "symbol", "module", "new", "old", "offset", "tag", "flagged",
    "topic", "source", "created_from", "created_to",
]  # fmt: skip
FORM = [
    "content", "category", "importance", "confidence", "sentiment", "visibility", "team",
    "project", "status", "tags", "query", "char_budget", "max_items", "title", "kind",
    "name", "path", "exclude", "username", "role", "active_team", "default_visibility",
    "scopes", "fleet", "rrf_k", "recall_max_items", "recall_char_budget",
    "max_active_facts", "dedupe_similarity", "weight_importance", "embeddings_enabled",
    "topic", "ids", "action", "review",
    "embeddings_provider", "embeddings_url", "memory_enabled",
]  # fmt: skip


@pytest.fixture
def pages(staff, settings, tmp_path) -> dict[str, list[str]]:
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    actor = Actor(user=staff)
    # In a team: a lookup by team name only runs for someone with teams.
    team_create(actor=actor, name="Platform")
    fact = fact_create(actor=actor, data={"content": "Staging runs PostgreSQL 16"}).fact
    page = wiki_page_upsert(actor=actor, title="Runbook", content="# Steps").page
    return {
        "get": [
            "/", "/memory/", "/memory/forget/", "/memory/reviews/", "/memory/chart/",
            "/memory/embeddings/",
            "/memory/settings/",
            f"/memory/{fact.pk}/", f"/memory/{fact.pk}/edit/", f"/memory/{fact.pk}/tags/",
            "/wiki/", "/wiki/new/",
            "/wiki/review/", f"/wiki/{page.pk}/", f"/wiki/{page.pk}/history/",
            f"/wiki/{page.pk}/diff/", "/codegraph/", "/codegraph/search/",
            "/codegraph/callers/", "/codegraph/imports/", "/teams/", "/agents/", "/audit/",
            "/settings/",
        ],
        "post": [
            "/memory/recall/", "/memory/forget/", "/memory/reviews/", "/memory/settings/",
            f"/memory/{fact.pk}/edit/", "/memory/add/", "/memory/bulk/", "/memory/undo/1/",
            f"/memory/{fact.pk}/tags/",
            "/wiki/new/",
            "/wiki/preview/", f"/wiki/{page.pk}/edit/", "/codegraph/add/", "/teams/new/",
            "/agents/", "/settings/",
        ],
    }  # fmt: skip


@pytest.mark.django_db
def test_odd_values_never_get_a_server_error(staff_client, pages):
    errors = []
    for url in pages["get"]:
        for name in QUERY:
            for value in ODD:
                status = staff_client.get(url, {name: value}).status_code
                if status >= 500:
                    errors.append(f"GET {url}?{name}={value[:12]!r}: {status}")
    for url in pages["post"]:
        for name in FORM:
            for value in ODD:
                data = {"content": "Deploys on Tuesday", "title": "T", "name": "n", name: value}
                status = staff_client.post(url, data).status_code
                if status >= 500:
                    errors.append(f"POST {url} {name}={value[:12]!r}: {status}")
    assert not errors, "\n".join(errors[:20])
