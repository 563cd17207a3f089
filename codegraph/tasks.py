"""Background work of CodeGraph: thin entry points over the services."""

from celery import shared_task

from codegraph import services
from codegraph.models import CodeProject


@shared_task(name="codegraph.scan", acks_late=True)
def codegraph_scan(project_id: int) -> dict:
    """Scan one code project (idempotent: a rescan of an unchanged tree changes nothing)."""
    try:
        result = services.code_project_scan(project_id=project_id)
    except CodeProject.DoesNotExist:
        return {"project_id": project_id, "deleted": True}
    return {
        "project_id": project_id,
        "files": result.files,
        "parsed": result.parsed,
        "deleted": result.deleted,
        "errors": result.errors,
    }
