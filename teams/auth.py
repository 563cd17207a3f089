"""Authentication: agents send ``Authorization: Bearer <token>``; people use their
dashboard session (with CSRF on unsafe methods); each endpoint names the scope it needs.

Failed passwords and tokens are counted (django-axes) so that guessing stops, without
refusing anyone whose credentials are right:

- a failed password counts against its account and its address, a failed token against
  its address;
- an account whose count reaches the limit is refused from every address, right password
  or wrong, until its cool-off has passed: that is what stops its password being guessed
  (its agents' tokens go on working);
- an address whose count reaches the limit gets 429 for every failure, and its failed
  tokens are no longer even counted; a right password of an account that is not locked
  out, and a valid token, still get in from it (behind a proxy that hides its clients,
  the address is everyone's).

The counts live in the shared cache when that is Redis (shared by every process and
incremented atomically), otherwise in the database, which also takes them while Redis
is down.
"""

import contextlib
import math
from typing import Any

from axes.handlers.cache import AxesCacheHandler
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cache
from axes.models import AccessBase
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from ninja.errors import AuthenticationError, AuthorizationError, Throttled
from ninja.security import HttpBearer, SessionAuth

from memoryhub.engine.cache import CacheUnavailable, RedisCache
from teams.models import AgentToken
from teams.services import TokenRejected, agent_token_authenticate

LOGIN_HINT = "Authentication required: send 'Authorization: Bearer <token>' or log in."
# What a failed token is recorded as: there is no account to count it against.
TOKEN_CREDENTIALS = {"token": "bearer"}
# The counts (axes' lockout parameters) and the key under which the handler names the
# ones a call reads.
ACCOUNT, ADDRESS = "username", "ip_address"
COUNTS = "counts"


def client_address(request: HttpRequest) -> str:
    """The address failed attempts count against: the peer, or behind a TLS proxy the
    client the proxy appended to X-Forwarded-For (earlier entries are the client's own
    say and are ignored)."""
    if settings.MEMORYHUB_BEHIND_TLS_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").rsplit(",", 1)[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR", "")


def is_token(credentials: dict | None) -> bool:
    return bool(credentials) and "token" in credentials


def has_account(credentials: dict | None) -> bool:
    return bool(credentials) and bool(credentials.get(ACCOUNT))


def lockout_parameters(
    request_or_attempt: HttpRequest | AccessBase, credentials: dict | None
) -> list[str]:
    """The counts a failure adds to: a password's account and address, a token's address;
    those the handler names when it reads some of them; for a stored attempt (being
    reset), those it holds."""
    if credentials and COUNTS in credentials:
        return list(credentials[COUNTS])
    if isinstance(request_or_attempt, AccessBase):
        return [name for name in (ACCOUNT, ADDRESS) if getattr(request_or_attempt, name)]
    if has_account(credentials):
        return [ACCOUNT, ADDRESS]
    return [ADDRESS]


class FailedLogins(AxesDatabaseHandler):
    """The axes handler: the database's, with the counts in the shared cache when that is
    Redis and answers. Reads take the higher of the two, so a lock-out counted in the
    database while Redis was down still holds once it is back."""

    @staticmethod
    def _cache() -> AxesCacheHandler | None:
        # Only Redis: the file cache's increments read then write, losing concurrent ones.
        if isinstance(get_cache(), RedisCache):
            return AxesCacheHandler()
        return None

    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        failures = super().get_failures(request, credentials)
        if (cache := self._cache()) is not None:
            with contextlib.suppress(CacheUnavailable):
                failures = max(failures, cache.get_failures(request, credentials))
        return failures

    def is_locked(self, request: HttpRequest, credentials: dict | None = None) -> bool:
        """For a password (asked before it is checked): whether its account is locked
        out. For a token (asked once it failed): whether its address is."""
        checked = [ACCOUNT] if has_account(credentials) else [ADDRESS]
        return super().is_locked(request, {**(credentials or {}), COUNTS: checked})

    def user_login_failed(
        self, sender: Any, credentials: dict, request: HttpRequest | None = None, **kwargs: Any
    ) -> None:
        if request is not None and request.axes_locked_out:
            # Refused before it was checked: not counted, so a flood of them writes
            # nothing and cannot stretch the lock-out.
            request.axes_credentials = credentials
            return
        if request is not None and (cache := self._cache()) is not None:
            try:
                return cache.user_login_failed(sender, credentials, request, **kwargs)
            except CacheUnavailable:
                pass  # logged by the cache; counted in the database instead
        super().user_login_failed(sender, credentials, request, **kwargs)

    def reset_attempts(
        self,
        *,
        ip_address: str | None = None,
        username: str | None = None,
        ip_or_username: bool = False,
    ) -> int:
        reset = super().reset_attempts(
            ip_address=ip_address, username=username, ip_or_username=ip_or_username
        )
        if (cache := self._cache()) is not None:
            # With Redis down this fails, saying so: run the command again once it is back.
            reset += cache.reset_attempts(
                ip_address=ip_address, username=username, ip_or_username=ip_or_username
            )
        return reset


