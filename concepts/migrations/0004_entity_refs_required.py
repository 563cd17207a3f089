"""Every entity has its ref (filled by the previous migration, in its own transaction):
required and unique from here on."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("concepts", "0003_entity_refs")]

    operations = [
        migrations.AlterField(
            model_name="entity",
            name="ref",
            field=models.CharField(max_length=26, unique=True),
        ),
    ]
