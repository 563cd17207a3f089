"""Writes of the concept graph: extracting facts into mentions and triples, the catch-up
and build that keep the graph in step with the fact store, aliases, and pruning.

Extraction asks the configured chat model (or the offline rules when none is set) for
the triples of a batch of facts of one scope (owner, visibility, team, fleet), outside
any transaction, keeps the triples whose ends the fact they cite names, then writes each
fact's rows in one transaction, unless the fact changed or went meanwhile. What the
provider said is kept per fact (``FactExtraction``), so aliases re-apply without asking
it again.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Exists, Min, OuterRef, Q
from django.utils import timezone

from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from memoryhub.engine.jobs import job_create
from memoryhub.engine.llm import ChatProvider, SourceText
from memoryhub.engine.llm.offline.triples import NamedThing, named_things
from memoryhub.engine.locking import writes_serialise
from memoryhub.engine.refs import MAX_ID
from memoryhub.engine.unicode import UNSTORABLE
from teams.models import Visibility
from teams.services import Actor, audit_log, scope_for_new_row

from .models import NAME_LENGTH, Alias, Entity, EntityRefKey, FactExtraction, Mention, Triple
from .normalise import USER_NAME, entity_key, entity_ref, name_stated_in, user_key

# Facts per request to the provider.
EXTRACT_BATCH = 20
# Facts looked at per round of the catch-up.
SYNC_ROUND = 200
RAW_LAYER = 1  # summaries and profiles restate their sources: only raw facts are read
_SPECIFIC = ("person", "organisation", "project", "tool", "place")


def fact_model() -> Any:
    """The fact store's model, through the graph's own foreign key (apps do not import
    each other)."""
    return FactExtraction._meta.get_field("fact").related_model


def _chunks[T](items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _provider() -> ChatProvider:
    from memoryhub.engine.llm.configured import llm_provider_get

    return llm_provider_get()


# --- Extraction ---------------------------------------------------------------------------


@dataclass
class ExtractOutcome:
    facts: int = 0  # facts extracted
    triples: int = 0  # triples written for them
    provider: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"facts": self.facts, "triples": self.triples, "provider": self.provider}


def _scope_batches(rows: Sequence[tuple]) -> Iterable[Sequence[tuple]]:
    """``rows`` (pk, content, updated_at, owner, visibility, team, fleet) in batches of
    one scope each: a model never reads a fact beside one its readers may not read, so
    nothing it answers about one can come from the other."""
    scopes: dict[tuple, list[tuple]] = {}
    for row in rows:
        scopes.setdefault(row[3:], []).append(row)
    for scoped in scopes.values():
        yield from _chunks(scoped, EXTRACT_BATCH)


def concept_facts_extract(
    *,
    fact_ids: Sequence[int],
    provider: ChatProvider | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExtractOutcome:
    """Extract the triples of these facts (raw facts not yet extracted at their current
    version; others are skipped) and write them with their mentions. Facts are sent to
    the provider in batches of one owner, visibility, team and fleet, and a triple is
    kept only if the fact it cites names both its ends. A chat model failure raises
    (nothing of that batch is written; a later run tries again)."""
    Fact = fact_model()
    ids = list(dict.fromkeys(fact_ids))
    outcome = ExtractOutcome()
    done = 0
    for chunk in _chunks(ids, SYNC_ROUND):
        facts = Fact.objects.filter(pk__in=chunk, layer=RAW_LAYER).order_by("pk")
        rows = list(
            facts.values_list(
                "pk", "content", "updated_at", "owner_id", "visibility", "team_id", "fleet"
            )
        )
        current = set(
            FactExtraction.objects.filter(fact_id__in=[row[0] for row in rows]).values_list(
                "fact_id", "fact_updated_at"
            )
        )
        todo = [row for row in rows if (row[0], row[2]) not in current]
        done += len(chunk) - len(todo)
        for batch in _scope_batches(todo):
            provider = provider or _provider()
            _batch_extract(batch, provider=provider, outcome=outcome)
            done += len(batch)
            if progress is not None:
                progress(done, len(ids))
    if progress is not None and ids:
        progress(len(ids), len(ids))
    return outcome


def _batch_extract(
    batch: Sequence[tuple], *, provider: ChatProvider, outcome: ExtractOutcome
) -> None:
    Fact = fact_model()
    answer = provider.extract_triples([SourceText(id=row[0], text=row[1]) for row in batch])
    outcome.provider = answer.provider
    texts = {row[0]: row[1] for row in batch}
    found: dict[int, list[dict[str, Any]]] = {pk: [] for pk in texts}
    for triple in answer.triples:
        text = texts.get(triple.source_id)
        # A model may cite the wrong text (or be told to by one): a triple stands only
        # if the fact it cites names its subject and its object.
        if text is None:
            continue
        if name_stated_in(triple.subject, text) and name_stated_in(triple.object, text):
            found[triple.source_id].append(triple.model_dump(exclude={"source_id"}))
    with transaction.atomic():
        # After the writers of these facts' owner (deletes among them), never beside
        # them: both rewrite the facts' mentions.
        writes_serialise("facts", batch[0][3])
        # A fact changed or deleted while the provider worked is left to the run its
        # change queued.
        still = dict(Fact.objects.filter(pk__in=list(found)).values_list("pk", "updated_at"))
        kept = [(row[0], row[2]) for row in batch if still.get(row[0]) == row[2]]
        for pk, at in kept:
            FactExtraction.objects.update_or_create(
                fact_id=pk,
                defaults={
                    "fact_updated_at": at,
                    "provider": answer.provider,
                    "triples": found[pk],
                    "extracted_at": timezone.now(),
                },
            )
        outcome.triples += _graph_rows_write(fact_ids=[pk for pk, _ in kept])
        outcome.facts += len(kept)


def _applicable(alias: Alias, fact: dict[str, Any]) -> bool:
    # An alias merges names for the facts of its own audience only.
    if alias.visibility == Visibility.GLOBAL:
        return True
    if alias.visibility == Visibility.TEAM:
        return fact["visibility"] == Visibility.TEAM and fact["team_id"] == alias.team_id
    return fact["visibility"] == Visibility.PRIVATE and fact["owner_id"] == alias.owner_id


def _graph_rows_write(*, fact_ids: Sequence[int], revisit: bool = True) -> int:
    """Rewrite the mentions and triples of these facts from their stored extraction,
    with the aliases that apply to each; the number of triples written. A fact mentions
    the ends of its triples and every other thing its words name (``_names_standing``);
    the writer's other facts that open a sentence with a name these facts write are
    read again (unless not ``revisit``), so the order facts come in changes nothing."""
    Fact = fact_model()
    facts = {
        row["pk"]: row
        for row in Fact.objects.filter(pk__in=fact_ids).values(
            "pk",
            "owner_id",
            "owner__username",
            "visibility",
            "team_id",
            "fleet",
            "content",
            "updated_at",
        )
    }
    extracted = dict(
        FactExtraction.objects.filter(fact_id__in=list(facts)).values_list("fact_id", "triples")
    )
    touched = set(Mention.objects.filter(fact_id__in=fact_ids).values_list("entity_id", flat=True))
    # Facts whose names these facts decided: read again, these perhaps deciding no more.
    citing = set(
        Mention.objects.filter(evidence_id__in=fact_ids)
        .exclude(fact_id__in=fact_ids)
        .values_list("fact_id", flat=True)
    )
    Triple.objects.filter(fact_id__in=fact_ids).delete()
    Mention.objects.filter(fact_id__in=fact_ids).delete()

    def raw(name: str, fact: dict[str, Any]) -> tuple[str, str]:
        if name.strip().casefold() == USER_NAME:
            return user_key(fact["owner_id"]), fact["owner__username"]
        return entity_key(name), " ".join(name.split())[:NAME_LENGTH]

    # (fact, raw key) -> (name, type); (fact, subject raw key, relation, object raw key, conf)
    names: dict[tuple[int, str], tuple[str, str]] = {}
    statements: list[tuple[int, str, str, str, float]] = []
    for fact_id, triples in extracted.items():
        fact = facts[fact_id]
        for item in triples:
            subject, subject_name = raw(item["subject"], fact)
            obj, object_name = raw(item["object"], fact)
            if not subject or not obj:
                continue
            for key, name, kind in (
                (subject, subject_name, item.get("subject_type", "other")),
                (obj, object_name, item.get("object_type", "other")),
            ):
                known = names.get((fact_id, key))
                if known is None or (known[1] not in _SPECIFIC and kind in _SPECIFIC):
                    names[(fact_id, key)] = (name, kind)
            statements.append(
                (fact_id, subject, item["relation"], obj, float(item.get("confidence", 0.5)))
            )
    # Every thing a fact names is mentioned by it, a relation stated about it or not; a
    # word capitalised only by its place in the sentence, when its writer writes it as a
    # name elsewhere (``_names_standing``).
    standing, evidence = _names_standing(facts, extracted, names)
    for (fact_id, key), (written, kind) in standing.items():
        names.setdefault((fact_id, key), (written, kind))
    raw_keys = {key for _, key in names}
    aliases = list(Alias.objects.filter(alias_key__in=raw_keys))

    def resolved(fact_id: int, key: str) -> str:
        for alias in aliases:
            if alias.alias_key == key and _applicable(alias, facts[fact_id]):
                return alias.target_key
        return key

    keys = {(fact_id, key): resolved(fact_id, key) for fact_id, key in names}
    entity_ids = _entities_ensure(set(keys.values()))
    mentions: dict[tuple[int, int], Mention] = {}
    for (fact_id, key), (name, kind) in names.items():
        entity = entity_ids[keys[(fact_id, key)]]
        if (entity, fact_id) not in mentions or key == keys[(fact_id, key)]:
            decided_by, version = evidence.get((fact_id, key), (None, None))
            mentions[(entity, fact_id)] = Mention(
                entity_id=entity,
                fact_id=fact_id,
                name=name,
                type=kind,
                raw_key=key,
                evidence_id=decided_by,
                evidence_version=version,
            )
    Mention.objects.bulk_create(mentions.values())
    triples: dict[tuple[int, str, int, int], Triple] = {}
    for fact_id, subject, relation, obj, confidence in statements:
        s, o = entity_ids[keys[(fact_id, subject)]], entity_ids[keys[(fact_id, obj)]]
        if s == o:
            continue  # an alias made "k8s uses kubernetes" say nothing
        triples.setdefault(
            (s, relation, o, fact_id),
            Triple(
                subject_id=s, relation=relation, object_id=o, fact_id=fact_id, confidence=confidence
            ),
        )
    Triple.objects.bulk_create(triples.values())
    if revisit:
        later = sorted(set(_facts_opening_with(facts, names)) | citing)
        if later:
            _graph_rows_write(fact_ids=later, revisit=False)
    concept_entities_prune(entity_ids=touched)
    return len(triples)


def _facts_opening_with(
    facts: dict[int, dict[str, Any]], names: dict[tuple[int, str], tuple[str, str]]
) -> list[int]:
    """The other raw facts of the owners of ``facts``, extracted at their current
    version, that open a sentence with a word that ``names`` (what ``facts`` now
    mention) writes as a name, where these facts may decide it (``_reads_with``), and
    whose mentions it changes."""
    Fact = fact_model()
    named: dict[int, dict[str, list[int]]] = {}  # owner -> key -> the facts naming it
    words: dict[int, set[str]] = {}
    for (fact_id, key), (name, _) in names.items():
        if key.startswith("@") or not name.split():
            continue
        owner_id = facts[fact_id]["owner_id"]
        named.setdefault(owner_id, {}).setdefault(key, []).append(fact_id)
        first = name.split()[0]
        words.setdefault(owner_id, set()).add(first[:1].upper() + first[1:])
    found: list[int] = []
    for owner_id, keys in named.items():
        # A sentence, a line or what follows a colon opening with one of the words, or
        # with a word and then one of them (in the regular expressions both databases
        # read).
        pattern = (
            "(?:^|[.!?:\n])\\W*(?:\\w+\\s+)?(?:"
            + "|".join(map(re.escape, sorted(words[owner_id])))
            + ")"
        )
        rows = list(
            Fact.objects.filter(owner_id=owner_id, layer=RAW_LAYER, content__regex=pattern)
            .filter(
                Exists(
                    FactExtraction.objects.filter(
                        fact_id=OuterRef("pk"), fact_updated_at=OuterRef("updated_at")
                    )
                )
            )
            .exclude(pk__in=list(facts))
            .values("pk", "visibility", "team_id", "fleet", "content")
        )
        mentioned = set(
            Mention.objects.filter(fact_id__in=[row["pk"] for row in rows]).values_list(
                "fact_id", "raw_key"
            )
        )
        for row in rows:
            here = {key for pk, key in mentioned if pk == row["pk"]}
            deciding = {
                key
                for key, named_in in keys.items()
                if any(_reads_with(facts[pk], row) for pk in named_in)
            }
            if any(_decided_otherwise(t, here, deciding) for t in named_things(row["content"])):
                found.append(row["pk"])
    return found


def _decided_otherwise(thing: NamedThing, mentioned: set[str], named: set[str]) -> bool:
    # Whether names now written elsewhere (``named``) may decide ``thing`` otherwise
    # than the mentions of its fact (``mentioned``) say it was: the whole name, when its
    # first word or itself is one; else the rest, when that is one.
    if not thing.opener:
        return False
    whole = entity_key(thing.name)
    if {entity_key(thing.opener), whole} & named and whole not in mentioned:
        return True
    if thing.rest is None:
        return False
    rest = entity_key(thing.rest.name)
    return rest in named and rest not in mentioned


def _reads_with(evidence: dict[str, Any], fact: dict[str, Any]) -> bool:
    """Whether every reader of ``fact`` may read ``evidence`` (a fact of the same owner):
    what one says of a word may then decide what the other names. The owner reads all
    their own facts; a team's members their team's and everyone's; everyone only
    everyone's. An agent of a fleet reads its fleet's and those of none."""
    if fact["fleet"] and evidence["fleet"] not in ("", fact["fleet"]):
        return False
    if not fact["fleet"] and evidence["fleet"]:
        return False
    if fact["visibility"] == Visibility.PRIVATE:
        return True
    if evidence["visibility"] == Visibility.GLOBAL:
        return True
    return (
        fact["visibility"] == Visibility.TEAM
        and evidence["visibility"] == Visibility.TEAM
        and evidence["team_id"] == fact["team_id"]
    )


def _deciding(thing: NamedThing) -> set[str]:
    # The keys whose being written as a name elsewhere decides what ``thing`` names.
    keys = {entity_key(thing.opener), entity_key(thing.name)}
    if thing.rest is not None:
        keys.add(entity_key(thing.rest.name))
    return keys - {""}


# The fact that decided a name for another and its version then; OWN: none other did.
type Evidence = tuple[int | None, datetime | None]
OWN: Evidence = (None, None)


def _names_standing(
    facts: dict[int, dict[str, Any]],
    extracted: dict[int, Any],
    names: dict[tuple[int, str], tuple[str, str]],
) -> tuple[dict[tuple[int, str], tuple[str, str]], dict[tuple[int, str], Evidence]]:
    """The names (``named_things``) of the extracted ``facts`` that stand as things, by
    (fact, raw key), beside the ends of their triples (``names``). A word capitalised
    only because it opens a sentence ("Deploys are slow", "Uses Vim") is a name when its
    writer writes it as one elsewhere: the end of a triple, or a name not at a
    sentence's start, in the same fact or another raw fact of theirs that every reader
    of this one may read (``_reads_with``), never in anyone else's. Otherwise the run's
    words after it stand ("Vim"), or nothing. With them, for each name decided by
    another fact, that fact and its version (``Evidence``)."""
    Fact = fact_model()
    things = {pk: named_things(facts[pk]["content"]) for pk in extracted}
    # The names that stand by themselves, by fact and by scope: evidence for the rest.
    firm: dict[int, set[str]] = {pk: set() for pk in things}
    for fact_id, key in names:
        firm[fact_id].add(key)
    for pk, found in things.items():
        firm[pk].update(entity_key(t.name) for t in found if not t.opener)
        # The rest of a run after an ordinary word ("Vim" of "Uses Vim") is capitalised
        # where nothing makes it so.
        firm[pk].update(entity_key(t.rest.name) for t in found if t.rest and t.ordinary)
    scopes: dict[tuple, dict[str, int]] = {}  # scope -> key -> a fact writing it
    for pk, keys in firm.items():
        fact = facts[pk]
        scope = (fact["owner_id"], fact["visibility"], fact["team_id"], fact["fleet"])
        for key in keys:
            scopes.setdefault(scope, {}).setdefault(key, pk)
    wanted: dict[int, set[str]] = {}
    for pk, found in things.items():
        for thing in found:
            if thing.opener:
                wanted.setdefault(facts[pk]["owner_id"], set()).update(_deciding(thing))
    # What the writer's other facts name, with the scope of each (who may read it) and
    # one fact of that scope writing it (the first), whose version a decision records.
    elsewhere: dict[str, list[dict[str, Any]]] = {}
    for owner_id, keys in wanted.items():
        readable = Fact.objects.recallable().filter(
            pk=OuterRef("fact_id"), owner_id=owner_id, layer=RAW_LAYER
        )
        # A name another fact decided is no evidence: it stands only while that does.
        rows = list(
            Mention.objects.filter(raw_key__in=keys, evidence_version__isnull=True)
            .filter(Exists(readable))
            .exclude(fact_id__in=list(facts))
            .values("raw_key", "fact__visibility", "fact__team_id", "fact__fleet")
            .annotate(first=Min("fact_id"))
            .order_by()
        )
        versions = dict(
            Fact.objects.filter(pk__in={row["first"] for row in rows}).values_list(
                "pk", "updated_at"
            )
        )
        for row in rows:
            elsewhere.setdefault(row["raw_key"], []).append(
                {
                    "owner_id": owner_id,
                    "visibility": row["fact__visibility"],
                    "team_id": row["fact__team_id"],
                    "fleet": row["fact__fleet"],
                    "evidence": (row["first"], versions.get(row["first"])),
                }
            )

    def name_evidence(key: str, pk: int) -> Evidence | None:
        # Whether ``key`` is written as a name where it may decide for fact ``pk``
        # (None: it is not), and by which fact (OWN: ``pk`` itself).
        fact = facts[pk]
        if key in firm[pk]:
            return OWN
        for (owner_id, visibility, team_id, fleet), keys in scopes.items():
            scope = {"visibility": visibility, "team_id": team_id, "fleet": fleet}
            if key in keys and owner_id == fact["owner_id"] and _reads_with(scope, fact):
                other = keys[key]
                return other, facts[other]["updated_at"]
        for scope in elsewhere.get(key, ()):
            if scope["owner_id"] == fact["owner_id"] and _reads_with(scope, fact):
                return scope["evidence"]
        return None

    def decided(thing: NamedThing, pk: int) -> tuple[NamedThing | None, Evidence]:
        # A word capitalised by its place: the name when written as one elsewhere; of a
        # run, else the rest when the word is ordinary or the rest a name on its own.
        if not thing.opener:
            return thing, OWN
        for key in (entity_key(thing.opener), entity_key(thing.name)):
            if (found := name_evidence(key, pk)) is not None:
                return thing, found
        if thing.rest is None:
            return None, OWN
        if thing.ordinary:
            return thing.rest, OWN
        if (found := name_evidence(entity_key(thing.rest.name), pk)) is not None:
            return thing.rest, found
        return thing, OWN

    standing: dict[tuple[int, str], tuple[str, str]] = {}
    evidence: dict[tuple[int, str], Evidence] = {}
    for pk, found in things.items():
        for thing in found:
            thing, by = decided(thing, pk)
            if thing is None or thing.name.strip().casefold() == USER_NAME:
                continue
            name = " ".join(thing.name.split())
            key = entity_key(name)
            if key and (pk, key) not in standing:
                standing[(pk, key)] = (name[:NAME_LENGTH], thing.type)
                if by != OWN:
                    evidence[(pk, key)] = by
    return standing, evidence


def _entities_ensure(keys: set[str]) -> dict[str, int]:
    found = dict(Entity.objects.filter(key__in=keys).values_list("key", "pk"))
    missing = keys - found.keys()
    if missing:
        secret = EntityRefKey.current()
        Entity.objects.bulk_create(
            [Entity(key=k, ref=entity_ref(k, secret=secret)) for k in missing],
            ignore_conflicts=True,
        )
        found.update(Entity.objects.filter(key__in=missing).values_list("key", "pk"))
    return found


def concept_entities_prune(*, entity_ids: Iterable[int] | None = None) -> int:
    """Delete the entities no fact mentions any more (of ``entity_ids``, or all): a node
    leaves nothing of a forgotten fact behind."""
    orphans = Entity.objects.filter(~Exists(Mention.objects.filter(entity_id=OuterRef("pk"))))
    if entity_ids is not None:
        ids = list(entity_ids)
        if not ids:
            return 0
        orphans = orphans.filter(pk__in=ids)
    deleted, _ = orphans.delete()
    return deleted


def concept_triples_count(*, owner_id: int) -> int:
    """How many triples the facts of ``owner_id`` support (the forgetting receipt
    counts those that went)."""
    return Triple.objects.filter(fact__owner_id=owner_id).count()


# --- Catch-up and build -------------------------------------------------------------------


def concept_facts_stale(*, facts: Any = None) -> Any:
    """Ids of the raw facts (of the queryset ``facts``, default all) not extracted at
    their current version."""
    Fact = fact_model()
    facts = (facts if facts is not None else Fact.objects.all()).filter(layer=RAW_LAYER)
    current = FactExtraction.objects.filter(
        fact_id=OuterRef("pk"), fact_updated_at=OuterRef("updated_at")
    )
    # In scope order, so a round of the catch-up fills its batches (``_scope_batches``).
    return (
        facts.filter(~Exists(current))
        .order_by("owner_id", "visibility", "team_id", "fleet", "pk")
        .values_list("pk", flat=True)
    )


def concept_graph_sync(
    *,
    facts: Any = None,
    provider: ChatProvider | None = None,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
) -> ExtractOutcome:
    """Extract every raw fact (of ``facts``) the graph lacks or holds an older version of:
    the periodic catch-up for work the queue dropped, and the body of a build."""
    ids = list(
        concept_facts_stale(facts=facts)[:limit] if limit else concept_facts_stale(facts=facts)
    )
    total = ExtractOutcome()
    for start, chunk in enumerate(_chunks(ids, SYNC_ROUND)):
        outcome = concept_facts_extract(fact_ids=chunk, provider=provider)
        total.facts += outcome.facts
        total.triples += outcome.triples
        total.provider = outcome.provider or total.provider
        if progress is not None:
            progress(min(len(ids), (start + 1) * SYNC_ROUND), len(ids))
    concept_mentions_rewrite_unsupported(facts=facts)
    return total


def concept_mentions_rewrite_unsupported(*, facts: Any = None) -> int:
    """Write again, from their stored extraction, the mentions of the facts (of the
    queryset ``facts``, default all) holding a name another fact decided that no longer
    stands as it was (deleted, changed, archived); how many facts were written. Until
    then readers do not see those mentions (``concepts.selectors.standing``)."""
    from .selectors import standing

    unsupported = Mention.objects.filter(evidence_version__isnull=False).exclude(
        pk__in=standing(Mention.objects.filter(evidence_version__isnull=False)).values("pk")
    )
    if facts is not None:
        unsupported = unsupported.filter(fact_id__in=facts.values("pk"))
    rows = list(
        fact_model()
        .objects.filter(pk__in=unsupported.values("fact_id"))
        .order_by("owner_id", "pk")
        .values_list("pk", "owner_id")
    )
    for owner_id in dict.fromkeys(owner for _, owner in rows):
        ids = [pk for pk, owner in rows if owner == owner_id]
        for chunk in _chunks(ids, SYNC_ROUND):
            with transaction.atomic():
                writes_serialise("facts", owner_id)
                _graph_rows_write(fact_ids=chunk, revisit=False)
    return len(rows)


def concept_graph_build(
    *, owner_id: int, project: str | None = None, progress: Callable[[int, int], None] | None = None
) -> dict[str, Any]:
    """Bring the graph of the facts ``owner_id`` can see (of ``project``) up to date."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(pk=owner_id)
    facts = fact_model().objects.visible_to(user)
    if project is not None:
        facts = facts.filter(project=project)
    outcome = concept_graph_sync(facts=facts, progress=progress)
    return {**outcome.as_dict(), "provider": outcome.provider or "none needed"}


