from django.db import migrations


def create_index(apps, schema_editor):
    from wiki.search import PAGE_FTS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(PAGE_FTS.create_sql())


def drop_index(apps, schema_editor):
    from wiki.search import PAGE_FTS

    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(PAGE_FTS.drop_sql())


class Migration(migrations.Migration):
    dependencies = [("wiki", "0001_initial")]
    operations = [migrations.RunPython(create_index, drop_index)]
