"""No page shows template source: Django's ``{# #}`` comment is one line only, and a
page rendered for a person holds no template tag or comment delimiter."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from conftest import REPO_ROOT

COMMENT = re.compile(r"\{#(.*?)#\}", re.S)
SOURCE = ("{#", "#}", "{%", "%}", "{{", "}}")


def templates() -> list[Path]:
    found = list((REPO_ROOT / "templates").rglob("*.html"))
    for app in settings.INSTALLED_APPS:
        folder = REPO_ROOT / app.replace(".", "/") / "templates"
        found += list(folder.rglob("*.html"))
    return found


def test_every_template_comment_stays_on_one_line():
    broken = [
        f"{path.relative_to(REPO_ROOT)}: {match.group(0)[:60]!r}"
        for path in templates()
        for match in COMMENT.finditer(path.read_text())
        if "\n" in match.group(1)
    ]
    assert templates() and not broken, broken


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/login/", "/"])
def test_a_page_shows_no_template_source(client, owner, url):
    if url != "/login/":
        client.force_login(owner)
    page = client.get(url).content.decode()
    assert not [mark for mark in SOURCE if mark in page], page[:400]


@pytest.mark.django_db
def test_every_page_names_its_icon_and_the_browsers_default_path_finds_it(client):
    page = client.get("/login/").content.decode()
    assert 'rel="icon"' in page and "favicon.svg" in page
    found = client.get("/favicon.ico")
    assert found.status_code == 301 and found["Location"].endswith("img/favicon.svg")
