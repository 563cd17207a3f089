"""``manage.py wiki_import DIR``: load a folder of Markdown pages into the wiki.

Layout: ``projects/<id>/*.md`` are pages of project ``<id>``; ``org/*.md`` are
organisation-wide pages (project ""), as AURORA's ``.aurora/`` folder holds them. The
file name gives the kind (``pdd.md``, ``adr-0003-*.md``, ``runbook-*.md``, ``review-*``,
``triage-*``; AURORA's org files ``patterns-that-worked.md`` -> pattern,
``patterns-that-failed.md`` -> anti-pattern, ``vendor-quirks.md`` -> vendor-quirk,
``naming-prefs.md`` -> convention, which the role presets read; anything else is a
note) unless the front matter names one; the front matter may also carry the title
(else the file name, humanised), tags and visibility.

Organisation pages are shared with the team by default (the team is the organisation's
partition): visibility ``team`` when the importing user has a team, else their default.
Project pages take the user's default visibility unless the front matter says otherwise.

A file whose content hash matches its page is skipped, so a re-import only writes what
changed. A bad file (invalid front matter, undecodable text, invalid page) is reported
and skipped with nothing written for it; the rest goes on, and the command exits 1.
"""

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.engine.cli import ProgressBar, user_named
from memoryhub.engine.errors import ApplicationError
from teams.models import Visibility
from teams.services import Actor, resolve_team, scope_for_new_row
from wiki import frontmatter, services
from wiki.models import Kind, Page, page_fingerprint

KINDS_BY_PREFIX: tuple[str, ...] = (Kind.PDD, Kind.ADR, Kind.RUNBOOK, Kind.REVIEW, Kind.TRIAGE)
PROJECTS_DIR, ORG_DIR = "projects", "org"
# AURORA's organisation memory files, by the kind of page each is.
ORG_FILE_KINDS = {
    "patterns-that-worked": "pattern",
    "patterns-that-failed": "anti-pattern",
    "vendor-quirks": "vendor-quirk",
    "naming-prefs": "convention",
}


def kind_from_name(stem: str) -> str:
    """``pdd`` -> pdd, ``adr-0003-use-sqlite`` -> adr, ``runbook-deploy`` -> runbook,
    ``patterns-that-failed`` -> anti-pattern (see ``ORG_FILE_KINDS``)."""
    lowered = stem.lower()
    if lowered in ORG_FILE_KINDS:
        return ORG_FILE_KINDS[lowered]
    for kind in KINDS_BY_PREFIX:
        if lowered == kind or lowered.startswith(f"{kind}-"):
            return kind
    return Kind.NOTE


def title_from_name(stem: str) -> str:
    words = stem.replace("_", " ").replace("-", " ").split()
    text = " ".join(words)
    return text[:1].upper() + text[1:]


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def page_files(root: Path) -> tuple[list[tuple[Path, str]], list[str]]:
    """The ``(file, project)`` pairs of the layout, in a stable order, and the Markdown
    files outside it (reported, not imported)."""
    found: list[tuple[Path, str]] = []
    for project_dir in sorted((root / PROJECTS_DIR).glob("*/")):
        found += [(path, project_dir.name) for path in sorted(project_dir.glob("*.md"))]
    found += [(path, "") for path in sorted((root / ORG_DIR).glob("*.md"))]
    known = {path for path, _ in found}
    stray = [str(p.relative_to(root)) for p in sorted(root.rglob("*.md")) if p not in known]
    return found, stray


def read_page_file(path: Path) -> tuple[dict[str, Any], str]:
    """Front matter and body of one file, bytes kept as they are (no newline changes)."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApplicationError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return frontmatter.parse(text)
    except frontmatter.FrontMatterError as exc:
        raise ApplicationError(f"invalid front matter: {exc}") from None


def import_file(*, actor: Actor, path: Path, project: str, team: Any) -> str:
    """Import one file; returns "created", "updated" or "unchanged"."""
    meta, body = read_page_file(path)
    title = services.clean_title(meta.get("title") or title_from_name(path.stem))
    kind = meta.get("kind") or kind_from_name(path.stem)
    tags = services.clean_tags(meta.get("tags"), split_text=True)
    visibility = meta.get("visibility")
    if visibility is None and not project and team is not None:
        visibility = Visibility.TEAM
    existing = Page.objects.filter(
        owner=actor.user, project=project, slug=services.page_slug(title)
    ).first()
    if existing is not None:
        hash_now = page_fingerprint(
            title=title,
            content=body,
            tags=tags,
            kind=kind,
            visibility=visibility or existing.visibility,
        )
        if hash_now == existing.content_hash:
            return "unchanged"
    result = services.wiki_page_upsert(
        actor=actor,
        title=title,
        content=body,
        tags=tags,
        kind=kind,
        project=project,
        visibility=visibility,
        team=team.pk if team is not None else None,
    )
    if result.created:
        return "created"
    return "updated" if result.changed else "unchanged"


def import_folder(*, actor: Actor, root: Path, team: Any, progress: TextIO | None) -> ImportReport:
    """Import every page file under ``root``; one file's error never stops the rest."""
    files, stray = page_files(root)
    report = ImportReport(skipped=stray)
    bar = ProgressBar(unit="file", desc="import", stream=progress) if progress else None
    for done, (path, project) in enumerate(files, 1):
        relative = str(path.relative_to(root))
        try:
            outcome = import_file(actor=actor, path=path, project=project, team=team)
        except ApplicationError as exc:
            report.errors.append((relative, exc.message))
        else:
            getattr(report, outcome).append(relative)
        if bar is not None:
            bar(done, len(files), relative)
    if bar is not None:
        bar.close()
    return report


class Command(BaseCommand):
    help = "Import a folder of Markdown pages (projects/<id>/*.md, org/*.md) into the wiki."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--user", help="Owner of the imported pages (username).")
        parser.add_argument(
            "--team", help="Team (name or id) the pages belong to; default: the user's active team."
        )
        parser.add_argument(
            "--no-progress", action="store_true", help="Do not draw the progress bar on stderr."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["directory"]
        if not root.is_dir():
            raise CommandError(f"{root} is not a directory.")
        user = user_named(options["user"])
        try:
            team = (
                resolve_team(user=user, team=options["team"])
                if options["team"]
                else scope_for_new_row(user=user)["team"]
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        progress = None if options["no_progress"] else getattr(self.stderr, "_out", sys.stderr)
        report = import_folder(actor=Actor(user=user), root=root, team=team, progress=progress)
        for relative in report.skipped:
            self.stderr.write(f"{relative}: not under projects/<id>/ or org/; skipped")
        for relative, message in report.errors:
            self.stderr.write(f"{relative}: {message}")
        self.stdout.write(
            f"{len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.errors)} with errors."
        )
        if report.errors:
            raise CommandError(f"{len(report.errors)} file(s) not imported; see above.")
