import django.utils.timezone
from django.db import migrations, models


def date_and_reindex(apps, schema_editor):
    """Existing facts happened when they were written; their full-text entries are
    rebuilt with the new column of session neighbours' words."""
    if schema_editor.connection.vendor != "sqlite":
        return
    from facts.search import FACT_FTS
    from facts.sessions import facts_index

    Fact = apps.get_model("facts", "Fact")
    Fact.objects.update(occurred_at=models.F("created_at"))
    schema_editor.execute(FACT_FTS.drop_sql())
    schema_editor.execute(FACT_FTS.create_sql())
    ids = list(Fact.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), 2000):
        facts_index([], new=ids[start : start + 2000])


def two_columns_again(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    from facts.search import FACT_FTS

    schema_editor.execute(FACT_FTS.drop_sql())
    schema_editor.execute(
        f"CREATE VIRTUAL TABLE {FACT_FTS.table} USING fts5(content, tags, "
        f"tokenize='{FACT_FTS.tokenize}')"
    )
    schema_editor.execute(
        f"INSERT INTO {FACT_FTS.table}(rowid, content, tags) "
        "SELECT f.id, f.content, coalesce((SELECT group_concat(t.value, ' ') "
        "FROM json_each(f.tags) t), '') FROM facts_fact f"
    )


class Migration(migrations.Migration):
    dependencies = [("facts", "0015_learning_fingerprint")]

    operations = [
        migrations.AddField(
            model_name="fact",
            name="occurred_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="fact",
            name="speaker",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(
                fields=["owner", "session_id", "occurred_at", "id"], name="fact_session_order"
            ),
        ),
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(fields=["occurred_at"], name="fact_occurred_at"),
        ),
        migrations.RunPython(date_and_reindex, two_columns_again),
    ]
