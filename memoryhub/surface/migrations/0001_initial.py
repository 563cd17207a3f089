"""Role presets move from the project to the agent surface, their rows and permissions
with them."""

from django.db import migrations, models

from memoryhub.engine.db.model_moves import content_types_moved


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("memoryhub", "0003_role_preset_defaults"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='RolePreset',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.SlugField(max_length=100, unique=True)),
                        ('description', models.CharField(blank=True, default='', max_length=300)),
                        ('entries', models.JSONField(blank=True, default=list)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        'db_table': 'memoryhub_rolepreset',
                        'ordering': ['role'],
                    },
                ),
            ],
        ),
        migrations.AlterModelTable(name="rolepreset", table=None),
        content_types_moved([("memoryhub", "surface", "rolepreset")]),
    ]
