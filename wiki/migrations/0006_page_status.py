"""Wiki pages carry a status: a decision record whose topic was forgotten is abandoned."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wiki', '0005_page_fleet'),
    ]

    operations = [
        migrations.AddField(
            model_name='page',
            name='abandoned_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='page',
            name='status',
            field=models.CharField(choices=[('active', 'Active'), ('abandoned', 'Abandoned')], default='active', max_length=16),
        ),
    ]
