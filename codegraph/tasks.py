"""Background work of CodeGraph: thin entry points over the services."""

from celery import shared_task

from codegraph import services
from codegraph.models import CodeProject


@shared_task(name="codegraph.scan", acks_late=True)
def codegraph_scan(project_id: int) -> dict:
    """Scan one queued code project (idempotent: delivered twice, it scans once)."""
    try:
        result = services.code_project_scan(project_id=project_id, queued_only=True)
    except CodeProject.DoesNotExist:
        return {"project_id": project_id, "deleted": True}
    return {
        "project_id": project_id,
        "files": result.files,
        "parsed": result.parsed,
        "workers": result.workers,
        "deleted": result.deleted,
        "errors": result.errors,
    }


@shared_task(name="codegraph.scans_catch_up", acks_late=True)
def codegraph_scans_catch_up() -> list[int]:
    """Queue again the scans whose task was lost or whose worker died."""
    return services.code_project_scans_catch_up()
