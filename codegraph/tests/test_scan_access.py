"""Who may scan which folder: the allowed roots come first and answer alike for every
path outside them, and a folder already indexed for fewer people is refused to a scan
that would show it to more."""

import os

import pytest

from codegraph import services
from codegraph.models import CodeProject, ScanState

from . import test_scan as scan_helpers

pytestmark = pytest.mark.django_db
API = "/api/codegraph"


@pytest.fixture
def tree(tmp_path, settings):
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path / "allowed")]
    root = tmp_path / "allowed" / "src"
    scan_helpers.write_tree(root, scan_helpers.PKG)
    return root


def post_scan(client, django_capture_on_commit_callbacks, **body):
    with django_capture_on_commit_callbacks(execute=True):
        return client.post(f"{API}/scan", body, content_type="application/json")


# --- The allowed roots come first ---------------------------------------------------------


def test_every_path_outside_the_allowed_roots_gets_the_same_answer(
    owner_client, tree, tmp_path, django_capture_on_commit_callbacks
):
    (tmp_path / "secret.txt").write_text("not for scanning")
    (tmp_path / "secret-folder").mkdir()
    os.symlink(tmp_path / "secret-folder", tree / "link-out")
    paths = [
        "/etc/shadow",  # a file
        "/root/.ssh/id_rsa",  # probably missing
        "/etc",  # a folder
        "/no/such/place",
        str(tmp_path / "secret.txt"),
        str(tmp_path / "secret-folder"),
        str(tree / "link-out"),  # inside a root, but resolves outside it
        str(tree / ".." / ".." / "secret-folder"),
    ]
    answers = set()
    for path in paths:
        response = post_scan(
            owner_client, django_capture_on_commit_callbacks, name="probe", path=path
        )
        assert response.status_code == 400, path
        answers.add(response.json()["detail"].replace(path, "<path>"))
    assert len(answers) == 1, answers
    assert "outside the folders CodeGraph may read" in answers.pop()
    # A NUL character is refused as text no engine stores, inside a root or outside.
    for path in ("/tmp/\x00nul", str(tree / "shop\x00")):
        response = post_scan(
            owner_client, django_capture_on_commit_callbacks, name="probe", path=path
        )
        assert response.status_code == 400
        assert response.json()["detail"].startswith("path is not storable"), path
    assert not CodeProject.objects.exists()


def test_inside_a_root_a_missing_folder_or_a_file_is_named_as_such(
    owner_client, tree, django_capture_on_commit_callbacks
):
    missing = post_scan(
        owner_client, django_capture_on_commit_callbacks, name="x", path=str(tree / "gone")
    )
    assert missing.status_code == 400 and "does not exist" in missing.json()["detail"]
    a_file = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="x",
        path=str(tree / "shop" / "auth.py"),
    )
    assert a_file.status_code == 400 and "is a file" in a_file.json()["detail"]


# --- A private folder stays private -------------------------------------------------------


@pytest.fixture
def private_project(owner_client, tree, django_capture_on_commit_callbacks) -> CodeProject:
    response = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="secret shop",
        path=str(tree / "shop"),
        visibility="private",
    )
    assert response.status_code == 202, response.content
    return CodeProject.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize("where", ["shop", "shop/sub", "."])
def test_it_refuses_outsider_a_folder_indexed_privately_or_one_inside_or_above_it(
    outsider_client, private_project, tree, where, django_capture_on_commit_callbacks
):
    path = tree / where
    path.mkdir(exist_ok=True)
    response = post_scan(
        outsider_client,
        django_capture_on_commit_callbacks,
        name="mine now",
        path=str(path),
        visibility="private",
    )
    assert response.status_code == 403, (where, response.content)
    assert "shares with fewer people" in response.json()["detail"]
    assert list(CodeProject.objects.all()) == [private_project]
    found = outsider_client.get(f"{API}/query", {"q": "relogin", "mode": "exact"}).json()
    assert found["count"] == 0


def test_an_outsider_still_scans_a_folder_beside_it(
    outsider_client, private_project, tree, django_capture_on_commit_callbacks
):
    beside = tree.parent / "other"
    scan_helpers.write_tree(beside, {"tool.py": "def helper():\n    pass\n"})
    response = post_scan(
        outsider_client, django_capture_on_commit_callbacks, name="tool", path=str(beside)
    )
    assert response.status_code == 202
    assert CodeProject.objects.get(pk=response.json()["id"]).state == ScanState.DONE


