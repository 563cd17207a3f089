"""Models of CodeGraph: scanned projects, their files, and what each file defines,
imports and calls.

Symbols, imports and calls carry their project as well as their file, so the queries
(by name, by callee, by module) filter one indexed column without a join.
"""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from teams.models import ScopedModel


class ScanState(models.TextChoices):
    NEW = "new", "Not scanned"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class CodeProject(ScopedModel):
    """A source folder on the server's disk, and the state of its last scan."""

    name = models.CharField(max_length=200)
    root_path = models.CharField(max_length=1024)
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    state = models.CharField(max_length=16, choices=ScanState.choices, default=ScanState.NEW)
    files_total = models.PositiveIntegerField(default=0)
    files_done = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    # The last sign of life of the scan: when it was queued, claimed, or stored a batch.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Runs of the requested scan begun so far: more than one when a worker died in one.
    scan_attempts = models.PositiveSmallIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    warning = models.TextField(blank=True, default="")
    extractor_version = models.PositiveIntegerField(default=0)

    # Counts after the last scan, kept on the row so the project list is one query.
    file_count = models.PositiveIntegerField(default=0)
    skipped_count = models.PositiveIntegerField(default=0)
    parsed_count = models.PositiveIntegerField(default=0)
    symbol_count = models.PositiveIntegerField(default=0)
    import_count = models.PositiveIntegerField(default=0)
    call_count = models.PositiveIntegerField(default=0)
    language_counts = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="codeproject_unique_owner_name")
        ]
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        """A scan is queued or running (the dashboard keeps polling)."""
        return self.state in (ScanState.QUEUED, ScanState.RUNNING)

    @property
    def is_scanning(self) -> bool:
        """A scan is running now: one that died with its worker stops counting once it
        has shown no sign of life for CODEGRAPH_SCAN_STALE_SECONDS. A queued project may
        be queued again: scans are idempotent."""
        if self.state != ScanState.RUNNING or self.heartbeat_at is None:
            return False
        stale = timedelta(seconds=settings.CODEGRAPH_SCAN_STALE_SECONDS)
        return self.heartbeat_at > timezone.now() - stale

    @property
    def progress_percent(self) -> int:
        if self.state == ScanState.DONE:
            return 100
        if not self.files_total:
            return 0
        return min(100, self.files_done * 100 // self.files_total)


class SourceFile(models.Model):
    """One file of a project, as last seen by a scan (skipped files included)."""

    project = models.ForeignKey(
        CodeProject, on_delete=models.CASCADE, related_name="files", db_index=False
    )  # the unique (project, path) serves
    path = models.CharField(max_length=1024)  # relative to the root, with "/" separators
    module = models.CharField(max_length=1024, blank=True, default="")  # dotted, Python only
    language = models.CharField(max_length=32)
    size = models.BigIntegerField(default=0)
    mtime_ns = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    has_errors = models.BooleanField(default=False)
    skipped_reason = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "path"], name="sourcefile_unique_path")
        ]
        indexes = [models.Index(fields=["project", "module"], name="sourcefile_module")]
        ordering = ["path"]

    def __str__(self) -> str:
        return self.path


class Symbol(models.Model):
    """A definition: function, method, class, struct, interface, constant..."""

    # No index of its own: the composite indexes below start with the project.
    project = models.ForeignKey(
        CodeProject, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    file = models.ForeignKey(SourceFile, on_delete=models.CASCADE, related_name="symbols")
    name = models.CharField(max_length=255)
    qualified_name = models.CharField(max_length=1024)
    kind = models.CharField(max_length=32)
    line = models.PositiveIntegerField()
    end_line = models.PositiveIntegerField()
    signature = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["project", "name"], name="symbol_project_name"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.qualified_name}"


class ImportRef(models.Model):
    """One imported name. ``target_module`` is the absolute module (relative Python
    imports resolved); ``target_file`` the project file it refers to, when there is one."""

    # No index of its own: the composite indexes below start with the project.
    project = models.ForeignKey(
        CodeProject, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    file = models.ForeignKey(SourceFile, on_delete=models.CASCADE, related_name="imports")
    module = models.CharField(max_length=1024)
    name = models.CharField(max_length=255, blank=True, default="")
    alias = models.CharField(max_length=255, blank=True, default="")
    line = models.PositiveIntegerField()
    target_module = models.CharField(max_length=1024, blank=True, default="")
    target_file = models.ForeignKey(
        SourceFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="importers"
    )

    class Meta:
        indexes = [
            models.Index(fields=["project", "target_module"], name="importref_target_module"),
        ]

    def __str__(self) -> str:
        return f"{self.module} {self.name}".strip()


class CallRef(models.Model):
    """A call site: ``receiver.callee(...)`` inside ``caller`` (qualified, "" = module)."""

    # No index of its own: the composite indexes below start with the project.
    project = models.ForeignKey(
        CodeProject, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    file = models.ForeignKey(SourceFile, on_delete=models.CASCADE, related_name="calls")
    callee = models.CharField(max_length=255)
    receiver = models.CharField(max_length=1024, blank=True, default="")
    caller = models.CharField(max_length=1024, blank=True, default="")
    line = models.PositiveIntegerField()

    class Meta:
        indexes = [models.Index(fields=["project", "callee"], name="callref_project_callee")]

    def __str__(self) -> str:
        return f"{self.receiver}.{self.callee}" if self.receiver else self.callee
