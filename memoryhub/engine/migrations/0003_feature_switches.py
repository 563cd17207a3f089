"""Settings -> Memory may switch CodeGraph and the wiki off (both on, as before)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('engine', '0002_job_heartbeat'),
    ]

    operations = [
        migrations.AddField(
            model_name='memoryconfig',
            name='codegraph_enabled',
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name='memoryconfig',
            name='wiki_enabled',
            field=models.BooleanField(default=True),
        ),
    ]
