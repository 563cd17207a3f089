from django.db import migrations


def create_raw_table(apps, schema_editor):
    from facts.search import FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in FACT_VECTORS.create_sql():
        schema_editor.execute(sql)
    # Copy vectors stored before the plain table existed.
    schema_editor.execute(
        f"INSERT OR IGNORE INTO {FACT_VECTORS.raw_table}(id, embedding) "
        f"SELECT rowid, embedding FROM {FACT_VECTORS.table}"
    )


def drop_raw_table(apps, schema_editor):
    from facts.search import FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(f"DROP TABLE IF EXISTS {FACT_VECTORS.raw_table}")


class Migration(migrations.Migration):
    dependencies = [("facts", "0002_search_indexes")]
    operations = [migrations.RunPython(create_raw_table, drop_raw_table)]
