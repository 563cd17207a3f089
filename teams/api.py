"""Who am I, my teams and my memory settings."""

from django.http import HttpRequest
from ninja import Router

from teams.auth import read_auth, write_auth
from teams.schemas import MemorySettingsIn, MeOut, TeamOut
from teams.selectors import memberships_of
from teams.services import Actor, memory_settings_get, memory_settings_update

router = Router(tags=["me"])


def _me(request: HttpRequest) -> dict:
    user = request.user
    prefs = memory_settings_get(user=user)
    token = getattr(request, "agent_token", None)
    return {
        "username": user.get_username(),
        "is_staff": user.is_staff,
        "teams": [
            TeamOut(id=m.team_id, name=m.team.name, role=m.role) for m in memberships_of(user=user)
        ],
        "settings": {
            "active_team": prefs.active_team.name if prefs.active_team else None,
            "default_visibility": prefs.default_visibility,
        },
        "token": (
            {"name": token.name, "fleet": token.fleet, "role": token.role, "scopes": token.scopes}
            if token
            else None
        ),
    }


@router.get("/me", response=MeOut, auth=read_auth)
def me(request: HttpRequest) -> dict:
    """The caller: user, teams, memory settings, and the agent token in use."""
    return _me(request)


@router.get("/teams", response=list[TeamOut], auth=read_auth)
def teams(request: HttpRequest) -> list[TeamOut]:
    """Teams the caller belongs to, with their role."""
    return [
        TeamOut(id=m.team_id, name=m.team.name, role=m.role)
        for m in memberships_of(user=request.user)
    ]


@router.put("/me/settings", response=MeOut, auth=write_auth)
def update_settings(request: HttpRequest, payload: MemorySettingsIn) -> dict:
    """Set the active team (one you belong to) and the default visibility of new rows."""
    memory_settings_update(
        actor=Actor.from_request(request),
        active_team=payload.active_team,
        default_visibility=payload.default_visibility,
    )
    return _me(request)
