"""What management commands share: the user a command acts as, and a progress bar."""

import sys
from typing import Any, TextIO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from tqdm import tqdm


def user_named(username: str | None) -> Any:
    """The user a command acts as: ``--user``, else the configured admin account."""
    name = username or settings.MEMORYHUB_ADMIN_USERNAME
    try:
        return get_user_model().objects.get(username=name)
    except get_user_model().DoesNotExist:
        raise CommandError(f"No user '{name}': pass --user USERNAME.") from None


class ProgressBar:
    """A progress bar on a terminal stream (stderr by default), fed ``(done, total)``."""

    def __init__(self, *, unit: str, desc: str, stream: TextIO | None = None) -> None:
        self.unit, self.desc, self.stream = unit, desc, stream or sys.stderr
        self.bar: tqdm | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = tqdm(
                total=total, unit=self.unit, desc=self.desc, file=self.stream, dynamic_ncols=True
            )
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
