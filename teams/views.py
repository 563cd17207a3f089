"""Dashboard pages: teams (partitions), agents (tokens), the audit log, settings."""

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.views import PasswordResetConfirmView
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.http import require_POST

from memoryhub.engine.addresses import chat_base_url, server_url
from memoryhub.engine.errors import ApplicationError
from memoryhub.engine.htmx import htmx_partial, htmx_render
from teams import selectors, services
from teams.audit_text import audit_links, audit_sentence
from teams.forms import (
    AgentTokenForm,
    AgentTokenToolsForm,
    AuditFilterForm,
    ChatPreviewForm,
    MemberAddForm,
    MemberRoleForm,
    MemorySettingsForm,
    TeamForm,
    UserInviteForm,
    tool_choices,
)
from teams.models import AgentToken, Membership
from teams.services import Actor


def _team_or_404(request: HttpRequest, team_id: int):
    team = selectors.team_get_for(user=request.user, team_id=team_id)
    if team is None:
        raise Http404("No such team.")
    return team


def _teams_context(request: HttpRequest, **extra: object) -> dict:
    context: dict = {"teams": selectors.team_list_for(user=request.user), "form": TeamForm()}
    if request.user.is_staff:
        context["people"] = selectors.user_list_with_teams()
        context["invite_form"] = UserInviteForm()
    return {**context, **extra}


@login_required
def team_list_view(request: HttpRequest) -> HttpResponse:
    # A link just made (an invite, a password reset) is shown once: reloading the page
    # neither shows it again nor sends the form again.
    invited = request.session.pop(INVITED_KEY, None)
    return render(request, "teams/teams.html", _teams_context(request, invited=invited))


@login_required
@require_POST
def team_create_view(request: HttpRequest) -> HttpResponse:
    form = TeamForm(request.POST)
    status = 400
    if form.is_valid():
        try:
            team = services.team_create(
                actor=Actor.from_request(request), name=form.cleaned_data["name"]
            )
        except ApplicationError as exc:
            form.add_error("name", exc.message)
            status = exc.status_code
        else:
            messages.success(request, f"Team {team.name} created.")
            return redirect("team", team_id=team.pk)
    return render(request, "teams/teams.html", _teams_context(request, form=form), status=status)


def _person_or_404(request: HttpRequest, user_id: int):
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can manage people.")
    return get_object_or_404(get_user_model(), pk=user_id)


INVITED_KEY = "teams-invited"


def _show_link(request: HttpRequest, user, link: str, *, reset: bool = False) -> HttpResponse:
    """Back to the teams page (after a POST: a reload sends nothing again), which shows
    the link once."""
    request.session[INVITED_KEY] = {
        "username": user.get_username(),
        "link": request.build_absolute_uri(link),
        "days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86_400),
        "reset": reset,
    }
    return redirect(f"{reverse('teams')}#invite")


@login_required
@require_POST
def user_invite_view(request: HttpRequest) -> HttpResponse:
    form = UserInviteForm(request.POST)
    if not form.is_valid():
        return render(
            request, "teams/teams.html", _teams_context(request, invite_form=form), status=400
        )
    actor = Actor.from_request(request)
    try:
        user = services.user_invite(actor=actor, **form.cleaned_data)
        link = services.user_invite_link(actor=actor, user=user)
    except ApplicationError as exc:
        form.add_error(None, exc.message)
        return render(
            request,
            "teams/teams.html",
            _teams_context(request, invite_form=form),
            status=exc.status_code,
        )
    team = form.cleaned_data["team"]
    where = f" to {team.name} as {form.cleaned_data['role']}" if team else ""
    messages.success(
        request, f"{user.get_username()} is invited{where}: send them the link to set a password."
    )
    return _show_link(request, user, link)


@login_required
@require_POST
def user_invite_link_view(request: HttpRequest, user_id: int) -> HttpResponse:
    return _link_view(request, user_id, reset=False)


@login_required
@require_POST
def user_password_link_view(request: HttpRequest, user_id: int) -> HttpResponse:
    return _link_view(request, user_id, reset=True)


