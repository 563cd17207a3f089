from django.db import migrations


def create_raw_table(apps, schema_editor):
    from facts.search import FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in FACT_VECTORS.create_sql():
        schema_editor.execute(sql)
    # Copy vectors stored before the plain table existed.
    schema_editor.execute(FACT_VECTORS.raw_backfill_sql())


def drop_raw_table(apps, schema_editor):
    from facts.search import FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(FACT_VECTORS.drop_sql()[-1])


class Migration(migrations.Migration):
    dependencies = [("facts", "0002_search_indexes")]
    operations = [migrations.RunPython(create_raw_table, drop_raw_table)]
