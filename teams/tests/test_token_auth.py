"""Agent tokens on the API: none, bad, revoked, missing scope, good."""

import pytest
from django.test import Client
from django.utils import timezone

from teams.models import AgentToken, hash_secret

pytestmark = pytest.mark.django_db


def bearer(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


def test_no_token_and_no_session_is_401_with_a_message():
    response = Client().get("/api/me")
    assert response.status_code == 401
    assert "Bearer" in response.json()["detail"]


def test_unknown_token_is_401():
    response = bearer("mh_not-a-real-token").get("/api/me")
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid token."


def test_malformed_authorization_header_is_401():
    response = Client(headers={"Authorization": "Token abc"}).get("/api/me")
    assert response.status_code == 401
    assert "Bearer <token>" in response.json()["detail"]


def test_revoked_token_is_401(owner, make_token):
    token, secret = make_token(owner)
    token.revoked_at = timezone.now()
    token.save()
    response = bearer(secret).get("/api/me")
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]


def test_token_of_inactive_user_is_401(owner, make_token):
    _, secret = make_token(owner)
    owner.is_active = False
    owner.save()
    assert bearer(secret).get("/api/me").status_code == 401


def test_read_only_token_cannot_write_403(owner, make_token):
    _, secret = make_token(owner, scopes=("read",))
    client = bearer(secret)
    assert client.get("/api/me").status_code == 200
    response = client.put(
        "/api/me/settings", {"default_visibility": "global"}, content_type="application/json"
    )
    assert response.status_code == 403
    assert "'write' scope" in response.json()["detail"]


def test_write_only_token_cannot_read_403(owner, make_token):
    _, secret = make_token(owner, scopes=("write",))
    response = bearer(secret).get("/api/me")
    assert response.status_code == 403
    assert "'read' scope" in response.json()["detail"]


def test_good_token_acts_as_its_user_and_records_last_use(owner, team, make_token):
    token, secret = make_token(owner, name="ci-bot", fleet="ci", role="reviewer")
    assert token.last_used_at is None
    response = bearer(secret).get("/api/me")
    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "alice"
    assert body["token"] == {
        "name": "ci-bot",
        "fleet": "ci",
        "role": "reviewer",
        "scopes": ["read", "write"],
    }
    assert body["teams"] == [{"id": team.pk, "name": "Platform", "role": "admin"}]
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_only_the_hash_of_the_secret_is_stored(owner, make_token):
    token, secret = make_token(owner)
    stored = AgentToken.objects.get(pk=token.pk)
    assert stored.secret_hash == hash_secret(secret)
    assert secret not in str(stored.__dict__.values())
    assert secret.startswith(stored.prefix)


def test_session_user_can_use_the_api_and_needs_csrf_for_writes(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.get("/api/me").status_code == 200
    response = client.put(
        "/api/me/settings", {"default_visibility": "global"}, content_type="application/json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_token_names_are_unique_among_active_tokens(owner, make_token):
    from memoryhub.engine.errors import Conflict

    token, _ = make_token(owner, name="bot")
    with pytest.raises(Conflict):
        make_token(owner, name="bot")
    token.revoked_at = timezone.now()
    token.save()
    make_token(owner, name="bot")  # a revoked name can be reused


def test_unknown_scope_is_refused(owner, make_token):
    from memoryhub.engine.errors import InvalidInput

    with pytest.raises(InvalidInput, match="Unknown scope admin"):
        make_token(owner, scopes=("read", "admin"))
    assert not AgentToken.objects.exists()


def test_create_agent_token_command_prints_a_working_secret(owner, capsys):
    from django.core.management import call_command

    call_command(
        "create_agent_token",
        "--user",
        "alice",
        "--name",
        "headless",
        "--fleet",
        "nightly",
        "--scopes",
        "read",
    )
    secret = capsys.readouterr().out.strip()
    token = AgentToken.objects.get(name="headless")
    assert (token.fleet, token.scopes) == ("nightly", ["read"])
    assert bearer(secret).get("/api/me").status_code == 200


def test_create_agent_token_command_refuses_unknown_user(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="No user named 'ghost'"):
        call_command("create_agent_token", "--user", "ghost", "--name", "x")


def test_create_agent_token_command_limits_the_tools(owner, capsys):
    from django.core.management import CommandError, call_command

    call_command("create_agent_token", "--user", "alice", "--name", "r", "--tools", "recall")
    assert AgentToken.objects.get(name="r").tools == ["recall"]
    with pytest.raises(CommandError, match="Unknown tool shell"):
        call_command("create_agent_token", "--user", "alice", "--name", "s", "--tools", "shell")
