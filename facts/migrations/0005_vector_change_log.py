from django.db import migrations


def create_change_log(apps, schema_editor):
    from facts.search import FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in FACT_VECTORS.create_sql():  # IF NOT EXISTS: only the change log is new
        schema_editor.execute(sql)


def drop_change_log(apps, schema_editor):
    from facts.search import FACT_VECTORS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(FACT_VECTORS.drop_sql()[-1])


class Migration(migrations.Migration):
    dependencies = [("facts", "0004_near_duplicate_keys")]
    operations = [migrations.RunPython(create_change_log, drop_change_log)]
