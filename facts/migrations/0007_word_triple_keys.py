"""Formerly re-keyed stored facts; keys are now rebuilt by ``facts.dedupe.fact_keys_rebuild``
whenever ``KEYS_VERSION`` changes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("facts", "0006_subject_keys_without_tag_words")]

    operations = []