def cool_off_seconds() -> int:
    return math.ceil(settings.AXES_COOLOFF_TIME.total_seconds())


def cool_off_end() -> str:
    """When a lock-out starting now ends: it ends a cool-off after the failure that
    started it, so this is at the latest."""
    until = timezone.localtime(timezone.now() + settings.AXES_COOLOFF_TIME)
    minutes = math.ceil(cool_off_seconds() / 60)
    return f"{until:%H:%M %Z} (in {minutes} minute{'s' if minutes != 1 else ''} at most)"


def lockout_message(*, what: str) -> str:
    return f"Too many failed {what}. Try again after {cool_off_end()}."


def locked_out_response(
    request: HttpRequest, response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """What a refused attempt gets: the login page saying why and when to come back, or
    for an agent token a JSON 429; both with Retry-After."""
    if is_token(credentials):
        answer = JsonResponse(
            {"detail": lockout_message(what="authentication attempts from this address")},
            status=429,
        )
    else:
        if has_account(credentials) and AxesProxyHandler.is_locked(request, credentials):
            why = lockout_message(what="logins for this account")
        else:
            why = (
                "Too many failed logins from this address. Check the username and password: "
                f"a right one logs in, a wrong one is refused until {cool_off_end()}."
            )
        form = AuthenticationForm(request, initial={"username": request.POST.get("username")})
        answer = render(
            request, "registration/login.html", {"form": form, "locked_out": why}, status=429
        )
    answer["Retry-After"] = str(cool_off_seconds())
    return answer


class CredentialsThrottled(Throttled):
    def __init__(self) -> None:
        super().__init__(wait=cool_off_seconds())
        self.message = lockout_message(what="authentication attempts from this address")


def token_authenticate(request: HttpRequest, *, secret: str) -> AgentToken:
    """The active agent token ``secret`` names, whatever failed before from the same
    address. An unknown or revoked token is counted against the address and refused
    with AuthenticationError; once the address is locked out, it is refused uncounted
    with CredentialsThrottled (the request that locks it out is flagged by axes and
    answered 429 too)."""
    try:
        return agent_token_authenticate(secret=secret)
    except TokenRejected as exc:
        if AxesProxyHandler.is_locked(request, TOKEN_CREDENTIALS):
            raise CredentialsThrottled() from None
        user_login_failed.send(sender=AgentBearer, credentials=TOKEN_CREDENTIALS, request=request)
        raise AuthenticationError(message=str(exc)) from None


def bearer_secret(request: HttpRequest) -> str | None:
    """The secret of ``Authorization: Bearer <secret>``; None without the header."""
    header = request.headers.get("Authorization")
    if not header:
        return None
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise AuthenticationError(message="The Authorization header must be 'Bearer <token>'.")
    return secret.strip()


class AgentBearer(HttpBearer):
    """Bearer token auth that also checks the token carries ``scope`` (None: the
    endpoint checks scopes itself, as the tools do per tool)."""

    def __init__(self, scope: str | None) -> None:
        self.scope = scope
        super().__init__()

    def __call__(self, request: HttpRequest) -> Any:
        secret = bearer_secret(request)
        if secret is None:
            return None  # no token: let the session try
        return self.authenticate(request, secret)

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        agent_token = token_authenticate(request, secret=token)
        if self.scope is not None and not agent_token.has_scope(self.scope):
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
any_scope_auth = [AgentBearer(None), DashboardSession()]
