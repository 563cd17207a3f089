"""Memberships become Django's own user-to-group links.

Until now a membership lived in ``teams_membership`` while the admin's Groups field
wrote ``auth_user_groups``, so the two disagreed. This adds ``role`` and ``created_at``
to ``auth_user_groups``, moves every membership there (a link the admin made already
becomes a member; a membership's role wins), and drops the old table.
"""

import django.db.models.deletion
import django.db.models.functions.datetime
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

ROLE_CHOICES = [("member", "Member"), ("admin", "Admin")]


def memberships_to_links(apps, schema_editor):
    db = schema_editor.connection.alias
    legacy = apps.get_model("teams", "LegacyMembership")
    link = apps.get_model("teams", "Membership")
    existing = {
        (row.user_id, row.team_id): row for row in link.objects.using(db).all()
    }
    new = []
    for old in legacy.objects.using(db).order_by("pk"):
        found = existing.get((old.user_id, old.team_id))
        if found is None:
            new.append(
                link(
                    user_id=old.user_id,
                    team_id=old.team_id,
                    role=old.role,
                    created_at=old.created_at,
                )
            )
        else:
            found.role, found.created_at = old.role, old.created_at
            found.save(using=db, update_fields=["role", "created_at"])
    link.objects.using(db).bulk_create(new)


def links_to_memberships(apps, schema_editor):
    db = schema_editor.connection.alias
    legacy = apps.get_model("teams", "LegacyMembership")
    link = apps.get_model("teams", "Membership")
    legacy.objects.using(db).bulk_create(
        legacy(user_id=row.user_id, team_id=row.team_id, role=row.role, created_at=row.created_at)
        for row in link.objects.using(db).order_by("pk")
    )


class Migration(migrations.Migration):

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("teams", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The old model keeps its table under another name until its rows are moved.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameModel("Membership", "LegacyMembership"),
                migrations.AlterModelTable("LegacyMembership", "teams_membership"),
                migrations.AlterField(
                    model_name="legacymembership",
                    name="user",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="legacymembership",
                    name="team",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="auth.group",
                    ),
                ),
            ],
            database_operations=[],
        ),
        # The new model describes auth_user_groups as the auth app created it.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Membership",
                    fields=[
                        ("id", models.AutoField(primary_key=True, serialize=False)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="memberships",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "team",
                            models.ForeignKey(
                                db_column="group_id",
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="memberships",
                                to="auth.group",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "auth_user_groups",
                        "ordering": ["team__name", "user__username"],
                        "unique_together": {("user", "team")},
                    },
                ),
            ],
            database_operations=[],
        ),
        # Real columns on auth_user_groups; existing links become plain members.
        migrations.AddField(
            model_name="membership",
            name="role",
            field=models.CharField(
                choices=ROLE_CHOICES, db_default="member", default="member", max_length=16
            ),
        ),
        migrations.AddField(
            model_name="membership",
            name="created_at",
            field=models.DateTimeField(
                db_default=django.db.models.functions.datetime.Now(),
                default=django.utils.timezone.now,
            ),
        ),
        migrations.RunPython(memberships_to_links, links_to_memberships),
        migrations.DeleteModel(name="LegacyMembership"),
        # From here on the auth app owns the table's shape (see Membership.Meta).
        migrations.AlterModelOptions(
            name="membership",
            options={"managed": False, "ordering": ["team__name", "user__username"]},
        ),
    ]
