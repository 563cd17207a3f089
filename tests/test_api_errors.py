"""Bad input anywhere answers 4xx with a message and changes nothing; health and docs."""

import pytest
from django.db import connection
from django.test import Client

from teams.models import AuditEvent, MemorySettings

pytestmark = pytest.mark.django_db


def test_malformed_json_is_a_4xx_with_a_message(owner, agent_client):
    client = agent_client(owner)
    response = client.put("/api/me/settings", "{not json", content_type="application/json")
    assert 400 <= response.status_code < 500
    assert response.json()["detail"]
    assert not AuditEvent.objects.filter(action="settings.memory").exists()


def test_wrong_types_are_422_with_field_messages(owner, agent_client):
    client = agent_client(owner)
    response = client.put(
        "/api/me/settings", {"default_visibility": ["team"]}, content_type="application/json"
    )
    assert response.status_code == 422
    body = response.json()
    assert body["errors"][0]["field"] == "payload.default_visibility" or body["errors"][0][
        "field"
    ].endswith("default_visibility")
    assert "default_visibility" in body["detail"]
    assert not MemorySettings.objects.filter(user=owner, default_visibility="team").exists()


def test_unknown_endpoint_is_404_json_free_of_stack_traces(owner, agent_client):
    response = agent_client(owner).get("/api/no-such-thing")
    assert response.status_code == 404
    assert b"Traceback" not in response.content


def test_openapi_docs_are_served():
    schema = Client().get("/api/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/health" in paths and "/api/me" in paths
    assert Client().get("/api/docs").status_code == 200


def test_health_reports_database_and_vec_without_auth():
    body = Client().get("/api/health").json()
    assert body["database"] == {"ok": True, "engine": connection.vendor}
    # sqlite-vec says "v0.1.9", pgvector "0.8.6".
    assert body["vec"]["ok"] is True and body["vec"]["version"].lstrip("v")[:1].isdigit()
    assert set(body) == {"status", "database", "vec", "broker", "worker"}