def _link_view(request: HttpRequest, user_id: int, *, reset: bool) -> HttpResponse:
    """A new invite link, or a password reset link, for a person (staff only)."""
    user = _person_or_404(request, user_id)
    make = services.user_password_link if reset else services.user_invite_link
    try:
        link = make(actor=Actor.from_request(request), user=user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("teams")
    what = "password reset link" if reset else "new invite link"
    messages.success(request, f"A {what} for {user.get_username()} is ready.")
    return _show_link(request, user, link, reset=reset)


@login_required
@require_POST
def user_active_view(request: HttpRequest, user_id: int) -> HttpResponse:
    user = _person_or_404(request, user_id)
    active = request.POST.get("active") == "1"
    try:
        services.user_set_active(actor=Actor.from_request(request), user=user, active=active)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        done = "reactivated" if active else "deactivated: they can no longer log in"
        messages.success(request, f"{user.get_username()} is {done}.")
    return redirect("teams")


class InviteAcceptView(PasswordResetConfirmView):
    """An invited person sets their password through the link staff sent them."""

    template_name = "registration/invite_accept.html"
    success_url = reverse_lazy("login")

    def get_context_data(self, **kwargs: object) -> dict:
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        user = getattr(form, "user", None)
        context["resetting"] = bool(user is not None and user.has_usable_password())
        return context

    @transaction.atomic
    def form_valid(self, form: SetPasswordForm) -> HttpResponse:
        resetting = form.user.has_usable_password()
        response = super().form_valid(form)
        if not resetting:
            services.user_invite_accept(user=form.user)
        messages.success(
            self.request, f"Your password is set, {form.user.get_username()}: log in below."
        )
        return response


def _team_context(request: HttpRequest, team, **extra: object) -> dict:
    can_manage = services.can_manage_team(user=request.user, team=team)
    return {
        "team": team,
        "members": selectors.membership_list(team=team),
        "can_manage": can_manage,
        "add_form": MemberAddForm(team=team) if can_manage else None,
        **extra,
    }


@login_required
@require_POST
def team_rename_view(request: HttpRequest, team_id: int) -> HttpResponse:
    team = _team_or_404(request, team_id)
    form = TeamForm(request.POST)
    if form.is_valid():
        try:
            services.team_rename(
                actor=Actor.from_request(request), team=team, name=form.cleaned_data["name"]
            )
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"The team is now called {team.name}.")
    else:
        messages.error(request, " ".join(form.errors.get("name", ["Name the team."])))
    return redirect("team", team_id=team.pk)


@login_required
def team_view(request: HttpRequest, team_id: int) -> HttpResponse:
    team = _team_or_404(request, team_id)
    return render(request, "teams/team.html", _team_context(request, team))


@login_required
@require_POST
def team_delete_view(request: HttpRequest, team_id: int) -> HttpResponse:
    team = _team_or_404(request, team_id)
    try:
        services.team_delete(actor=Actor.from_request(request), team=team)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("team", team_id=team_id)
    messages.success(request, f"Team {team.name} deleted.")
    return redirect("teams")


def _render_members(request: HttpRequest, team, status: int = 200, **extra: object):
    context = _team_context(request, team, **extra)
    return htmx_render(request, "teams/team.html", context, partial="members", status=status)


@login_required
@require_POST
def member_add_view(request: HttpRequest, team_id: int) -> HttpResponse:
    team = _team_or_404(request, team_id)
    form = MemberAddForm(request.POST, team=team)
    if not form.is_valid():
        return _render_members(request, team, status=400, add_error=form.errors.as_text())
    try:
        services.membership_add(
            actor=Actor.from_request(request),
            team=team,
            user=form.cleaned_data["user"],
            role=form.cleaned_data["role"],
        )
    except ApplicationError as exc:
        return _render_members(request, team, status=exc.status_code, add_error=exc.message)
    who = form.cleaned_data["user"].get_username()
    return _render_members(
        request, team, notice=f"{who} added to {team.name} as {form.cleaned_data['role']}."
    )


@login_required
@require_POST
def member_role_view(request: HttpRequest, team_id: int, membership_id: int) -> HttpResponse:
    team = _team_or_404(request, team_id)
    membership = get_object_or_404(Membership, pk=membership_id, team=team)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        return _render_members(request, team, status=400, add_error=form.errors.as_text())
    try:
        membership = services.membership_set_role(
            actor=Actor.from_request(request), membership=membership, role=form.cleaned_data["role"]
        )
    except ApplicationError as exc:
        return _render_members(request, team, status=exc.status_code, add_error=exc.message)
    who = membership.user.get_username()
    return _render_members(request, team, notice=f"{who} is now {membership.role} of {team.name}.")


