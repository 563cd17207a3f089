from django.urls import path

from teams import views

urlpatterns = [
    path("teams/", views.team_list_view, name="teams"),
    path("teams/new/", views.team_create_view, name="team-create"),
    path("teams/<int:team_id>/", views.team_view, name="team"),
    path("teams/<int:team_id>/delete/", views.team_delete_view, name="team-delete"),
    path("teams/<int:team_id>/rename/", views.team_rename_view, name="team-rename"),
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
    path("teams/people/new/", views.user_invite_view, name="user-invite"),
    path(
        "teams/people/<int:user_id>/invite/", views.user_invite_link_view, name="user-invite-link"
    ),
    path("teams/people/<int:user_id>/active/", views.user_active_view, name="user-active"),
    path(
        "teams/people/<int:user_id>/password/",
        views.user_password_link_view,
        name="user-password-link",
    ),
    path("invite/<uidb64>/<token>/", views.InviteAcceptView.as_view(), name="invite-accept"),
    path("agents/", views.agents_view, name="agents"),
    path("agents/<int:token_id>/revoke/", views.agent_revoke_view, name="agent-revoke"),
    path("agents/<int:token_id>/tools/", views.agent_tools_view, name="agent-tools"),
    path("audit/", views.audit_view, name="audit"),
    path("settings/", views.settings_view, name="settings"),
]
