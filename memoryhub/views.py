from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from teams.selectors import agent_token_list, memberships_of
from teams.services import memory_settings_get


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
