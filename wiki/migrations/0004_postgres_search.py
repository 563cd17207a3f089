from django.db import migrations


def create_indexes(apps, schema_editor):
    """The search tables on PostgreSQL (SQLite made its own in earlier migrations)."""
    from wiki.search import PAGE_FTS, PASSAGE_VECTORS

    if schema_editor.connection.vendor != "postgresql":
        return
    for index in (PAGE_FTS, PASSAGE_VECTORS):
        for sql in index.create_statements():
            schema_editor.execute(sql)


def drop_indexes(apps, schema_editor):
    from wiki.search import PAGE_FTS, PASSAGE_VECTORS

    if schema_editor.connection.vendor != "postgresql":
        return
    for index in (PAGE_FTS, PASSAGE_VECTORS):
        for sql in index.drop_statements():
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("wiki", "0003_page_passages")]
    operations = [migrations.RunPython(create_indexes, drop_indexes)]
