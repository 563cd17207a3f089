"""Entities are keyed again by the names their facts write, as
``concepts.normalise.entity_key`` keys them now: "Redis" and "redis", "Alice" and
"Alice's", "the Atlas project" and "Atlas" were two keys, and are one.

- Each alias's two keys are read again from its names; of two aliases of one scope that
  now have one key, the first made stays, and one whose two names are now one goes.
- Each mention's key is read again from its name (the writer's own node keeps its key),
  the aliases that apply to its fact applied, and the mention and the triples of its
  fact are moved to the entity of the new key; rows that become one are kept once, a
  triple whose two ends became one entity goes, and an entity no fact mentions is
  pruned. A new key's ref is its keyed hash, as for any new entity.
- What the offline rules extracted is extracted again by the catch-up (their rules read
  more now, and every thing a fact names becomes a mention); until then the rows stay,
  keyed as above. A chat model's extractions are not asked again.
"""

import secrets
from datetime import UTC, datetime

from django.db import migrations
from django.db.models import Exists, OuterRef

CHUNK = 500
TEMPORARY = "@rekey:"


def _applicable(alias, fact: dict) -> bool:
    # As ``concepts.services._applicable``: an alias merges names for its own audience.
    if alias.visibility == "global":
        return True
    if alias.visibility == "team":
        return fact["visibility"] == "team" and fact["team_id"] == alias.team_id
    return fact["visibility"] == "private" and fact["owner_id"] == alias.owner_id


def aliases_rekey(Alias, entity_key) -> None:
    claimed: set[tuple] = set()
    keep: dict[int, tuple[str, str]] = {}
    for alias in Alias.objects.order_by("pk"):
        alias_key, target_key = entity_key(alias.alias_name), entity_key(alias.target_name)
        scope = (alias.owner_id, alias.visibility, alias.team_id, alias_key)
        if not alias_key or not target_key or alias_key == target_key or scope in claimed:
            alias.delete()
            continue
        claimed.add(scope)
        if (alias_key, target_key) != (alias.alias_key, alias.target_key):
            keep[alias.pk] = (alias_key, target_key)
    # Through a key no name has, so no two rows hold one key on the way.
    for pk in keep:
        Alias.objects.filter(pk=pk).update(alias_key=f"{TEMPORARY}{pk}")
    for pk, (alias_key, target_key) in keep.items():
        Alias.objects.filter(pk=pk).update(alias_key=alias_key, target_key=target_key)


def rows_rekey(apps, schema_editor) -> None:
    from concepts.normalise import entity_key, entity_ref

    Alias = apps.get_model("concepts", "Alias")
    Entity = apps.get_model("concepts", "Entity")
    EntityRefKey = apps.get_model("concepts", "EntityRefKey")
    FactExtraction = apps.get_model("concepts", "FactExtraction")
    Fact = apps.get_model("facts", "Fact")
    Mention = apps.get_model("concepts", "Mention")
    Triple = apps.get_model("concepts", "Triple")

    aliases_rekey(Alias, entity_key)
    secret = EntityRefKey.objects.get_or_create(pk=1, defaults={"secret": secrets.token_hex(32)})[
        0
    ].secret
    fact_ids = sorted(set(Mention.objects.values_list("fact_id", flat=True)))
    left: set[int] = set()  # entities some mention moved away from
    for at in range(0, len(fact_ids), CHUNK):
        ids = fact_ids[at : at + CHUNK]
        facts = {
            row["pk"]: row
            for row in Fact.objects.filter(pk__in=ids).values(
                "pk", "owner_id", "visibility", "team_id"
            )
        }
        mentions = list(Mention.objects.filter(fact_id__in=ids))
        raw = {
            m.pk: m.raw_key if m.raw_key.startswith("@") else (entity_key(m.name) or m.raw_key)
            for m in mentions
        }
        aliases = list(Alias.objects.filter(alias_key__in=set(raw.values())).order_by("pk"))

        def resolved(key: str, fact_id: int) -> str:
            for alias in aliases:
                if alias.alias_key == key and _applicable(alias, facts[fact_id]):
                    return alias.target_key
            return key

        target = {m.pk: resolved(raw[m.pk], m.fact_id) for m in mentions}
        keys = set(target.values())
        found = dict(Entity.objects.filter(key__in=keys).values_list("key", "pk"))
        missing = keys - found.keys()
        if missing:
            Entity.objects.bulk_create(
                [Entity(key=k, ref=entity_ref(k, secret=secret)) for k in sorted(missing)],
                ignore_conflicts=True,
            )
            found = dict(Entity.objects.filter(key__in=keys).values_list("key", "pk"))
        moved: dict[tuple[int, int], int] = {}  # (old entity, fact) -> new entity
        rows: dict[tuple[int, int], Mention] = {}
        for m in mentions:
            entity = found[target[m.pk]]
            moved[(m.entity_id, m.fact_id)] = entity
            if entity != m.entity_id:
                left.add(m.entity_id)
            direct = raw[m.pk] == target[m.pk]
            if (entity, m.fact_id) not in rows or direct:
                rows[(entity, m.fact_id)] = Mention(
                    entity_id=entity, fact_id=m.fact_id, name=m.name, type=m.type, raw_key=raw[m.pk]
                )
        triples: dict[tuple[int, str, int, int], Triple] = {}
        for t in Triple.objects.filter(fact_id__in=ids).order_by("pk"):
            s = moved.get((t.subject_id, t.fact_id), t.subject_id)
            o = moved.get((t.object_id, t.fact_id), t.object_id)
            if s != o:
                triples.setdefault(
                    (s, t.relation, o, t.fact_id),
                    Triple(
                        subject_id=s,
                        relation=t.relation,
                        object_id=o,
                        fact_id=t.fact_id,
                        confidence=t.confidence,
                    ),
                )
        Triple.objects.filter(fact_id__in=ids).delete()
        Mention.objects.filter(fact_id__in=ids).delete()
        Mention.objects.bulk_create(rows.values())
        Triple.objects.bulk_create(triples.values())
    gone = sorted(left)
    for at in range(0, len(gone), CHUNK):
        Entity.objects.filter(pk__in=gone[at : at + CHUNK]).filter(
            ~Exists(Mention.objects.filter(entity_id=OuterRef("pk")))
        ).delete()
    FactExtraction.objects.filter(provider="offline").update(
        fact_updated_at=datetime(1970, 1, 1, tzinfo=UTC)
    )


class Migration(migrations.Migration):
    dependencies = [("concepts", "0004_entity_refs_required")]

    operations = [migrations.RunPython(rows_rekey, migrations.RunPython.noop)]
