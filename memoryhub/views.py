from django.contrib.auth.decorators import login_required
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import Resolver404

from memoryhub.errors import ApplicationError, InvalidInput
from memoryhub.forget import memory_forget, memory_forget_preview
from memoryhub.refs import id_of
from teams.selectors import agent_token_list, memberships_of
from teams.services import Actor, memory_settings_get


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "home.html",
        {
            "memberships": memberships_of(user=request.user),
            "prefs": memory_settings_get(user=request.user),
            "active_tokens": agent_token_list(user=request.user)
            .filter(revoked_at__isnull=True)
            .count(),
        },
    )


# --- Error pages --------------------------------------------------------------------------
# Django calls these (see handler400/403/404 in urls.py) with the exception that refused
# the request. Each answers inside the dashboard layout with the reason, or with just
# the card when HTMX asked, so it lands where the action's result would have.


def _error_page(request: HttpRequest, *, status: int, title: str, reason: str) -> HttpResponse:
    partial = bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request
    template = "error.html#error-card" if partial else "error.html"
    return render(
        request, template, {"status": status, "title": title, "reason": reason}, status=status
    )


def _message_of(exception: Exception | None) -> str:
    """The message a view gave the exception, if it gave one."""
    args = getattr(exception, "args", ())
    return args[0] if args and isinstance(args[0], str) else ""


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    # A malformed or oversized request says nothing more about the server than that.
    reason = "" if isinstance(exception, SuspiciousOperation) else _message_of(exception)
    return _error_page(
        request,
        status=400,
        title="Bad request",
        reason=reason or "The request could not be read: it was malformed or too large.",
    )


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(
        request,
        status=403,
        title="Not allowed",
        reason=_message_of(exception) or "You are not allowed to do this.",
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    reason = "" if isinstance(exception, Resolver404) else _message_of(exception)
    return _error_page(
        request,
        status=404,
        title="Not found",
        reason=reason or f"There is no page at {request.path}.",
    )


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return _error_page(
        request,
        status=403,
        title="Form expired",
        reason="This form could not be checked (it expired, or cookies are blocked): "
        "go back, reload the page and send it again.",
    )


# --- Forget a topic -----------------------------------------------------------------------


@login_required
def forget_view(request: HttpRequest) -> HttpResponse:
    """Forget topic: GET previews the facts about a topic (``?topic=``), each with why it
    matched; POST forgets the ones ticked, with all that derives from them, and shows
    the receipt."""
    actor = Actor.from_request(request)
    topic = (request.POST.get("topic") or request.GET.get("topic") or "").strip()
    context: dict = {"topic": topic, "preview": None, "receipt": None, "error": ""}
    status = 200
    try:
        if request.method == "POST":
            ids = [id_of(value) for value in request.POST.getlist("ids")]
            if not ids or None in ids:
                raise InvalidInput("Tick the facts to forget.")
            context["receipt"] = memory_forget(actor=actor, topic=topic, ids=ids)
        elif topic:
            context["preview"] = memory_forget_preview(actor=actor, topic=topic)
    except ApplicationError as exc:
        context["error"], status = exc.message, exc.status_code
    partial = bool(getattr(request, "htmx", False)) and not request.htmx.history_restore_request
    template = "forget.html#forget-result" if partial else "forget.html"
    return render(request, template, context, status=status)
