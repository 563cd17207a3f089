"""PostgreSQL keeps a fact's near-duplicate keys in one row (``FactKeyList``), found
through a GIN index on the array, instead of a row per key: a fact's twenty-odd keys
then cost one heap row and the GIN entries, where rows of their own cost a heap row and
three B-tree entries each.

The index is built without a pending list (``fastupdate = off``): lookups run before
every write and would otherwise scan the whole list each time. ``facts_keys_sharing``
looks keys up through the index whatever the planner estimates: it has no statistics
for keys that each occur once, and its default guess makes a scan of the whole table
look cheaper. Keys already stored one per row move into the lists.

Nothing changes on SQLite beyond the (unused) table.
"""

import django.db.models.deletion
from django.db import migrations, models

import facts.models


def to_lists(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    lists = apps.get_model("facts", "FactKeyList")._meta.db_table
    rows = apps.get_model("facts", "FactKey")._meta.db_table
    schema_editor.execute(
        f"CREATE INDEX factkeylist_keys ON {lists} USING gin (keys) WITH (fastupdate = off)"
    )
    schema_editor.execute(
        "CREATE FUNCTION facts_keys_sharing(wanted bigint[]) "
        "RETURNS TABLE (fact_id bigint, keys bigint[]) LANGUAGE sql STABLE "
        "SET enable_seqscan = off "
        f"AS $$ SELECT fact_id, keys FROM {lists} WHERE keys && wanted $$"
    )
    schema_editor.execute(
        f"INSERT INTO {lists} (fact_id, keys) "
        f"SELECT fact_id, array_agg(key ORDER BY key) FROM {rows} GROUP BY fact_id"
    )
    schema_editor.execute(f"DELETE FROM {rows}")


def to_rows(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    lists = apps.get_model("facts", "FactKeyList")._meta.db_table
    rows = apps.get_model("facts", "FactKey")._meta.db_table
    schema_editor.execute(
        f"INSERT INTO {rows} (key, fact_id) SELECT unnest(keys), fact_id FROM {lists}"
    )
    schema_editor.execute("DROP FUNCTION IF EXISTS facts_keys_sharing(bigint[])")


class Migration(migrations.Migration):
    dependencies = [("facts", "0019_postgres_fact_storage")]

    operations = [
        migrations.CreateModel(
            name="FactKeyList",
            fields=[
                (
                    "fact",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="facts.fact",
                    ),
                ),
                ("keys", facts.models.KeyArrayField()),
            ],
        ),
        migrations.RunPython(to_lists, to_rows),
    ]
