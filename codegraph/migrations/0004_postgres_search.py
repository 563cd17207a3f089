from django.db import migrations


def create_indexes(apps, schema_editor):
    """The search tables on PostgreSQL (SQLite made its own in earlier migrations)."""
    from codegraph.search import SYMBOL_FTS

    if schema_editor.connection.vendor != "postgresql":
        return
    for index in (SYMBOL_FTS,):
        for sql in index.create_statements():
            schema_editor.execute(sql)


def drop_indexes(apps, schema_editor):
    from codegraph.search import SYMBOL_FTS

    if schema_editor.connection.vendor != "postgresql":
        return
    for index in (SYMBOL_FTS,):
        for sql in index.drop_statements():
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("codegraph", "0003_scan_heartbeat")]
    operations = [migrations.RunPython(create_indexes, drop_indexes)]
