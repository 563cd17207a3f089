"""Every dashboard page and form, sent odd values in every parameter it may read,
answers below 500: a message or a 4xx, never a server error.

A page is sent odd values only in the parameters it reads: the test records which names
the view and its templates look up (or, where they walk every parameter, that they read
them all), from a plain request and from every odd one, until no new name turns up. A
parameter nothing reads cannot change the answer, and sending odd values to it as well
would multiply the requests by the length of the lists below."""

import pytest
from django.core.handlers.base import BaseHandler
from django.http import QueryDict

from facts.services.create import fact_create
from teams.services import Actor, team_create
from wiki.services import wiki_page_upsert

# Unicode digits int() refuses, a number no column holds, a word, a NUL, a long text, a
# text past SQLite's LIKE pattern limit, full-text syntax, JSON holding a lone surrogate.
ODD = [
    "²", "1" + "0" * 30, "abc", "\x00", "x" * 3000, "t" * 50_001, 'NEAR("a" "b") OR ^*',
    '{"\\ud800": 1}', '["\\udfff"]',
]  # fmt: skip
UNREAD = "unread-by-any-page"
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


class ReadNames:
    """The query or form parameter names a view reads while it answers (``every`` once
    it walks all of them: a link that repeats the query, a check of every value). Asking
    whether there are any parameters (``request.POST or None``) reads none: every
    request the test sends has some."""

    KEYED = ("__getitem__", "get", "getlist", "__contains__")
    WHOLE = (
        "lists", "items", "keys", "values", "__iter__", "dict", "copy",
        "__copy__", "__deepcopy__", "urlencode",
    )  # fmt: skip

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.every = False
        self.viewing = False

    def record(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Record from now to the end of the test."""
        for method in self.KEYED:
            monkeypatch.setattr(QueryDict, method, self._keyed(getattr(QueryDict, method)))
        for method in self.WHOLE:
            monkeypatch.setattr(QueryDict, method, self._whole(getattr(QueryDict, method)))
        # Only the view's own reads (and its templates'): the middleware that checks
        # every parameter of every request does so whatever the page.
        monkeypatch.setattr(BaseHandler, "_get_response", self._view(BaseHandler._get_response))

    def _keyed(self, method):
        def read(query, key, *args, **kwargs):
            if self.viewing:
                self.names.add(key)
            return method(query, key, *args, **kwargs)

        return read

    def _whole(self, method):
        def read(query, *args, **kwargs):
            if self.viewing:
                self.every = True
            return method(query, *args, **kwargs)

        return read

    def _view(self, method):
        def respond(handler, request):
            self.viewing = True
            try:
                return method(handler, request)
            finally:
                self.viewing = False

        return respond

    def wants(self, name: str) -> bool:
        return self.every or name in self.names


def odd_requests(send, names: list[str], reads: ReadNames) -> tuple[list[str], set[str]]:
    """Send each odd value in each of ``names`` that the page reads (a plain request
    first, with a parameter no page reads); returns what answered 500 or more, and the
    names sent odd values."""
    reads.names, reads.every = set(), False
    errors = []
    status = send(UNREAD, "1")
    if status >= 500:
        errors.append(f"plain request: {status}")
    sent: set[str] = set()
    while wanted := [name for name in names if name not in sent and reads.wants(name)]:
        for name in wanted:
            sent.add(name)
            for value in ODD:
                status = send(name, value)
                if status >= 500:
                    errors.append(f"{name}={value[:12]!r}: {status}")
    return errors, sent


@pytest.mark.django_db
def test_odd_values_never_get_a_server_error(staff_client, pages, monkeypatch):
    errors = []
    fuzzed = {}
    reads = ReadNames()
    reads.record(monkeypatch)
    for url in pages["get"]:

        def get(name, value, url=url):
            return staff_client.get(url, {name: value}).status_code

        found, fuzzed[url] = odd_requests(get, QUERY, reads)
        errors += [f"GET {url} {e}" for e in found]
    for url in pages["post"]:

        def post(name, value, url=url):
            data = {"content": "Deploys on Tuesday", "title": "T", "name": "n", name: value}
            return staff_client.post(url, data).status_code

        found, fuzzed[f"POST {url}"] = odd_requests(post, FORM, reads)
        errors += [f"POST {url} {e}" for e in found]
    assert not errors, "\n".join(errors[:20])
    # The recording sees what a page reads: the fact list its search box and filters,
    # the settings form each of its fields.
    assert {"q", "category", "sort"} <= fuzzed["/memory/"]
    assert {"rrf_k", "max_active_facts"} <= fuzzed["POST /memory/settings/"]