@login_required
@require_POST
def member_remove_view(request: HttpRequest, team_id: int, membership_id: int) -> HttpResponse:
    team = _team_or_404(request, team_id)
    membership = get_object_or_404(Membership, pk=membership_id, team=team)
    try:
        services.membership_remove(actor=Actor.from_request(request), membership=membership)
    except ApplicationError as exc:
        return _render_members(request, team, status=exc.status_code, add_error=exc.message)
    who = membership.user.get_username()
    return _render_members(request, team, notice=f"{who} removed from {team.name}.")


def _new_token(request: HttpRequest, token: AgentToken, secret: str) -> dict:
    """A token just created, shown once: its secret, and ready-made settings for an
    agent and a first request, addressed to this server as the browser reached it."""
    return {
        "token": token,
        "secret": secret,
        "server_url": server_url(request),
        "chat_url": chat_base_url(request),
    }


@login_required
def agents_view(request: HttpRequest) -> HttpResponse:
    """The user's agent tokens; POST creates one."""
    form = AgentTokenForm(request.POST or None, user=request.user)
    created = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                token, secret = services.agent_token_create(
                    actor=Actor.from_request(request), **form.cleaned_data
                )
            except ApplicationError as exc:
                form.add_error("name", exc.message)
                status = exc.status_code
            else:
                created = _new_token(request, token, secret)
                form = AgentTokenForm(user=request.user)
        else:
            status = 400
    context = {
        "tokens": selectors.agent_token_list(user=request.user),
        "form": form,
        "created": created,
        "tool_names": [name for name, _ in tool_choices()],
        "chat_url": chat_base_url(request),
        "preview_form": ChatPreviewForm(user=request.user),
    }
    return htmx_render(request, "teams/agents.html", context, partial="agents-panel", status=status)


@login_required
@require_POST
def agent_tools_view(request: HttpRequest, token_id: int) -> HttpResponse:
    """Limit a token to the checked tools (none checked: every tool)."""
    token = get_object_or_404(AgentToken, pk=token_id, user=request.user)
    form = AgentTokenToolsForm(request.POST)
    status, error = 200, None
    if form.is_valid():
        try:
            token = services.agent_token_set_tools(
                actor=Actor.from_request(request), token=token, tools=form.cleaned_data["tools"]
            )
        except ApplicationError as exc:
            status, error = exc.status_code, exc.message
    else:
        status, error = 400, " ".join(form.errors.get("tools", ["Unknown tool."]))
    if htmx_partial(request):
        context = {
            "token": token,
            "tool_names": [name for name, _ in tool_choices()],
            "tools_error": error,
        }
        return htmx_render(request, "teams/agents.html#token-row", context, status=status)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Tools of {token.name} saved.")
    return redirect("agents")


@login_required
@require_POST
def agent_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(AgentToken, pk=token_id, user=request.user)
    token = services.agent_token_revoke(actor=Actor.from_request(request), token=token)
    if htmx_partial(request):
        return htmx_render(request, "teams/agents.html#token-row", {"token": token})
    messages.success(request, f"Token {token.name} revoked.")
    return redirect("agents")


@login_required
def audit_view(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_valid() else {}
    events = selectors.audit_event_list(
        viewer=request.user,
        actor=filters.get("actor") or "",
        action=filters.get("action") or "",
        date_from=filters.get("date_from"),
        date_to=filters.get("date_to"),
    )
    page = Paginator(events, settings.AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    links = audit_links(page.object_list, viewer=request.user)
    context = {
        "form": form,
        "page": page,
        "rows": [
            {
                "event": event,
                "sentence": audit_sentence(event, links),
                "details": json.dumps(event.details, indent=1, ensure_ascii=False, default=str),
            }
            for event in page.object_list
        ],
        "actions": selectors.audit_action_names(viewer=request.user),
        "query": query.urlencode(),
    }
    return htmx_render(request, "teams/audit.html", context, partial="audit-results")


@login_required
def settings_view(request: HttpRequest) -> HttpResponse:
    prefs = services.memory_settings_get(user=request.user)
    initial = {"active_team": prefs.active_team, "default_visibility": prefs.default_visibility}
    form = MemorySettingsForm(request.POST or None, user=request.user, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            team = form.cleaned_data["active_team"]
            try:
                services.memory_settings_update(
                    actor=Actor.from_request(request),
                    active_team=team.pk if team else None,
                    default_visibility=form.cleaned_data["default_visibility"],
                )
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.status_code
            else:
                messages.success(request, "Your memory settings are saved.")
                return redirect("settings")
        else:
            status = 400
    return render(
        request,
        "teams/settings.html",
        {"form": form, "max_bytes": settings.MEMORYHUB_IMPORT_MAX_BYTES},
        status=status,
    )
