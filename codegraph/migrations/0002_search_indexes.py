from django.db import migrations


def create_indexes(apps, schema_editor):
    from codegraph.search import SYMBOL_FTS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(SYMBOL_FTS.create_sql())


def drop_indexes(apps, schema_editor):
    from codegraph.search import SYMBOL_FTS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(SYMBOL_FTS.drop_sql())


class Migration(migrations.Migration):
    dependencies = [("codegraph", "0001_initial")]
    operations = [migrations.RunPython(create_indexes, drop_indexes)]
