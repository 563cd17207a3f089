from django.db import migrations

# What each role recalls by default (staff change them in the admin).
DEFAULTS = {
    "scout": ("Nothing by default: scouts look for themselves.", []),
    "sentry": ("Nothing by default.", []),
    "concierge": ("Nothing by default.", []),
    "architect": (
        "The organisation's patterns that worked and the project's product design.",
        [{"tier": "org", "include": ["pattern"]}, {"tier": "project", "include": ["pdd"]}],
    ),
    "reviewer": (
        "The organisation's anti-patterns and the project's decision records.",
        [{"tier": "org", "include": ["anti-pattern"]}, {"tier": "project", "include": ["adr"]}],
    ),
    "diagnostician": (
        "Skill learnings with a fingerprint cluster and known environment issues.",
        [{"tier": "skill", "fingerprint": "*"}, {"tier": "org", "include": ["environment"]}],
    ),
    "strategist": (
        "The organisation's notes and 90 days of skill learnings across fleets.",
        [{"tier": "org"}, {"tier": "skill", "since": "90d", "scope": "cross"}],
    ),
}


def seed(apps, schema_editor):
    RolePreset = apps.get_model("memoryhub", "RolePreset")
    for role, (description, entries) in DEFAULTS.items():
        RolePreset.objects.get_or_create(
            role=role, defaults={"description": description, "entries": entries}
        )


def unseed(apps, schema_editor):
    apps.get_model("memoryhub", "RolePreset").objects.filter(role__in=list(DEFAULTS)).delete()


class Migration(migrations.Migration):
    dependencies = [("memoryhub", "0002_role_presets")]

    operations = [migrations.RunPython(seed, unseed)]
