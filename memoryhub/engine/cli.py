"""What management commands share: the user a command acts as, and a progress bar."""

import sys
from typing import Any, TextIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from tqdm import tqdm


def user_named(username: str | None) -> Any:
    """The user a command acts as: ``--user``, else the configured admin account, else
    the one superuser there is."""
    users = get_user_model().objects
    if username:
        found = users.filter(username=username).first()
        if found is None:
            raise CommandError(f"No user '{username}': pass --user USERNAME.")
        return found
    found = users.filter(username=settings.MEMORYHUB_ADMIN_USERNAME).first()
    if found is not None:
        return found
    admins = list(users.filter(is_superuser=True)[:2])
    if len(admins) != 1:
        raise CommandError("Name the user to act as with --user USERNAME.")
    return admins[0]


def command_progress(command: Any, options: dict[str, Any], *, unit: str, desc: str):
    """The progress bar of a management command on its stderr, or None when the command
    was run with ``--no-progress``."""
    if options.get("no_progress"):
        return None
    return ProgressBar(unit=unit, desc=desc, stream=getattr(command.stderr, "_out", sys.stderr))


class ProgressBar:
    """A progress bar on a terminal stream (stderr by default), fed ``(done, total)``
    and optionally what it is working on."""

    def __init__(self, *, unit: str, desc: str, stream: TextIO | None = None) -> None:
        self.unit, self.desc, self.stream = unit, desc, stream or sys.stderr
        self.bar: tqdm | None = None

    def __call__(self, done: int, total: int, label: str = "") -> None:
        if self.bar is None:
            self.bar = tqdm(
                total=total, unit=self.unit, desc=self.desc, file=self.stream, dynamic_ncols=True
            )
        self.bar.total = total
        self.bar.n = done
        if label:
            self.bar.set_postfix_str(label[:40], refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
