from django.db import migrations


def create_indexes(apps, schema_editor):
    """The search tables on PostgreSQL (SQLite made its own in earlier migrations)."""
    from facts.search import FACT_FTS, FACT_VECTORS

    if schema_editor.connection.vendor != "postgresql":
        return
    for index in (FACT_FTS, FACT_VECTORS):
        for sql in index.create_statements():
            schema_editor.execute(sql)


def drop_indexes(apps, schema_editor):
    from facts.search import FACT_FTS, FACT_VECTORS

    if schema_editor.connection.vendor != "postgresql":
        return
    for index in (FACT_FTS, FACT_VECTORS):
        for sql in index.drop_statements():
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("facts", "0017_recall_tuning")]
    operations = [migrations.RunPython(create_indexes, drop_indexes)]
