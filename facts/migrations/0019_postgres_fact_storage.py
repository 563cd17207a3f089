"""PostgreSQL storage of the fact table, fitted to how it is written.

- Room on every page (fillfactor 90): recall counts each use of a fact, and an update
  that fits on the row's own page leaves the indexes alone (a heap-only update), where
  on a full page it writes a new entry into every index of the table.
- No pattern copies of the text indexes: PostgreSQL's backend adds a ``_like`` index
  beside every indexed text column for LIKE prefix searches, which the fact table never
  runs, and each copy costs every insert and update.

Nothing changes on SQLite.
"""

from django.db import migrations

FILL_FACTOR = 90


def fit_storage(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    table = apps.get_model("facts", "Fact")._meta.db_table
    schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {FILL_FACTOR})")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = %s AND indexname LIKE %s",
            [table, r"%\_like"],
        )
        names = [name for (name,) in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")


def restore_storage(apps, schema_editor):
    """Back to full pages; the pattern indexes were never used and are not made again."""
    if schema_editor.connection.vendor != "postgresql":
        return
    table = apps.get_model("facts", "Fact")._meta.db_table
    schema_editor.execute(f"ALTER TABLE {table} RESET (fillfactor)")


class Migration(migrations.Migration):
    dependencies = [("facts", "0018_postgres_search")]
    operations = [migrations.RunPython(fit_storage, restore_storage)]
