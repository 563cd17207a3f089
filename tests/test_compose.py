"""docker-compose.yml: no Docker engine runs here, so parse it and check its shape."""

from pathlib import Path

import yaml

COMPOSE = Path(__file__).resolve().parent.parent / "docker-compose.yml"


def load() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_defines_web_worker_beat_and_redis():
    services = load()["services"]
    assert set(services) >= {"web", "worker", "beat", "redis"}
    assert services["redis"]["image"].startswith("redis:")


def test_app_services_run_the_right_commands_on_a_shared_data_volume():
    config = load()
    services = config["services"]
    names = ("web", "chat", "worker", "beat")
    commands = {name: " ".join(services[name]["command"]) for name in names}
    assert "gunicorn" in commands["web"] and "memoryhub.wsgi" in commands["web"]
    assert "uvicorn memoryhub.asgi:chat" in commands["chat"]
    assert "8001:8001" in " ".join(services["chat"]["ports"])
    assert "celery -A memoryhub worker" in commands["worker"]
    assert "celery -A memoryhub beat" in commands["beat"]
    for name in names:
        service = services[name]
        assert any(v.endswith(":/data") for v in service["volumes"]), name
        env = service["environment"]
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert env["MEMORYHUB_DATA_DIR"] == "/data"
        assert "redis" in service["depends_on"]
    assert "8000:8000" in " ".join(services["web"]["ports"])
    volume_names = {v.split(":")[0] for v in services["web"]["volumes"]}
    assert volume_names <= set(config["volumes"])


def test_every_service_has_an_image_or_a_build():
    for name, service in load()["services"].items():
        assert "image" in service or "build" in service, name


def test_the_data_lives_in_postgresql_with_pgvector_and_workers_scale():
    services = load()["services"]
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")
    for name in ("web", "chat", "worker", "beat"):
        service = services[name]
        assert service["environment"]["DATABASE_URL"].startswith("postgres://")
        assert "@postgres:5432/" in service["environment"]["DATABASE_URL"]
        # Started once the database and the broker answer.
        for backing in ("postgres", "redis"):
            assert service["depends_on"][backing]["condition"] == "service_healthy", name
    for name in ("chat", "worker", "beat"):  # after the web service has migrated
        assert services[name]["depends_on"]["web"]["condition"] == "service_healthy"
    # `--scale worker=N` needs no fixed name or host port.
    assert "container_name" not in services["worker"] and "ports" not in services["worker"]
    for name in ("web", "worker", "postgres", "redis"):
        assert services[name]["healthcheck"]["test"], name
    assert "/api/health" in " ".join(services["web"]["healthcheck"]["test"])
