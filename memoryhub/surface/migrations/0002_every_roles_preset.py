"""A preset for every role of AURORA's table that reads anything; staff may change them
in the admin, and an existing preset of the same role is kept as it is."""

from django.db import migrations

PRESETS = {
    "curator": (
        "The organisation's deduplication signatures.",
        [{"tier": "org", "include": ["dedup-signature"]}],
    ),
    "analyst": (
        "The organisation's scoring priors for similar designs, and the project's design.",
        [{"tier": "org", "include": ["scoring-prior"]}, {"tier": "project", "include": ["pdd"]}],
    ),
    "interviewer": (
        "The organisation's interview questions that worked.",
        [{"tier": "org", "include": ["interview-question"]}],
    ),
    "cartographer": (
        "The organisation's vendor quirks and the project's product design.",
        [{"tier": "org", "include": ["vendor-quirk"]}, {"tier": "project", "include": ["pdd"]}],
    ),
    "forger": (
        "Learnings of the skill the role names (forger-rust: rust), the project's design "
        "and decisions.",
        [{"tier": "skill", "skill": "*"}, {"tier": "project", "include": ["pdd", "adr"]}],
    ),
    "tester": (
        "The organisation's test patterns and the project's product design.",
        [{"tier": "org", "include": ["test-pattern"]}, {"tier": "project", "include": ["pdd"]}],
    ),
    "surgeon": (
        "The project's triage notes and prior resolutions of fingerprinted failures.",
        [{"tier": "project", "include": ["triage"]}, {"tier": "skill", "fingerprint": "*"}],
    ),
    "auditor": (
        "The organisation's governance rules and the project's deploy history.",
        [{"tier": "org", "include": ["governance"]}, {"tier": "project", "include": ["deploy"]}],
    ),
    "conductor": (
        "Policy, budget and worktree state, across fleets (audited).",
        [
            {"tier": "org", "include": ["policy", "budget", "worktree"], "scope": "cross"},
            {"tier": "project", "include": ["worktree"], "scope": "cross"},
        ],
    ),
}


def seed(apps, schema_editor):
    RolePreset = apps.get_model("surface", "RolePreset")
    for role, (description, entries) in PRESETS.items():
        RolePreset.objects.get_or_create(
            role=role, defaults={"description": description, "entries": entries}
        )


def unseed(apps, schema_editor):
    apps.get_model("surface", "RolePreset").objects.filter(role__in=list(PRESETS)).delete()


class Migration(migrations.Migration):
    dependencies = [("surface", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
