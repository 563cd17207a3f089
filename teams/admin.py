"""The Django admin for teams, their members, agent tokens and the audit trail.

A team is an auth Group and a membership is the user-to-group link, so the Groups field
of a user and the members of a team edit the same rows. Every admin change is written to
the audit trail as well. The rows of the other apps (facts, wiki pages, code) are not
registered: the admin would show staff rows the access rule hides from them.
"""

from collections.abc import Iterable

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import Count, Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from teams import services
from teams.models import AgentToken, AuditEvent, Membership
from teams.services import Actor

User = get_user_model()


class AuditedAdmin(admin.ModelAdmin):
    """Writes each addition, change and deletion made in the admin to the audit trail."""

    audit_target_type = ""

    def _audit(self, request: HttpRequest, verb: str, obj: Model, message: str) -> None:
        services.audit_log(
            actor=Actor(user=request.user),
            action=f"admin.{verb}",
            target_type=self.audit_target_type or obj._meta.model_name,
            target_id=obj.pk,
            details={"object": str(obj), "change": message},
        )

    def log_addition(self, request: HttpRequest, obj: Model, message: object) -> LogEntry:
        entry = super().log_addition(request, obj, message)
        self._audit(request, "add", obj, entry.get_change_message())
        return entry

    def log_change(self, request: HttpRequest, obj: Model, message: object) -> LogEntry:
        entry = super().log_change(request, obj, message)
        if message:  # saving an unchanged form is no change
            self._audit(request, "change", obj, entry.get_change_message())
        return entry

    def log_deletions(self, request: HttpRequest, queryset: Iterable[Model]) -> object:
        objects = list(queryset)
        for obj in objects:
            self._audit(request, "delete", obj, "Deleted.")
        return super().log_deletions(request, objects)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)
    autocomplete_fields = ("user",)
    verbose_name = "member"


admin.site.unregister(Group)


@admin.register(Group)
class TeamAdmin(AuditedAdmin, GroupAdmin):
    audit_target_type = "team"
    inlines = [MembershipInline]
    list_display = ("name", "member_count")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Group]:
        return super().get_queryset(request).annotate(member_count=Count("memberships"))

    @admin.display(description="members", ordering="member_count")
    def member_count(self, team: Group) -> int:
        return team.member_count


admin.site.unregister(User)


@admin.register(User)
class TeamUserAdmin(AuditedAdmin, UserAdmin):
    audit_target_type = "user"
    list_display = (*UserAdmin.list_display, "is_active")

    def save_related(
        self, request: HttpRequest, form: ModelForm, formsets: list, change: bool
    ) -> None:
        user = form.instance
        before = set(user.groups.all()) if change else set()
        super().save_related(request, form, formsets, change)
        after = set(user.groups.all())
        services.membership_record_links(
            actor=Actor(user=request.user),
            user=user,
            added=sorted(after - before, key=lambda team: team.name),
            removed=sorted(before - after, key=lambda team: team.name),
        )


@admin.register(AgentToken)
class AgentTokenAdmin(AuditedAdmin):
    """Tokens are created on the Agents page, where the secret is shown once; here staff
    see them (never the secret's hash) and revoke them."""

    audit_target_type = "agent_token"
    list_display = ("name", "user", "prefix", "scopes", "fleet", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix", "fleet")
    fields = (
        "name",
        "user",
        "prefix",
        "scopes",
        "fleet",
        "role",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[AgentToken]) -> None:
        actor = Actor(user=request.user)
        tokens = list(queryset.filter(revoked_at__isnull=True))
        for token in tokens:
            services.agent_token_revoke(actor=actor, token=token)
        self.message_user(request, f"{len(tokens)} token(s) revoked.")


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The trail is read-only, in the admin as everywhere."""

    list_display = ("created_at", "actor_label", "action", "target_type", "target_id")
    list_filter = ("action",)
    search_fields = ("actor_label", "action", "target_id")
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
