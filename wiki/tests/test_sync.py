"""Folder sync: wiki_import and wiki_export round-trip projects/<id>/*.md and org/*.md."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from teams.models import AuditEvent
from teams.services import Actor
from wiki.models import Page, PageRevision
from wiki.services import wiki_page_upsert

pytestmark = pytest.mark.django_db

FILES = {
    "projects/atlas/pdd.md": "---\ntitle: Atlas design\ntags: [design, atlas]\n---\n"
    "# Atlas\n\nThe ingest pipeline.\r\nWindows line ending kept.\n",
    "projects/atlas/adr-0003-use-sqlite.md": "We use SQLite with FTS5.\n",
    "projects/atlas/runbook-restore.md": "---\nvisibility: team\n---\nRestore from the "
    "nightly dump.\n",
    "projects/atlas/meeting.md": "Notes of the kickoff.\n",
    "org/vendor-quirks.md": "---\ntitle: Vendor quirks\ntags: [vendors]\n---\n"
    "The S3 clone lies about ETags.\n",
}


def make_folder(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return root


def run(command: str, *args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def snapshot() -> list[tuple]:
    return sorted(
        Page.objects.values_list(
            "project", "slug", "title", "content", "kind", "visibility", "tags", "team_id"
        )
    )


def test_import_reads_the_layout(tmp_path, owner, team):
    out, err = run("wiki_import", str(make_folder(tmp_path, FILES)), "--user", "alice")
    assert "5 created, 0 updated, 0 unchanged, 0 with errors" in out
    assert "[" in err and "5/5" in err  # the progress bar
    pages = {p.slug: p for p in Page.objects.all()}
    assert pages["atlas-design"].kind == "pdd" and pages["atlas-design"].project == "atlas"
    assert pages["atlas-design"].tags == ["design", "atlas"]
    assert "\r\n" in pages["atlas-design"].content
    assert pages["adr-0003-use-sqlite"].kind == "adr"
    assert pages["runbook-restore"].kind == "runbook"
    assert pages["runbook-restore"].visibility == "team"
    assert pages["meeting"].kind == "note"
    org = pages["vendor-quirks"]
    assert org.project == "" and org.visibility == "team" and org.team == team


def test_reimport_updates_changed_files_only(tmp_path, owner, team):
    root = make_folder(tmp_path, FILES)
    run("wiki_import", str(root), "--user", "alice")
    (root / "projects/atlas/meeting.md").write_text("Notes of the kickoff, corrected.\n")
    out, _ = run("wiki_import", str(root), "--user", "alice")
    assert "0 created, 1 updated, 4 unchanged, 0 with errors" in out
    assert PageRevision.objects.count() == 6


def test_invalid_front_matter_is_a_per_file_error(tmp_path, owner, team):
    files = {
        **FILES,
        "org/broken.md": "---\ntitle: [unclosed\n---\nBody.\n",
        "org/unknown-key.md": "---\ntag: oops\n---\nBody.\n",
    }
    root = make_folder(tmp_path, files)
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="2 file"):
        call_command("wiki_import", str(root), "--user", "alice", stdout=out, stderr=err)
    assert "5 created" in out.getvalue()
    assert "org/broken.md: invalid front matter" in err.getvalue()
    assert (
        "org/unknown-key.md: invalid front matter: unknown front matter key 'tag'" in err.getvalue()
    )
    assert not Page.objects.filter(slug__in=["broken", "unknown-key"]).exists()


def test_import_edit_export_reimport_is_lossless(tmp_path, owner, team):
    run("wiki_import", str(make_folder(tmp_path / "in", FILES)), "--user", "alice")
    wiki_page_upsert(
        actor=Actor(user=owner),
        title="Vendor quirks",
        content="The S3 clone lies about ETags.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        tags=["vendors", "s3"],
        visibility="team",
    )
    before = snapshot()
    out, _ = run("wiki_export", str(tmp_path / "out"), "--user", "alice")
    assert "5 page(s) written" in out
    exported = tmp_path / "out"
    assert (exported / "org/vendor-quirks.md").read_text().startswith("---\ntitle: Vendor quirks")
    assert (exported / "projects/atlas/atlas-design.md").exists()

    out, _ = run("wiki_import", str(exported), "--user", "alice")
    assert "0 created, 0 updated, 5 unchanged" in out
    assert snapshot() == before

    # Into an empty wiki, the export recreates the same pages.
    Page.objects.all().delete()
    run("wiki_import", str(exported), "--user", "alice")
    assert snapshot() == before
    run("wiki_export", str(tmp_path / "again"), "--user", "alice")
    for path in exported.rglob("*.md"):
        assert (tmp_path / "again" / path.relative_to(exported)).read_bytes() == path.read_bytes()


def test_export_follows_the_access_rule(tmp_path, owner, teammate, outsider, team):
    run("wiki_import", str(make_folder(tmp_path / "in", FILES)), "--user", "alice")
    run("wiki_export", str(tmp_path / "bob"), "--user", "bob")
    assert sorted(
        str(p.relative_to(tmp_path / "bob")) for p in (tmp_path / "bob").rglob("*.md")
    ) == ["org/vendor-quirks.md", "projects/atlas/runbook-restore.md"]
    out, _ = run("wiki_export", str(tmp_path / "charlie"), "--user", "charlie")
    assert "0 page(s) written" in out
    assert list((tmp_path / "charlie").rglob("*.md")) == []
    assert AuditEvent.objects.filter(action="wiki.export").count() == 2


def test_an_unknown_user_is_refused(tmp_path, owner):
    with pytest.raises(CommandError, match="No user 'nobody'"):
        run("wiki_import", str(make_folder(tmp_path, FILES)), "--user", "nobody")
    assert not Page.objects.exists()