def concept_graph_build_request(*, actor: Actor, project: str | None = None) -> Any:
    """Queue a build as a job of the actor's."""
    from .tasks import concept_graph_build as build_task

    actor.require_scope("write")
    if project is not None and (not isinstance(project, str) or len(project) > 200):
        raise InvalidInput("A project key is at most 200 characters.")
    with transaction.atomic():
        job = job_create(
            owner=actor.user,
            kind="concept_build",
            task=build_task,
            arguments={} if project is None else {"project": project},
        )
        audit_log(actor=actor, action="concepts.build", target_type="job", target_id=job.pk)
    return job


# --- Aliases ------------------------------------------------------------------------------


def _alias_name(value: Any, what: str) -> tuple[str, str]:
    if not isinstance(value, str) or UNSTORABLE.search(value):
        raise InvalidInput(f"The {what} must be text.")
    name = " ".join(value.split())
    if len(name) > NAME_LENGTH:
        raise InvalidInput(f"The {what} is at most {NAME_LENGTH} characters.")
    key = entity_key(name)
    if not key:
        raise InvalidInput(f"The {what} needs a name: {value!r} has none.")
    if key.startswith("@"):
        raise InvalidInput(f"The {what} cannot start with @.")
    return name, key


def _scope_q(scope: dict[str, Any]) -> Q:
    return Q(visibility=scope["visibility"], team=scope["team"]) & (
        Q(owner=scope["owner"]) if scope["visibility"] == Visibility.PRIVATE else Q()
    )


