"""Scans count the runs of each request, so one whose worker keeps dying is given up."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("codegraph", "0004_postgres_search"),
    ]

    operations = [
        migrations.AddField(
            model_name="codeproject",
            name="scan_attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
    ]
