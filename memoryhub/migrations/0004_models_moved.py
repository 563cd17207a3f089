"""The jobs moved to the engine and the role presets to the agent surface (their
migrations rename the tables): the project keeps no rows of its own."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("memoryhub", "0003_role_preset_defaults"),
        ("engine", "0001_initial"),
        ("surface", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(
                    model_name='job',
                    name='job_owner_time',
                ),
                migrations.DeleteModel(
                    name='RolePreset',
                ),
                migrations.DeleteModel(
                    name='Job',
                ),
            ],
        ),
    ]
