"""Rows of the agent surface: what each agent role recalls by default."""

from django.db import models


class RolePreset(models.Model):
    """What an agent of a role recalls by default: a list of tiered-recall reads, each
    ``{tier, include?, skill?, fingerprint?, since?, scope?}`` (see
    ``memoryhub.surface.recall.preset_entries_clean``). Staff edit them in the admin; a token's
    role names its preset."""

    role = models.SlugField(max_length=100, unique=True)
    description = models.CharField(max_length=300, blank=True, default="")
    entries = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["role"]

    def __str__(self) -> str:
        return self.role

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        from memoryhub.engine.errors import InvalidInput
        from memoryhub.surface.recall import preset_entries_clean

        try:
            self.entries = preset_entries_clean(self.entries)
        except InvalidInput as exc:
            raise ValidationError({"entries": exc.message}) from None
