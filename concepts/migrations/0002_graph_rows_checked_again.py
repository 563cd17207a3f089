"""The graph written before extraction checked what the chat model cites, and before an
alias needed an author its readers trust, is checked again.

- An alias its owner could not add now (a global one of someone not staff, a team one
  of someone not an admin of its team) becomes its owner's private alias, or goes where
  they have that private alias already.
- The facts whose rows such an alias merged, and those whose stored extraction names
  what their text does not, lose their extraction and rows; the entities only they
  named go with them. The catch-up extracts those facts again, in batches of one scope,
  keeping only what each fact names.
"""

from django.db import migrations
from django.db.models import Exists, OuterRef, Q

CHUNK = 500


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[at : at + CHUNK] for at in range(0, len(ids), CHUNK)]


def check_again(apps, schema_editor) -> None:
    from concepts.normalise import name_stated_in

    Alias = apps.get_model("concepts", "Alias")
    Entity = apps.get_model("concepts", "Entity")
    FactExtraction = apps.get_model("concepts", "FactExtraction")
    Mention = apps.get_model("concepts", "Mention")
    Triple = apps.get_model("concepts", "Triple")
    Membership = apps.get_model("teams", "Membership")

    admin = Membership.objects.filter(
        user_id=OuterRef("owner_id"), team_id=OuterRef("team_id"), role="admin"
    )
    untrusted = Alias.objects.filter(
        Q(visibility="global", owner__is_staff=False) | (Q(visibility="team") & ~Exists(admin))
    )
    merged_keys: set[str] = set()
    for alias in untrusted:
        merged_keys.add(alias.alias_key)
        private = Alias.objects.filter(
            owner_id=alias.owner_id,
            visibility="private",
            team_id=alias.team_id,
            alias_key=alias.alias_key,
        )
        if private.exists():
            alias.delete()
        else:
            Alias.objects.filter(pk=alias.pk).update(visibility="private")

    again = set(Mention.objects.filter(raw_key__in=merged_keys).values_list("fact_id", flat=True))
    stored = FactExtraction.objects.values_list("fact_id", "triples", "fact__content")
    for fact_id, triples, content in stored.iterator(chunk_size=CHUNK):
        if any(
            not (name_stated_in(t["subject"], content) and name_stated_in(t["object"], content))
            for t in triples
        ):
            again.add(fact_id)
    for ids in _chunks(sorted(again)):
        Triple.objects.filter(fact_id__in=ids).delete()
        Mention.objects.filter(fact_id__in=ids).delete()
        FactExtraction.objects.filter(fact_id__in=ids).delete()
    if again:
        Entity.objects.filter(~Exists(Mention.objects.filter(entity_id=OuterRef("pk")))).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("concepts", "0001_initial"),
        ("teams", "0002_membership_is_the_user_group_link"),
    ]

    operations = [migrations.RunPython(check_again, migrations.RunPython.noop)]
