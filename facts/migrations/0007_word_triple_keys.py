"""Near-duplicate keys are rebuilt: facts of three words or more are keyed by word
triples instead of word pairs (see ``facts.dedupe``)."""

from importlib import import_module

from django.db import migrations

rekey = import_module("facts.migrations.0006_subject_keys_without_tag_words").rekey


class Migration(migrations.Migration):
    dependencies = [("facts", "0006_subject_keys_without_tag_words")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