def _facts_mentioning(keys: set[str]) -> list[int]:
    return list(
        Mention.objects.filter(raw_key__in=keys).values_list("fact_id", flat=True).distinct()
    )


@transaction.atomic
def concept_alias_create(
    *,
    actor: Actor,
    alias: Any,
    target: Any,
    visibility: str | None = None,
    team: str | int | None = None,
) -> Alias:
    """Merge the entity named ``alias`` into the one named ``target`` for the facts of
    the alias's scope (the actor's default visibility and team unless given). Anyone
    adds a private alias; a team alias takes an admin of the team, a global one staff
    (``Alias.may_be_added_by``): others are refused, whatever their default scope."""
    actor.require_scope("write")
    alias_name, alias_key = _alias_name(alias, "alias")
    target_name, target_key = _alias_name(target, "target")
    if alias_key == target_key:
        raise InvalidInput(f"{alias_name!r} and {target_name!r} are already one name.")
    scope = scope_for_new_row(user=actor.user, team=team, visibility=visibility)
    row = Alias(
        owner=scope["owner"],
        team=scope["team"],
        visibility=scope["visibility"],
        project=scope["project"],
        alias_key=alias_key,
        alias_name=alias_name,
        target_key=target_key,
        target_name=target_name,
    )
    if not row.may_be_added_by(actor.user):
        audience = (
            "everyone's graph: only staff add one"
            if row.visibility == Visibility.GLOBAL
            else f"the graph of every member of {row.team.name}: only its admins add one"
        )
        raise Forbidden(
            f"A {row.visibility} alias merges names in {audience}. Add it as private "
            "(visibility private) to merge them in your own graph."
        )
    same_scope = Alias.objects.filter(_scope_q(scope))
    if same_scope.filter(alias_key=alias_key).exists():
        raise InvalidInput(f"{alias_name!r} is already an alias in this scope.")
    if same_scope.filter(alias_key=target_key).exists():
        raise InvalidInput(f"{target_name!r} is itself an alias: name what it stands for.")
    if same_scope.filter(target_key=alias_key).exists():
        raise InvalidInput(f"Other names are aliases of {alias_name!r}: it cannot be one too.")
    row.save(force_insert=True)
    _graph_rows_write(fact_ids=_facts_mentioning({alias_key}))
    audit_log(
        actor=actor,
        action="concepts.alias_create",
        target_type="alias",
        target_id=row.pk,
        details={"visibility": row.visibility},
    )
    return row


@transaction.atomic
def concept_alias_delete(*, actor: Actor, alias_id: int) -> None:
    """Remove an alias: its names are two entities again."""
    actor.require_scope("write")
    if not 0 < alias_id <= MAX_ID:
        raise NotFound(f"No alias {alias_id}.")
    # Locked: of two removals at once, the second finds it gone (and audits nothing).
    row = (
        Alias.objects.visible_to(actor.user)
        .select_for_update(of=("self",))
        .filter(pk=alias_id)
        .first()
    )
    if row is None:
        raise NotFound(f"No alias {alias_id}.")
    if not row.is_editable_by(actor.user):
        raise Forbidden("Only its owner (or an admin of its team) can remove this alias.")
    key = row.alias_key
    row.delete()
    _graph_rows_write(fact_ids=_facts_mentioning({key}))
    audit_log(actor=actor, action="concepts.alias_delete", target_type="alias", target_id=alias_id)
