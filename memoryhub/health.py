"""Health of the parts a running MemoryHub depends on."""

from typing import Any

from django.db import connection

from memoryhub.celery import app as celery_app


def _redact(url: str) -> str:
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


def check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "engine": connection.vendor}
    except Exception as exc:  # report, don't crash: this is the health page
        return {"ok": False, "engine": connection.vendor, "error": str(exc)}


def check_vec() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                if row is None:
                    return {"ok": False, "error": "the pgvector extension is not installed"}
            else:
                cursor.execute("SELECT vec_version()")
                row = cursor.fetchone()
        return {"ok": True, "version": row[0]}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def check_broker() -> dict[str, Any]:
    url = celery_app.conf.broker_url or ""
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=2)
        return {"ok": True, "transport": url.split("://", 1)[0], "url": _redact(url)}
    except Exception as exc:
        return {
            "ok": False,
            "transport": url.split("://", 1)[0],
            "url": _redact(url),
            "error": str(exc),
        }


def check_worker(timeout: float = 2.0) -> dict[str, Any]:
    try:
        replies = celery_app.control.ping(timeout=timeout) or []
    except Exception as exc:
        return {"ok": False, "workers": [], "error": str(exc)}
    workers = sorted(name for reply in replies for name in reply)
    if not workers:
        return {"ok": False, "workers": [], "error": "no worker answered"}
    return {"ok": True, "workers": workers}


def health_report() -> dict[str, Any]:
    report = {
        "database": check_database(),
        "vec": check_vec(),
        "broker": check_broker(),
    }
    report["worker"] = (
        check_worker()
        if report["broker"]["ok"]
        else {"ok": False, "workers": [], "error": "broker unreachable"}
    )
    report["status"] = "ok" if all(part["ok"] for part in report.values()) else "degraded"
    return report
