from django.db import migrations


def create_indexes(apps, schema_editor):
    from facts.search import FACT_FTS, FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(FACT_FTS.create_sql())
    for sql in FACT_VECTORS.create_sql():
        schema_editor.execute(sql)


def drop_indexes(apps, schema_editor):
    from facts.search import FACT_FTS, FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(FACT_FTS.drop_sql())
    for sql in FACT_VECTORS.drop_sql():
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("facts", "0001_initial")]
    operations = [migrations.RunPython(create_indexes, drop_indexes)]
