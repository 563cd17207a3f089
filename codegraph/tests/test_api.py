"""The CodeGraph API, the dashboard pages and the access rule on both."""

import pytest
from django.urls import reverse

from codegraph.models import CodeProject

from . import test_scan as scan_helpers

pytestmark = pytest.mark.django_db
API = "/api/codegraph"


@pytest.fixture
def tree(tmp_path, settings):
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    root = tmp_path / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    return root


def post_scan(client, django_capture_on_commit_callbacks, **body):
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(f"{API}/scan", body, content_type="application/json")


@pytest.fixture
def scanned(owner_client, tree, team, django_capture_on_commit_callbacks) -> CodeProject:
    response = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="shop",
        path=str(tree),
        visibility="team",
    )
    assert response.status_code == 202, response.content
    return CodeProject.objects.get(pk=response.json()["id"])


def test_scan_queues_and_runs_the_scan(scanned):
    scanned.refresh_from_db()
    assert scanned.state == "done" and scanned.symbol_count > 0


@pytest.mark.parametrize(
    "path, message",
    [
        ("missing", "does not exist"),
        ("src/shop/auth.py", "is a file, not a folder"),
    ],
)
def test_scan_refuses_bad_paths_with_a_message(
    owner_client, tree, tmp_path, path, message, django_capture_on_commit_callbacks
):
    response = post_scan(
        owner_client, django_capture_on_commit_callbacks, name="x", path=str(tmp_path / path)
    )
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not CodeProject.objects.exists()


def test_scan_refuses_a_folder_outside_the_allowed_roots(
    owner_client, tree, django_capture_on_commit_callbacks
):
    response = post_scan(owner_client, django_capture_on_commit_callbacks, name="x", path="/etc")
    assert response.status_code == 400
    assert "CODEGRAPH_ALLOWED_ROOTS" in response.json()["detail"]
    assert not CodeProject.objects.exists()


def test_query_callers_imports_and_stats(owner_client, scanned):
    hits = owner_client.get(f"{API}/query", {"q": "relogin", "mode": "exact"}).json()
    assert hits["items"][0]["text"] == "function relogin — shop/auth.py:4"
    callers = owner_client.get(f"{API}/callers", {"symbol": "shop.auth.login"}).json()
    assert callers["count"] == 6 and callers["targets"] == ["shop.auth.login"]
    imports = owner_client.get(f"{API}/imports", {"file": "shop/auth.py"}).json()
    assert {i["file"] for i in imports["importers"]} == {"shop/views.py", "shop/mixed.py"}
    stats = owner_client.get(f"{API}/stats", {"project": "shop"}).json()
    assert stats[0]["languages"] == [{"language": "python", "files": 5, "symbols": 8}]
    listed = owner_client.get(f"{API}/projects").json()
    assert [p["name"] for p in listed] == ["shop"] and listed[0]["progress"] == 100


def test_bad_query_input_is_a_400(owner_client, scanned):
    assert owner_client.get(f"{API}/query", {"q": " "}).status_code == 400
    assert owner_client.get(f"{API}/query", {"q": "x", "mode": "odd"}).status_code == 400
    assert owner_client.get(f"{API}/imports", {"file": "nope.py"}).status_code == 404


def test_an_agent_token_can_query(agent_client, owner, scanned):
    client = agent_client(owner, scopes=("read",))
    assert client.get(f"{API}/query", {"q": "login"}).json()["count"] >= 1


def test_a_teammate_sees_team_projects_but_cannot_delete_them(teammate_client, scanned):
    assert [p["name"] for p in teammate_client.get(f"{API}/projects").json()] == ["shop"]
    assert teammate_client.get(f"{API}/query", {"q": "relogin"}).json()["count"] == 1
    assert teammate_client.delete(f"{API}/projects/{scanned.pk}").status_code == 403


def test_it_refuses_outsider_on_every_endpoint(outsider_client, scanned):
    pid = scanned.pk
    assert outsider_client.get(f"{API}/projects").json() == []
    assert outsider_client.get(f"{API}/projects/{pid}").status_code == 404
    assert outsider_client.post(f"{API}/projects/{pid}/scan").status_code == 404
    assert outsider_client.delete(f"{API}/projects/{pid}").status_code == 404
    assert outsider_client.get(f"{API}/query", {"q": "login"}).json()["count"] == 0
    assert outsider_client.get(f"{API}/query", {"q": "login", "project": pid}).status_code == 404
    assert outsider_client.get(f"{API}/callers", {"symbol": "shop.auth.login"}).json()["count"] == 0
    assert outsider_client.get(f"{API}/imports", {"file": "shop/auth.py"}).status_code == 404
    assert outsider_client.get(f"{API}/stats").json() == []
    assert outsider_client.get(f"{API}/stats", {"project": "shop"}).status_code == 404
    assert CodeProject.objects.filter(pk=pid).exists()


def test_anonymous_requests_are_refused(client, scanned):
    assert client.get(f"{API}/projects").status_code == 401


def test_the_owner_deletes_a_project_and_its_index(owner_client, scanned):
    assert owner_client.delete(f"{API}/projects/{scanned.pk}").status_code == 204
    assert not CodeProject.objects.exists()


# --- Dashboard --------------------------------------------------------------------------------


def test_the_page_lists_projects_with_language_counts(owner_client, scanned):
    page = owner_client.get(reverse("codegraph")).content.decode()
    assert "shop" in page and "python" in page and "5 files, 8 symbols" in page


