"""Near-duplicate keys are rebuilt: same-subject keys no longer pair a tag with its own
words (see ``facts.dedupe``)."""

from importlib import import_module

from django.db import migrations

key_existing_facts = import_module("facts.migrations.0004_near_duplicate_keys").key_existing_facts


def rekey(apps, schema_editor):
    apps.get_model("facts", "FactKey").objects.all().delete()
    key_existing_facts(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("facts", "0005_vector_change_log")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
