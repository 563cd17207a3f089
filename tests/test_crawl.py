"""Every dashboard page, as each kind of person meets it: the URL conf is walked, each
route opened with real ids by staff, a team member and an outsider. No page answers
500, shows template source or a Python repr; in a real browser, none logs an error."""

import html
import re
from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db(transaction=True)

# Not dashboard pages: the API and its docs, the admin, MCP, and what only redirects.
OUTSIDE = ("api/", "admin/", "mcp", "favicon.ico", "logout/")
SOURCE = ("{#", "#}", "{%", "%}", "{{", "}}")
# What a Python object printed into a page looks like: a dict or list of strings, a
# model or queryset repr, an object's default repr.
REPR = re.compile(
    r"\{'[^'<>]{1,80}': |\['[^'<>]{1,80}', '|<QuerySet |<[A-Z]\w+: |object at 0x[0-9a-f]+"
)
PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def routes() -> Iterator[str]:
    def walk(patterns, prefix: str) -> Iterator[str]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern)

    for route in walk(get_resolver().url_patterns, ""):
        if not route.startswith(OUTSIDE):
            yield route


@pytest.fixture
def world(staff, team, owner, outsider, settings, tmp_path) -> dict[str, str]:
    """One of every row a page may show, and the id each route parameter takes."""
    from django.utils import timezone

    from codegraph import services as codegraph_services
    from codegraph.tests import test_scan as scan_helpers
    from concepts.models import Alias, Entity
    from concepts.services import concept_alias_create, concept_graph_build_request
    from facts.models import FactUndo, RecallDay
    from facts.services.create import fact_create
    from facts.services.curation import facts_bulk_change
    from memoryhub.engine.models import Job
    from teams.models import Membership, Role
    from teams.services import Actor, agent_token_create
    from wiki.services import wiki_page_upsert

    Membership.objects.create(user=staff, team=team, role=Role.ADMIN)
    actor = Actor(user=owner)
    fact = fact_create(
        actor=actor,
        data={"content": "Marta Kowalski leads the Atlas project", "visibility": "team"},
    ).fact
    doomed = fact_create(actor=actor, data={"content": "A fact to delete and undo"}).fact
    facts_bulk_change(actor=actor, fact_ids=[doomed.pk], action="delete")
    wiki = wiki_page_upsert(actor=actor, title="Runbook", content="# Steps\n\n1. Page on-call")
    wiki_page_upsert(actor=actor, title="Runbook", content="# Steps\n\n1. Page the lead")
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    project = codegraph_services.code_project_register(actor=actor, name="shop", path=str(root))
    codegraph_services.code_project_scan(project_id=project.pk)
    job = concept_graph_build_request(actor=actor)
    concept_alias_create(actor=actor, alias="ATL", target="Atlas")
    token, _ = agent_token_create(actor=actor, name="ci-bot", scopes=["read", "write"])
    # Home's charts and lists: an agent's write, recalls served, a job that failed.
    fact_create(actor=Actor(user=owner, token=token), data={"content": "Atlas ships in May"})
    RecallDay.objects.create(user=owner, day=timezone.localdate(), count=3)
    Job.objects.create(
        owner=owner, kind="import", state="failed", error="Not JSON.", finished_at=timezone.now()
    )
    return {
        "team_id": str(team.pk),
        "membership_id": str(Membership.objects.get(user=owner, team=team).pk),
        "user_id": str(owner.pk),
        "token_id": str(token.pk),
        "job_id": str(job.pk),
        "undo_id": str(FactUndo.objects.get().pk),
        "fact_id": str(fact.pk),
        "project_id": str(project.pk),
        "page_id": str(wiki.page.pk),
        "number": "1",
        "ref": Entity.objects.exclude(ref="").values_list("ref", flat=True).first() or "x",
        "alias_id": str(Alias.objects.get().pk),
        "uidb64": "MQ",
        "token": "set-password",
        "rest": "models",
    }


def urls(world: dict[str, str]) -> list[str]:
    return ["/" + PARAM.sub(lambda m: world[m.group(2)], route) for route in routes()]


def read(client, url: str) -> tuple[int, str, str]:
    response = client.get(url, follow=True)
    kind = response.get("Content-Type", "")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, kind, body.decode(errors="replace")


@pytest.mark.parametrize("who", ["staff", "owner", "teammate", "outsider"])
def test_every_page_opens_for_everyone_without_an_error_or_source_text(who, world, request, client):
    client.force_login(request.getfixturevalue(who))
    seen, broken = 0, []
    for url in urls(world):
        status, kind, body = read(client, url)
        if status >= 500:
            broken.append(f"{url}: {status}")
            continue
        if "text/html" not in kind:
            continue
        seen += 1
        marks = [mark for mark in SOURCE if mark in body]
        reprs = REPR.findall(html.unescape(body))  # as the person reads it
        if marks or reprs:
            broken.append(f"{url}: {marks} {reprs[:3]}")
    assert seen >= 20 and broken == [], broken


def test_no_page_logs_an_error_in_the_browser(page, live_server, login, staff, world, client):
    client.force_login(staff)
    pages = [
        url for url in urls(world) if read(client, url)[:2] == (200, "text/html; charset=utf-8")
    ]
    errors: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    login(staff)
    opened = 0
    for url in pages:
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state("load")
        opened += 1
    assert opened >= 20 and errors == [], errors
