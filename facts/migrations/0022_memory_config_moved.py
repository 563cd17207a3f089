"""The instance settings moved to the engine (its migration renames the table)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("facts", "0021_fact_keys_matching"),
        ("engine", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='MemoryConfig',
                ),
            ],
        ),
    ]