def test_add_a_folder_from_the_page(owner_client, tree, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(reverse("codegraph-add"), {"name": "web", "path": str(tree)})
    assert response.status_code == 302
    assert CodeProject.objects.get(name="web").state == "done"


def test_add_a_bad_folder_shows_why(owner_client, tree):
    response = owner_client.post(reverse("codegraph-add"), {"name": "web", "path": "/etc"})
    assert response.status_code == 400
    assert "outside the folders" in response.content.decode()


def test_search_callers_and_imports_partials(owner_client, scanned):
    htmx = {"HTTP_HX_REQUEST": "true"}
    found = owner_client.get(reverse("codegraph-search"), {"q": "relogin"}, **htmx)
    assert "shop/auth.py:4" in found.content.decode()
    assert "<h1>" not in found.content.decode()
    calls = owner_client.get(reverse("codegraph-callers"), {"symbol": "shop.auth.login"}, **htmx)
    assert "shop/views.py:7" in calls.content.decode()
    imports = owner_client.get(reverse("codegraph-imports"), {"file": "shop/views.py"})
    assert "shop/auth.py" in imports.content.decode() and "<h1>" in imports.content.decode()


def test_scan_button_returns_the_progress(
    owner_client, scanned, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(
            reverse("codegraph-scan", args=[scanned.pk]), HTTP_HX_REQUEST="true"
        )
    assert response.status_code == 200
    assert "Queued" in response.content.decode() or "Done" in response.content.decode()
    progress = owner_client.get(reverse("codegraph-progress", args=[scanned.pk])).content.decode()
    assert "Done" in progress and "every 1s" not in progress


def test_pages_refuse_outsider(outsider_client, scanned):
    pid = scanned.pk
    assert "shop" not in outsider_client.get(reverse("codegraph")).content.decode()
    assert outsider_client.get(reverse("codegraph-progress", args=[pid])).status_code == 404
    assert outsider_client.post(reverse("codegraph-scan", args=[pid])).status_code == 404
    assert outsider_client.post(reverse("codegraph-delete", args=[pid])).status_code == 404
    found = outsider_client.get(reverse("codegraph-search"), {"q": "relogin"}).content.decode()
    assert "shop/auth.py" not in found
    assert (
        outsider_client.get(reverse("codegraph-imports"), {"file": "shop/auth.py"}).status_code
        == 404
    )
    assert CodeProject.objects.filter(pk=pid).exists()


def test_the_project_list_takes_a_fixed_number_of_queries(
    owner_client, scanned, tree, django_assert_max_num_queries, django_capture_on_commit_callbacks
):
    for name in ("two", "three"):
        post_scan(owner_client, django_capture_on_commit_callbacks, name=name, path=str(tree))
    with django_assert_max_num_queries(4):
        assert len(owner_client.get(f"{API}/projects").json()) == 3
    with django_assert_max_num_queries(6):
        owner_client.get(reverse("codegraph"))


def test_a_symbols_callers_link_names_it_fully(owner_client, scanned):
    found = owner_client.get(
        reverse("codegraph-search"), {"q": "login", "mode": "exact"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "symbol=shop.auth.login&amp;" in found and "symbol=shop.unrelated.login&amp;" in found


def test_scan_skips_the_folders_named_in_exclude(
    owner_client, tree, django_capture_on_commit_callbacks
):
    response = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="x",
        path=str(tree.parent),
        exclude=["src"],
    )
    assert response.status_code == 202
    assert CodeProject.objects.get().file_count == 0
    bad = post_scan(
        owner_client, django_capture_on_commit_callbacks, name="y", path=str(tree), exclude=["a/b"]
    )
    assert bad.status_code == 400 and "by name" in bad.json()["detail"]


def test_the_last_progress_swap_brings_languages_and_the_banner_up_to_date(
    owner_client, owner, tree
):
    from codegraph import services
    from teams.services import Actor

    project = services.code_project_register(actor=Actor(user=owner), name="queued", path=str(tree))
    page = owner_client.get(reverse("codegraph")).content.decode()
    assert "Scanning queued…" in page and "not scanned yet" in page
    url = reverse("codegraph-progress", args=[project.pk])
    polling = owner_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "every 1s" in polling and "hx-swap-oob" not in polling

    services.code_project_scan(project_id=project.pk)  # the worker finishes it
    final = owner_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "every 1s" not in final
    languages = final[final.index(f'<div id="languages-{project.pk}" hx-swap-oob="true">') :]
    assert "5 files, 8 symbols" in languages.split('id="scan-banner"')[0]
    banner = final[final.index('<div id="scan-banner"') :]
    assert 'hx-swap-oob="true"' in banner.split(">")[0]
    assert "queued is scanned: 5 files, 8 symbols." in banner
    assert "Scanning" not in banner


def test_the_banner_keeps_naming_scans_still_running(owner_client, owner, tree):
    from codegraph import services
    from teams.services import Actor

    actor = Actor(user=owner)
    first = services.code_project_register(actor=actor, name="first", path=str(tree))
    services.code_project_register(actor=actor, name="second", path=str(tree))
    services.code_project_scan(project_id=first.pk)
    final = owner_client.get(
        reverse("codegraph-progress", args=[first.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    banner = final[final.index('<div id="scan-banner"') :]
    assert "first is scanned" in banner and "Scanning second…" in banner


def test_adding_a_folder_says_so_without_a_message_that_goes_stale(
    owner_client, tree, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(reverse("codegraph-add"), {"name": "web", "path": str(tree)})
    html = owner_client.get(response.url).content.decode()  # the scan is over by now
    assert "Added web." in html and "Scanning web" not in html
