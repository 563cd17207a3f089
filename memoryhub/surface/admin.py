"""The Django admin for role presets: staff decide what each agent role recalls. Every
change is written to the audit trail."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memoryhub.surface.models import RolePreset
from teams.admin import AuditedAdmin

ENTRIES_HELP = (
    'A list of reads, e.g. [{"tier": "org", "include": ["pattern"]}, '
    '{"tier": "skill", "since": "90d", "scope": "cross"}]. Keys: tier (project, org, '
    "skill), include (page kinds), skill, fingerprint (a cluster, or * for any), since "
    "(7d, 12h, 2w), scope (own, or cross for every fleet). Project reads apply when the "
    "recall names a project."
)


@admin.register(RolePreset)
class RolePresetAdmin(AuditedAdmin):
    audit_target_type = "role_preset"
    list_display = ("role", "description", "updated_at")
    search_fields = ("role", "description")

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.base_fields["entries"].help_text = ENTRIES_HELP
        return form
