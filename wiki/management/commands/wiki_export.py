"""``manage.py wiki_export DIR``: write the pages a user can read as a folder of
Markdown files that ``wiki_import`` reads back unchanged.

Project pages go to ``projects/<project>/<slug>.md`` and organisation pages (project
"") to ``org/<slug>.md``, each with front matter carrying title, tags, visibility and
kind, so the file name is only a convenience and a re-import is lossless. Files are
written byte for byte (no newline translation). The export is audited.
"""

import re
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.engine.cli import ProgressBar, user_named
from teams.services import Actor, audit_log
from wiki import frontmatter, selectors
from wiki.management.commands.wiki_import import ORG_DIR, PROJECTS_DIR
from wiki.models import Page

# A project key becomes a directory name: anything that could climb out is refused.
_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$")


def page_text(page: Page) -> str:
    meta = {
        "title": page.title,
        "tags": list(page.tags),
        "visibility": page.visibility,
        "kind": page.kind,
    }
    return frontmatter.dump(meta, page.content)


def page_path(page: Page, taken: set[Path]) -> Path:
    """Where a page goes; a second owner's page with the same slug gets its owner's name."""
    folder = Path(ORG_DIR) if not page.project else Path(PROJECTS_DIR) / page.project
    path = folder / f"{page.slug}.md"
    if path in taken:
        path = folder / f"{page.slug}--{page.owner.get_username()}.md"
    return path


def export_folder(
    *, actor: Actor, root: Path, project: str | None = None, progress: Any = None
) -> tuple[list[str], list[tuple[str, str]]]:
    """Write every page ``actor`` may read under ``root``; returns the written paths and
    the pages that could not be written, with why."""
    pages = list(selectors.wiki_page_export_rows(user=actor.user, project=project))
    written: list[str] = []
    errors: list[tuple[str, str]] = []
    taken: set[Path] = set()
    bar = ProgressBar(unit="page", desc="export", stream=progress) if progress else None
    for done, page in enumerate(pages, 1):
        if page.project and not _SAFE_SEGMENT.match(page.project):
            errors.append(
                (page.title, f"project key {page.project!r} is not a safe directory name; skipped")
            )
        else:
            relative = page_path(page, taken)
            taken.add(relative)
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(page_text(page).encode("utf-8"))
            written.append(str(relative))
        if bar is not None:
            bar(done, len(pages), page.slug)
    if bar is not None:
        bar.close()
    audit_log(
        actor=actor,
        action="wiki.export",
        target_type="user",
        target_id=actor.user.pk,
        details={"pages": len(written), "project": project},
    )
    return written, errors


class Command(BaseCommand):
    help = "Export the wiki pages a user can read as projects/<id>/*.md and org/*.md."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", type=Path)
        parser.add_argument("--user", help="Export what this user can read (username).")
        parser.add_argument("--project", help="Only this project's pages.")
        parser.add_argument(
            "--no-progress", action="store_true", help="Do not draw the progress bar on stderr."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["directory"]
        if root.exists() and not root.is_dir():
            raise CommandError(f"{root} exists and is not a directory.")
        root.mkdir(parents=True, exist_ok=True)
        user = user_named(options["user"])
        progress = None if options["no_progress"] else getattr(self.stderr, "_out", sys.stderr)
        written, errors = export_folder(
            actor=Actor(user=user), root=root, project=options["project"], progress=progress
        )
        for title, message in errors:
            self.stderr.write(f"{title}: {message}")
        self.stdout.write(f"{len(written)} page(s) written to {root}.")
        if errors:
            raise CommandError(f"{len(errors)} page(s) not exported; see above.")
