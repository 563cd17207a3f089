"""Rows of the engine: the jobs that long work reports its progress on, and the
instance settings every app reads."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


# The kinds of jobs as people call them.
JOB_KINDS = {
    "distill": "Distillation",
    "extract": "Extraction",
    "import": "Import",
    "concept_build": "Concept graph build",
}


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
    # The task that runs it, by name: the sweep sends it again when its run was lost.
    task = models.CharField(max_length=100, blank=True, default="")
    # The last sign of life: when it was queued (or queued again), started, or reported
    # from its run (every few seconds while it runs).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # How many times a worker started it: more than one when a worker died running it.
    attempts = models.PositiveSmallIntegerField(default=0)
    # What happened to it on the way, for its owner: "its worker stopped; queued again".
    note = models.TextField(blank=True, default="")
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

    @property
    def label(self) -> str:
        """What the job is, in words: "Concept graph build 2"."""
        return f"{JOB_KINDS.get(self.kind, self.kind.replace('_', ' ').capitalize())} {self.pk}"

    def as_dict(self) -> dict:
        return {
            "id": self.pk,
            "kind": self.kind,
            "state": self.state,
            "progress": round(self.progress, 4),
            "result": self.result,
            "error": self.error or None,
            "attempts": self.attempts,
            "note": self.note or None,
            "created_at": self.created_at.isoformat(),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "heartbeat_at": self.heartbeat_at.isoformat() if self.heartbeat_at else None,
        }


class EmbeddingProvider(models.TextChoices):
    LOCAL = "local", "Local (all-MiniLM-L6-v2, on this machine)"
    OPENAI = "openai", "OpenAI-compatible /embeddings endpoint"
    LEGACY = "legacy", "Legacy {model, prompt} endpoint"


def validate_endpoint_url(value: str) -> None:
    """An http(s) URL of a model server. Unlike Django's URLValidator, a host name of
    one label is fine: ``http://ollama:11434/v1`` names a container on the same network."""
    message = f"Enter an http:// or https:// URL such as http://127.0.0.1:11434/v1, not {value!r}."
    if not value:
        return
    if any(c.isspace() for c in value):
        raise ValidationError(message)
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number 0-65535
    except ValueError:
        raise ValidationError(message) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError(message)


class MemoryConfig(models.Model):
    """The instance's memory settings: one row, edited under Settings -> Memory.

    Environment variables give the defaults the row is created with (see README)."""

    memory_enabled = models.BooleanField(default=True)
    embeddings_enabled = models.BooleanField(default=True)
    embeddings_provider = models.CharField(
        max_length=16, choices=EmbeddingProvider.choices, default=EmbeddingProvider.LOCAL
    )
    embeddings_url = models.CharField(
        max_length=200, blank=True, default="", validators=[validate_endpoint_url]
    )
    embeddings_model = models.CharField(max_length=200, blank=True, default="")
    embeddings_api_key = models.CharField(max_length=500, blank=True, default="")
    recall_max_items = models.PositiveIntegerField(default=8)
    recall_char_budget = models.PositiveIntegerField(default=2000)
    # {"preference": 2, ...}: at most that many items of a category per recall.
    recall_category_budget = models.JSONField(default=dict, blank=True)
    rrf_k = models.PositiveIntegerField(default=60)
    # Overrides of the ranking stages' settings (``facts.ranking.RecallTuning``).
    recall_tuning = models.JSONField(default=dict, blank=True)
    weight_importance = models.FloatField(default=0.15)
    weight_recency = models.FloatField(default=0.10)
    weight_access = models.FloatField(default=0.05)
    recency_half_life_days = models.FloatField(default=30.0)
    max_content_length = models.PositiveIntegerField(default=2000)
    max_active_facts = models.PositiveIntegerField(
        default=1000, help_text="Per owner scope; 0 = no cap."
    )
    dedupe_similarity = models.FloatField(default=0.92)
    distillation_enabled = models.BooleanField(default=False)
    distillation_every_hours = models.PositiveIntegerField(default=12)
    # Features an instance may do without: off, their tools leave the tool list and MCP,
    # their API answers 404 and their pages say they are switched off.
    codegraph_enabled = models.BooleanField(default=True)
    wiki_enabled = models.BooleanField(default=True)
    # Extracted facts wait in the review queue for their owner instead of being written.
    extraction_review_required = models.BooleanField(default=False)
    # A scope is distilled once it holds this many facts not yet rolled into a summary.
    distillation_min_facts = models.PositiveIntegerField(default=12)
    # When the last scheduled distillation ran (None: never).
    distilled_at = models.DateTimeField(null=True, blank=True, editable=False)
    llm_url = models.CharField(
        max_length=200, blank=True, default="", validators=[validate_endpoint_url]
    )
    llm_model = models.CharField(max_length=200, blank=True, default="")
    llm_api_key = models.CharField(max_length=500, blank=True, default="")
    # Calls to the chat model that gave no usable answer, and the latest of them; written
    # by ``memory_config_llm_error_record`` alone, with UPDATE ... SET n = n + 1, so every
    # process adds to the same count.
    llm_error_count = models.PositiveIntegerField(default=0, editable=False)
    llm_last_error_at = models.DateTimeField(null=True, blank=True, editable=False)
    llm_last_error_kind = models.CharField(max_length=16, blank=True, default="", editable=False)
    llm_last_error_message = models.CharField(
        max_length=300, blank=True, default="", editable=False
    )
    # The ``facts.dedupe.KEYS_VERSION`` the stored near-duplicate keys were built with
    # (0: never built; the first write builds them).
    fact_keys_version = models.PositiveIntegerField(default=0, editable=False)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return "memory settings"

    @property
    def embedder_key(self) -> tuple[str, str, str]:
        """What identifies the embedding model: a change means re-embedding."""
        return (self.embeddings_provider, self.embeddings_url, self.embeddings_model)
