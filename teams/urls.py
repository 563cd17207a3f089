from django.urls import path

from teams import views

urlpatterns = [
    path("teams/", views.teams_page, name="teams"),
    path("teams/new/", views.team_create_view, name="team-create"),
    path("teams/<int:team_id>/", views.team_page, name="team"),
    path("teams/<int:team_id>/delete/", views.team_delete_view, name="team-delete"),
    path("teams/<int:team_id>/members/", views.member_add_view, name="member-add"),
    path(
        "teams/<int:team_id>/members/<int:membership_id>/role/",
        views.member_role_view,
        name="member-role",
    ),
    path(
        "teams/<int:team_id>/members/<int:membership_id>/remove/",
        views.member_remove_view,
        name="member-remove",
    ),
    path("agents/", views.agents_page, name="agents"),
    path("agents/<int:token_id>/revoke/", views.agent_revoke_view, name="agent-revoke"),
    path("audit/", views.audit_page, name="audit"),
    path("settings/", views.settings_page, name="settings"),
]
