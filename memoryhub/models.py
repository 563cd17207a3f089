"""Rows of the core: the jobs that long work reports its progress on."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Job(models.Model):
    """Long work (a distillation, an extraction, an import, a graph build) started by a
    person or an agent: its state, progress and result, read at ``GET /api/jobs/{id}``
    by its owner and by staff."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32, db_index=True)
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    progress = models.FloatField(default=0.0)
    # What the job was asked to do (ids, options). Input it must hold until it runs (a
    # long conversation to extract from) is cleared when it finishes.
    arguments = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="job_owner_time")]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.state})"

    @property
    def is_finished(self) -> bool:
        return self.state in (JobState.DONE, JobState.FAILED)

    def as_dict(self) -> dict:
        return {
            "id": self.pk,
            "kind": self.kind,
            "state": self.state,
            "progress": round(self.progress, 4),
            "result": self.result,
            "error": self.error or None,
            "created_at": self.created_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


class RolePreset(models.Model):
    """What an agent of a role recalls by default: a list of tiered-recall reads, each
    ``{tier, include?, skill?, fingerprint?, since?, scope?}`` (see
    ``memoryhub.recall.preset_entries_clean``). Staff edit them in the admin; a token's
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

        from memoryhub.errors import InvalidInput
        from memoryhub.recall import preset_entries_clean

        try:
            self.entries = preset_entries_clean(self.entries)
        except InvalidInput as exc:
            raise ValidationError({"entries": exc.message}) from None
