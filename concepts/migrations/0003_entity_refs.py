"""Entities get refs, which readers know them by in place of their ids: an id is given
as a name is first written, so it told a reader whether facts they cannot read had
named it before. The install's ref key is made here, and every stored entity's ref
filled from its key (``concepts.normalise.entity_ref``, as new entities get theirs).
The next migration makes refs required and unique."""

import secrets

from django.db import migrations, models

CHUNK = 500


def refs_fill(apps, schema_editor) -> None:
    from concepts.normalise import entity_ref

    Entity = apps.get_model("concepts", "Entity")
    EntityRefKey = apps.get_model("concepts", "EntityRefKey")
    key, _ = EntityRefKey.objects.get_or_create(pk=1, defaults={"secret": secrets.token_hex(32)})
    ids = list(Entity.objects.order_by("pk").values_list("pk", flat=True))
    for at in range(0, len(ids), CHUNK):
        rows = list(Entity.objects.filter(pk__in=ids[at : at + CHUNK]).only("pk", "key"))
        for row in rows:
            row.ref = entity_ref(row.key, secret=key.secret)
        Entity.objects.bulk_update(rows, ["ref"])


class Migration(migrations.Migration):
    dependencies = [("concepts", "0002_graph_rows_checked_again")]

    operations = [
        migrations.CreateModel(
            name="EntityRefKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("secret", models.CharField(max_length=64)),
            ],
        ),
        migrations.AddField(
            model_name="entity",
            name="ref",
            field=models.CharField(max_length=26, null=True),
        ),
        migrations.RunPython(refs_fill, migrations.RunPython.noop),
    ]
