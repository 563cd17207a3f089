"""Helpers shared by the CodeGraph commands."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def user_named(username: str | None):
    """The user a command acts as: ``--user``, else the configured admin account."""
    name = username or settings.MEMORYHUB_ADMIN_USERNAME
    try:
        return get_user_model().objects.get(username=name)
    except get_user_model().DoesNotExist:
        raise CommandError(f"No user '{name}': pass --user USERNAME.") from None
