"""``manage.py migrate_to_postgres``: a SQLite install with facts of every layer, wiki
pages, a CodeGraph project and concept triples, copied into a real PostgreSQL server
with pgvector, answers the same searches there."""

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command

from codegraph.models import Symbol
from codegraph.services.projects import code_project_register
from codegraph.services.scan import code_project_scan
from concepts.models import Triple
from facts.models import Fact
from facts.search import FACT_FTS, FACT_VECTORS
from memoryhub.engine.db import embedded_postgres
from teams.services import Actor
from wiki.models import Page, PagePassage
from wiki.services import wiki_page_upsert

REPO_ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.sqlite_only("copies a SQLite install into PostgreSQL"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = embedded_postgres.start(tmp_path_factory.mktemp("pg") / "data", durable=False)
    yield started
    started.stop()


def fresh_database(server, name: str) -> str:
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    return server.url(name)


def manage(*args: str, database: str) -> subprocess.CompletedProcess:
    """``manage.py`` run as a person would, on the database at ``database``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYHUB_TEST")}
    env["DATABASE_URL"] = database
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def move(target: str) -> str:
    """Run the move from the test's SQLite database; what it printed."""
    source = f"sqlite:///{settings.DATABASES['default']['NAME']}"
    done = manage("migrate_to_postgres", target, "--no-progress", database=source)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def in_target(url: str, code: str) -> dict:
    """What ``code`` (which sets ``out``) finds when the server runs on ``url``."""
    script = "import json\n" + code + "\nprint(json.dumps(out))"
    done = manage("shell", "-c", script, database=url)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def install(
    owner, teammate, team, remember, settings, tmp_path, django_capture_on_commit_callbacks
):
    """A SQLite install holding a bit of everything."""
    for text in ("Alice works at Acme", "Alice prefers green tea", "The VPN gateway is vpn2"):
        remember(owner, text, session_id="chat")
    remember(owner, "Alice: green tea, works at Acme", layer=2, category="summary")
    remember(owner, "Profile: an Acme engineer who drinks tea", layer=3, category="profile")
    remember(teammate, "Billing runs on the first of the month", visibility="team", team=team.pk)
    with django_capture_on_commit_callbacks(execute=True):
        wiki_page_upsert(
            actor=Actor(user=owner),
            title="Billing runbook",
            content="Invoices go out on the first.\n\nRefunds take five days.",
        )
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "auth.py").write_text("def login(user):\n    return check(user)\n")
    project = code_project_register(
        actor=Actor(user=owner), name="shop", path=str(tmp_path / "shop")
    )
    code_project_scan(project_id=project.pk)
    assert set(Fact.objects.values_list("layer", flat=True)) == {1, 2, 3}
    assert Triple.objects.exists() and Symbol.objects.exists() and PagePassage.objects.exists()
    assert set(FACT_VECTORS.models()) >= set(Fact.objects.values_list("pk", flat=True))
    return project


def test_an_install_moves_with_every_count_checked_and_answers_the_same_there(
    server, install, owner
):
    target = fresh_database(server, "moved")
    printed = move(target)
    assert "every count matches" in printed
    for table in (
        "facts_fact",
        "facts_factkey",
        "facts_fact_fts",
        "facts_fact_vec",
        "wiki_page",
        "wiki_passage_vec",
        "codegraph_symbol",
        "concepts_triple",
    ):
        assert table in printed, table  # fmt: skip

    found = in_target(
        target,
        f"""
from facts.models import Fact
from facts.recall import fact_recall
from facts.search import FACT_FTS, FACT_VECTORS
from codegraph.selectors import symbol_find
from concepts.models import Triple
from wiki.models import Page
from wiki.selectors import wiki_page_search
from django.contrib.auth.models import User
from teams.services import Actor
owner = User.objects.get(pk={owner.pk})
fact = Fact.objects.get(content="The VPN gateway is vpn2")
vector = FACT_VECTORS.vectors([fact.pk])[fact.pk]
out = {{
    "facts": Fact.objects.count(),
    "fts": sorted(FACT_FTS.ids()),
    "nearest": FACT_VECTORS.knn(vector, k=1)[0].id == fact.pk,
    "recalled": [
        i.content
        for i in fact_recall(actor=Actor(user=owner), query="what tea does Alice drink").items
    ][:3],
    "symbols": [h.name for h in symbol_find(user=owner, query="login")],
    "wiki": [h.page.title for h in wiki_page_search(user=owner, query="who sends the invoices")],
    "triples": Triple.objects.count(),
}}
""",
    )
    assert found["facts"] == Fact.objects.count()
    assert found["fts"] == sorted(FACT_FTS.ids())
    assert found["nearest"] is True
    assert any("green tea" in text for text in found["recalled"]), found["recalled"]
    assert found["symbols"] == ["login"]
    assert found["wiki"][:1] == [Page.objects.get().title]
    assert found["triples"] == Triple.objects.count()

    # New rows take ids past the copied ones: the sequences were moved on.
    later = in_target(
        target,
        f"""
from facts.services.create import fact_create
from django.contrib.auth.models import User
from teams.services import Actor
owner = User.objects.get(pk={owner.pk})
out = fact_create(actor=Actor(user=owner), data={{"content": "Lunch is at noon"}}).fact.pk
""",
    )
    assert later > max(Fact.objects.values_list("pk", flat=True))


def test_moving_again_replaces_what_the_target_held(server, install):
    target = fresh_database(server, "moved_twice")
    move(target)
    Fact.objects.filter(content__startswith="Alice").delete()
    assert "every count matches" in move(target)
    with psycopg.connect(target) as db:
        (count,) = db.execute("SELECT count(*) FROM facts_fact").fetchone()
    assert count == Fact.objects.count()


def test_a_target_that_is_not_postgresql_is_refused(install):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="must be a PostgreSQL URL"):
        call_command("migrate_to_postgres", "sqlite:////tmp/elsewhere.sqlite3")
