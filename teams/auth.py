"""API authentication: agents send ``Authorization: Bearer <token>``; people use their
dashboard session (with CSRF on unsafe methods). Each endpoint names the scope it needs."""

from typing import Any

from django.http import HttpRequest
from ninja.errors import AuthenticationError, AuthorizationError
from ninja.security import HttpBearer, SessionAuth

from teams.services import TokenRejected, agent_token_authenticate

LOGIN_HINT = "Authentication required: send 'Authorization: Bearer <token>' or log in."


class AgentBearer(HttpBearer):
    """Bearer token auth that also checks the token carries ``scope``."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        super().__init__()

    def __call__(self, request: HttpRequest) -> Any:
        header = request.headers.get("Authorization")
        if not header:
            return None  # no token: let the session try
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise AuthenticationError(message="The Authorization header must be 'Bearer <token>'.")
        return self.authenticate(request, secret.strip())

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        try:
            agent_token = agent_token_authenticate(secret=token)
        except TokenRejected as exc:
            raise AuthenticationError(message=str(exc)) from None
        if not agent_token.has_scope(self.scope):
            raise AuthorizationError(
                message=f"This token lacks the '{self.scope}' scope "
                f"(it has: {', '.join(agent_token.scopes) or 'none'})."
            )
        request.user = agent_token.user
        request.agent_token = agent_token
        return agent_token.user


class DashboardSession(SessionAuth):
    """The logged-in dashboard user; CSRF is checked only once a session exists, so an
    anonymous request gets a 401 rather than a CSRF 403."""

    def _get_key(self, request: HttpRequest) -> str | None:
        if not request.user.is_authenticated:
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        if request.user.is_authenticated:
            return request.user
        raise AuthenticationError(message=LOGIN_HINT)


read_auth = [AgentBearer("read"), DashboardSession()]
write_auth = [AgentBearer("write"), DashboardSession()]
