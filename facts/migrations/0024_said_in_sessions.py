"""Facts count the sessions a statement was said in (a repeat said in three is a pattern)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('facts', '0023_origin_imported'),
    ]

    operations = [
        migrations.AddField(
            model_name='fact',
            name='said_in_sessions',
            field=models.JSONField(blank=True, default=list),
        ),
    ]
