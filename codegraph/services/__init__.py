"""Writes of CodeGraph: registering a folder (``projects``), walking and parsing it
(``examine``) and scanning it incrementally into the index (``scan``)."""

from codegraph.services.projects import (
    code_project_delete,
    code_project_register,
    code_project_rescan,
    code_project_scan_request,
    code_root_access_check,
    code_root_validate,
)
from codegraph.services.scan import (
    ScanLost,
    ScanResult,
    code_project_scan,
    code_project_scans_catch_up,
    scan_stale_after,
)

__all__ = [
    "ScanLost",
    "ScanResult",
    "code_project_delete",
    "code_project_register",
    "code_project_rescan",
    "code_project_scan",
    "code_project_scan_request",
    "code_project_scans_catch_up",
    "code_root_access_check",
    "code_root_validate",
    "scan_stale_after",
]