def test_it_refuses_a_teammate_a_private_folder_of_the_owner(
    teammate_client, private_project, team, tree, django_capture_on_commit_callbacks
):
    response = post_scan(
        teammate_client,
        django_capture_on_commit_callbacks,
        name="shop",
        path=str(tree / "shop"),
        visibility="private",
    )
    assert response.status_code == 403


def test_the_owner_may_index_their_own_folder_for_more_people(
    owner_client, private_project, team, tree, django_capture_on_commit_callbacks
):
    response = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="shop for all",
        path=str(tree),
        visibility="global",
    )
    assert response.status_code == 202


@pytest.fixture
def team_project(owner_client, team, tree, django_capture_on_commit_callbacks) -> CodeProject:
    response = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="team shop",
        path=str(tree),
        visibility="team",
    )
    assert response.status_code == 202, response.content
    return CodeProject.objects.get(pk=response.json()["id"])


def test_a_teammate_may_index_a_team_folder_for_the_team_or_privately_but_not_for_all(
    teammate_client, team_project, tree, django_capture_on_commit_callbacks
):
    def scan(name: str, visibility: str) -> int:
        return post_scan(
            teammate_client,
            django_capture_on_commit_callbacks,
            name=name,
            path=str(tree / "shop"),
            visibility=visibility,
            team=team_project.team_id,
        ).status_code

    assert scan("mine", "private") == 202
    assert scan("ours", "team") == 202
    assert scan("everyone's", "global") == 403
    assert not CodeProject.objects.filter(visibility="global").exists()


def test_a_team_admin_may_not_index_a_members_team_folder_for_all(
    owner_client, teammate_client, team, tree, django_capture_on_commit_callbacks
):
    """The admin could not make the member's project global either: only its owner can."""
    bobs = post_scan(
        teammate_client,
        django_capture_on_commit_callbacks,
        name="bob's shop",
        path=str(tree),
        visibility="team",
        team=team.pk,
    )
    assert bobs.status_code == 202, bobs.content
    response = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="shop for all",
        path=str(tree / "shop"),
        visibility="global",
    )
    assert response.status_code == 403, response.content
    assert "shares with fewer people" in response.json()["detail"]
    assert not CodeProject.objects.filter(visibility="global").exists()


def test_it_refuses_outsider_a_team_folder_even_for_their_own_team(
    outsider_client, other_team, team_project, tree, django_capture_on_commit_callbacks
):
    response = post_scan(
        outsider_client,
        django_capture_on_commit_callbacks,
        name="theirs",
        path=str(tree),
        visibility="team",
        team=other_team.pk,
    )
    assert response.status_code == 403


def test_a_globally_indexed_folder_may_be_indexed_by_anyone(
    owner_client, outsider_client, tree, django_capture_on_commit_callbacks
):
    shared = post_scan(
        owner_client,
        django_capture_on_commit_callbacks,
        name="open",
        path=str(tree),
        visibility="global",
    )
    assert shared.status_code == 202
    response = post_scan(
        outsider_client,
        django_capture_on_commit_callbacks,
        name="open too",
        path=str(tree / "shop"),
        visibility="global",
    )
    assert response.status_code == 202


def test_a_later_private_project_does_not_stop_an_earlier_one_from_rescanning(
    owner, outsider, tree, outsider_client, django_capture_on_commit_callbacks
):
    from teams.services import Actor

    earlier = services.code_project_register(
        actor=Actor(user=outsider), name="open", path=str(tree), visibility="global"
    )
    services.code_project_register(
        actor=Actor(user=owner), name="mine", path=str(tree / "shop"), visibility="private"
    )
    services.code_project_scan(project_id=earlier.pk)
    earlier.refresh_from_db()
    assert earlier.state == ScanState.DONE


def test_a_project_registered_before_the_rule_fails_its_scan_with_the_reason(
    outsider, private_project, tree
):
    # An install upgraded with an outsider's project added after the private one.
    later = CodeProject.objects.create(
        owner=outsider, name="later", root_path=str(tree), visibility="global", state="queued"
    )
    services.code_project_scan(project_id=later.pk)
    later.refresh_from_db()
    assert later.state == ScanState.FAILED
    assert "shares with fewer people" in later.error
    assert later.symbol_count == 0
