"""Reads of the fact store. Every one starts from ``Fact.objects.visible_to(user)``, but
the counts staff ask of the whole instance (``instance=True``, refused to anyone else)."""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import batched
from typing import Any

from django.db.models import Count, Max, Prefetch, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from facts.models import (
    Category,
    Fact,
    Layer,
    MemoryReview,
    RecallDay,
    ReviewState,
    Source,
    Status,
)
from facts.search import FACT_FTS, FACT_VECTORS
from memoryhub.engine.cleaning import MAX_TAG_LENGTH
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.embeddings.configured import embedder_model_id, query_vector
from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from memoryhub.engine.refs import id_of
from memoryhub.engine.search import (
    SearchMode,
    match_all,
    search_box,
    search_mode_clean,
    search_query_clean,
)
from memoryhub.engine.search.text import holds_words, words
from memoryhub.engine.search.topic import (
    holds_phrase,
    topic_linked,
    topic_match,
    topic_read,
    topic_refine,
)
from teams.services import TEAM_NAME_MAX

SORTS = {
    "newest": ("-created_at", "-id"),
    "oldest": ("created_at", "id"),
    "importance": ("-importance", "-created_at", "-id"),
    "accessed": ("-access_count", "-created_at", "-id"),
    "updated": ("-updated_at", "-id"),
}
FILTERS = (
    "category",
    "layer",
    "visibility",
    "project",
    "status",
    "team",
    "source",
    "tag",
    "created_from",
    "created_to",
)
SEARCH_MAX_CHARS = 1000
# The status filter's value for facts of every status.
STATUS_ALL = "all"


def _with_status(facts: QuerySet[Fact], status: str | None) -> QuerySet[Fact]:
    """``facts`` of one status: active when none is given, every status for ``all``."""
    if status in (None, ""):
        return facts.filter(status=Status.ACTIVE)
    if status == STATUS_ALL:
        return facts
    if status not in Status.values:
        choices = ", ".join([*Status.values, STATUS_ALL])
        raise InvalidInput(f"Unknown status '{status}': use one of {choices}.")
    return facts.filter(status=status)


def fact_list_visible(
    *, user: Any, filters: dict[str, Any] | None = None, sort: str = "newest"
) -> QuerySet[Fact]:
    """Facts the user may read, filtered and sorted. ``created_from`` and ``created_to``
    are dates (both days included, in the instance's time zone); ``tag`` one whole tag.

    Active facts only unless the ``status`` filter asks for others: ``pending_review``
    or ``archived`` for that status (archived: the facts archived by hand or by the
    active cap, and the earlier wordings merges keep as history), ``all`` for every
    status. Searches read through here, so they follow the same rule."""
    if sort not in SORTS:
        raise InvalidInput(f"Unknown sort '{sort}': use one of {', '.join(SORTS)}.")
    filters = dict(filters or {})
    facts = _with_status(
        Fact.objects.visible_to(user).select_related("owner", "team"), filters.pop("status", None)
    )
    for name, value in filters.items():
        if value in (None, ""):
            continue
        if name not in FILTERS:
            raise InvalidInput(f"Unknown filter '{name}'.")
        if name == "category" and value not in Category.values:
            raise InvalidInput(f"Unknown category '{value}'.")
        if name == "source" and value not in Source.values:
            raise InvalidInput(f"Unknown source '{value}'.")
        if name == "layer" and int(value) not in Layer.values:
            raise InvalidInput(f"Unknown layer '{value}'.")
        if name == "team":
            ident = id_of(value)
            if ident is not None:
                facts = facts.filter(team_id=ident)
            elif len(value) > TEAM_NAME_MAX:  # no team has such a name
                facts = facts.none()
            else:
                facts = facts.filter(team__name__iexact=value)
            continue
        if name == "tag":
            facts = _with_tag(facts, value)
            continue
        if name in ("created_from", "created_to"):
            facts = facts.filter(**{_DATE_LOOKUPS[name]: _day(value, name)})
            continue
        facts = facts.filter(**{name: value})
    return facts.order_by(*SORTS[sort])


_DATE_LOOKUPS = {"created_from": "created_at__date__gte", "created_to": "created_at__date__lte"}


def _day(value: Any, name: str) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        shown = str(value)[:40]
        raise InvalidInput(f"{name} must be a date such as 2025-01-31, not {shown!r}.") from None


def _with_tag(facts: QuerySet[Fact], tag: Any) -> QuerySet[Fact]:
    """Facts carrying ``tag``: tags are stored as a JSON list, so a quoted match finds
    one whole tag. A tag longer than any stored one matches nothing."""
    if not isinstance(tag, str):
        raise InvalidInput("A tag filter must be text.")
    tag = " ".join(tag.split()).lower()
    if len(tag) > MAX_TAG_LENGTH:
        return facts.none()
    return facts.filter(tags__icontains=json.dumps(tag))


def fact_ids_editable(*, user: Any, facts: Iterable[Fact]) -> set[int]:
    """Ids of the facts ``user`` may change, by ``Fact.is_editable_by``, without a query
    per row: for someone else's row the answer depends only on its visibility and team."""
    answers: dict[tuple[bool, str, int | None], bool] = {}
    editable = set()
    for fact in facts:
        key = (fact.owner_id == user.pk, fact.visibility, fact.team_id)
        if key not in answers:
            answers[key] = fact.is_editable_by(user)
        if answers[key]:
            editable.add(fact.pk)
    return editable


def fact_get_visible(*, user: Any, fact_id: int) -> Fact:
    fact = (
        Fact.objects.visible_to(user)
        .select_related("owner", "team", "created_by_token__user")
        .filter(pk=fact_id)
        .first()
    )
    if fact is None:
        raise NotFound(f"No fact {fact_id}.")
    return fact


def fact_get_many_visible(*, user: Any, fact_ids: list[int]) -> list[Fact]:
    """The facts of these ids the user may read, in the order asked."""
    found = (
        Fact.objects.visible_to(user)
        .select_related("owner", "team", "created_by", "created_by_token")
        .prefetch_related("derived_from")
        .in_bulk(fact_ids)
    )
    return [found[i] for i in dict.fromkeys(fact_ids) if i in found]


def fact_lineage_visible(*, user: Any, fact: Fact) -> tuple[list[Fact], list[Fact]]:
    """What ``fact`` was drawn from (a summary's sources, a merge's earlier wordings)
    and what was drawn from it, as far as ``user`` may read them."""
    visible = Fact.objects.visible_to(user).order_by("created_at", "pk")
    sources = list(visible.filter(derivatives=fact))
    derivatives = list(visible.filter(derived_from=fact))
    return sources, derivatives


@dataclass(frozen=True)
class FactHit:
    fact: Fact
    snippet: str  # the content around the matched words, marked [[ ]]; "" for a hit by meaning
    score: float  # higher is better


@dataclass(frozen=True)
class FactSearch:
    hits: list[FactHit]
    mode: str  # exact, hybrid, or keyword (hybrid asked with embeddings off)

    @property
    def facts(self) -> list[Fact]:
        return [hit.fact for hit in self.hits]


def fact_search(
    *,
    user: Any,
    query: str,
    limit: int = 50,
    filters: dict[str, Any] | None = None,
    mode: str | None = None,
) -> FactSearch:
    """Visible facts for a search box, best first. Hybrid (the default) reads a sentence
    as recall does: facts holding every word, any word but stopwords, or close in
    meaning; exact: facts whose content or tags hold every word as written (the last as
    a prefix), not only a form of it.
    Any text is accepted: operators are searched as words."""
    chosen = search_mode_clean(mode)
    query = search_query_clean(query, max_chars=SEARCH_MAX_CHARS)
    scope = fact_list_visible(user=user, filters=filters)
    vector = query_vector(query) if chosen == SearchMode.HYBRID else None
    result = search_box(
        fts=FACT_FTS,
        query=query,
        within=scope,
        limit=limit,
        mode=chosen,
        vectors=FACT_VECTORS,
        vector=vector,
        snippet_column=0,
    )
    found = scope.in_bulk([h.id for h in result.hits])
    if chosen == SearchMode.EXACT:  # the words as written, not their other forms
        found = {
            pk: fact
            for pk, fact in found.items()
            if holds_words(f"{fact.content} {' '.join(fact.tags or [])}", query)
        }
    hits = [
        FactHit(fact=found[h.id], snippet=h.snippet, score=h.score)
        for h in result.hits
        if h.id in found
    ]
    return FactSearch(hits=hits, mode=result.mode)


def _counted(user: Any, *, instance: bool) -> QuerySet[Fact]:
    """The facts a count reads: those ``user`` may read or, for staff who ask for the
    whole instance, every fact of every user."""
    if not instance:
        return Fact.objects.visible_to(user).order_by()
    if not (user.is_authenticated and user.is_active and user.is_staff):
        raise Forbidden("Only staff read the counts of the whole instance.")
    return Fact.objects.order_by()


def fact_stats(*, user: Any, status: str | None = None, instance: bool = False) -> dict[str, Any]:
    """Counts of the visible facts by category, visibility and layer, of the facts of
    ``status`` as ``fact_list_visible`` reads it (active by default, ``all`` for every
    status); ``by_status`` counts every status, so that the others can be asked for."""
    visible = _counted(user, instance=instance)
    facts = _with_status(visible, status)

    def counts(name: str, rows: QuerySet[Fact] = facts) -> dict[str, int]:
        return {str(row[name]): row["n"] for row in rows.values(name).annotate(n=Count("id"))}

    by_category = counts("category")
    return {
        "total": sum(by_category.values()),
        "by_category": by_category,
        "by_status": counts("status", visible),
        "by_visibility": counts("visibility"),
        "by_layer": counts("layer"),
    }


def fact_layer_stats(
    *, user: Any, status: str | None = None, instance: bool = False
) -> list[dict[str, Any]]:
    """Per layer: how many facts of ``status`` (as ``fact_list_visible`` reads it:
    active by default, ``all`` for every status), how many of them are distilled, and
    how many facts of the layer are active."""
    visible = _counted(user, instance=instance)
    facts = _with_status(visible, status)
    rows = {row["layer"]: row for row in facts.values("layer").annotate(total=Count("id"))}
    active = dict(
        visible.filter(status=Status.ACTIVE)
        .values("layer")
        .annotate(n=Count("id"))
        .values_list("layer", "n")
    )
    distilled = dict(
        facts.filter(distilled=True)
        .values("layer")
        .annotate(n=Count("id"))
        .values_list("layer", "n")
    )
    return [
        {
            "layer": layer.value,
            "name": layer.label,
            "total": rows.get(layer.value, {}).get("total", 0),
            "active": active.get(layer.value, 0),
            "distilled": distilled.get(layer.value, 0),
        }
        for layer in Layer
    ]


def days_back(days: int) -> list[date]:
    """The last ``days`` days in the server's time zone, oldest first, today last."""
    today = timezone.localdate()
    return [today - timedelta(days=back) for back in range(days - 1, -1, -1)]


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, datetime.min.time()))


def fact_written_per_day(*, user: Any, days: int = 30, instance: bool = False) -> dict[date, int]:
    """How many of the facts counted (see ``_counted``; of every status: an earlier
    wording a merge keeps was written too) were written on each of the last ``days``
    days, by the server's calendar; a day without any is 0."""
    wanted = days_back(days)
    written = dict(
        _counted(user, instance=instance)
        .filter(created_at__gte=_day_start(wanted[0]))
        .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .values("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    return {day: written.get(day, 0) for day in wanted}


def recall_served_per_day(*, user: Any, days: int = 30, instance: bool = False) -> dict[date, int]:
    """The recalls served on each of the last ``days`` days: to ``user`` and their
    agents, or (staff, ``instance``) to everyone."""
    wanted = days_back(days)
    rows = RecallDay.objects.filter(day__gte=wanted[0])
    if instance:
        _counted(user, instance=True)  # staff only
    else:
        rows = rows.filter(user_id=user.pk)
    served = dict(rows.order_by().values("day").annotate(n=Sum("count")).values_list("day", "n"))
    return {day: served.get(day, 0) for day in wanted}


def fact_agents_recent(
    *, user: Any, since: datetime, instance: bool = False, limit: int = 8
) -> list[dict[str, Any]]:
    """The agents (by token) that wrote facts counted since ``since``, the latest writer
    first: each token's name and user, how many facts it wrote and when it last did,
    with the latest of them that ``user`` may read (staff counting the whole instance
    still read no one else's private facts)."""
    facts = _counted(user, instance=instance).filter(
        created_at__gte=since, created_by_token__isnull=False
    )
    readable = Fact.objects.visible_to(user).filter(
        created_at__gte=since, created_by_token__isnull=False
    )
    agents = (
        facts.values(
            "created_by_token", "created_by_token__name", "created_by_token__user__username"
        )
        .annotate(n=Count("id"), last=Max("created_at"))
        .order_by("-last", "created_by_token")[:limit]
    )
    return [
        {
            "name": row["created_by_token__name"],
            "user": row["created_by_token__user__username"],
            "count": row["n"],
            "last_at": row["last"],
            "latest": readable.filter(created_by_token=row["created_by_token"])
            .order_by("-created_at", "-id")
            .only("pk", "content")
            .first(),
        }
        for row in agents
    ]


def fact_embedding_progress(*, user: Any, instance: bool = False) -> dict[str, Any]:
    """How many of the active facts, those recall can use, have their vector from the
    configured model: ``user``'s own, or (staff, ``instance``) every user's. Archived
    ones (earlier wordings kept by merges among them) wait for the backfill and are not
    counted."""
    config = memory_config_get()
    facts = _counted(user, instance=True) if instance else Fact.objects.filter(owner=user)
    facts = facts.filter(status=Status.ACTIVE)
    model = embedder_model_id(config)
    total = facts.count()
    waiting = facts.exclude(embedding_model=model).count()
    embedded = total - waiting
    enabled = config.embeddings_enabled
    return {
        "enabled": enabled,
        "model": model,
        "total": total,
        "embedded": embedded,
        "waiting": waiting if enabled else 0,
        "percent": round(embedded * 100 / total) if total else 100,
        "complete": not enabled or waiting == 0,
        "instance_wide": instance,
    }


def memory_review_pending_count(*, user: Any, instance: bool = False) -> int:
    """Proposals waiting for review: ``user``'s, or (staff, ``instance``) everyone's."""
    reviews = MemoryReview.objects.filter(state=ReviewState.PENDING)
    if instance:
        _counted(user, instance=True)  # staff only
        return reviews.count()
    return reviews.filter(owner_id=user.pk).count()


def fact_export_rows(*, user: Any, chunk_size: int = 500) -> Iterator[dict[str, Any]]:
    """Every visible fact with its provenance, as plain dicts, in id order."""
    facts = (
        Fact.objects.visible_to(user)
        .select_related("owner", "team", "created_by", "created_by_token")
        .prefetch_related("derived_from")
        .order_by("pk")
    )
    for fact in facts.iterator(chunk_size=chunk_size):
        yield fact_as_dict(fact)


def fact_export_owned(*, user: Any, chunk_size: int = 500) -> Iterator[dict[str, Any]]:
    """Every fact ``user`` owns, in every layer and status, with its provenance and
    lineage, the key an import knows it by, and its history (the audit events about
    it), in id order. Read a chunk at a time: memory stays flat however many there are."""
    from teams.selectors import audit_events_of

    facts = (
        Fact.objects.owned_by(user)
        .select_related("owner", "team", "created_by", "created_by_token")
        .prefetch_related(Prefetch("derived_from", queryset=Fact.objects.only("id")))
        .order_by("pk")
    )
    for chunk in batched(facts.iterator(chunk_size=chunk_size), chunk_size):
        history = audit_events_of(target_type="fact", target_ids=[f.pk for f in chunk])
        for fact in chunk:
            yield {
                **fact_as_dict(fact),
                "import_key": fact.export_key,
                "history": history.get(fact.pk, []),
            }


def memory_review_export_rows(*, user: Any) -> Iterator[dict[str, Any]]:
    """Every proposal extraction made for ``user``, decided or not, oldest first."""
    reviews = MemoryReview.objects.filter(owner_id=user.pk).select_related("team")
    for review in reviews.order_by("pk").iterator(chunk_size=500):
        yield {
            "id": review.pk,
            "state": review.state,
            "content": review.content,
            "category": review.category,
            "importance": review.importance,
            "confidence": review.confidence,
            "sentiment": review.sentiment,
            "tags": review.tags,
            "source": review.source,
            "origin": review.origin,
            "source_excerpt": review.source_excerpt,
            "session_id": review.session_id,
            "visibility": review.visibility,
            "team": review.team.name if review.team_id else None,
            "project": review.project,
            "supersedes": review.supersedes_id,
            "fact": review.fact_id,
            "provider": review.provider,
            "created_at": review.created_at.isoformat(),
            "decided_at": review.decided_at.isoformat() if review.decided_at else None,
        }


def fact_as_dict(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.pk,
        "content": fact.content,
        "category": fact.category,
        "source": fact.source,
        "layer": fact.layer,
        "distilled": fact.distilled,
        "importance": fact.importance,
        "confidence": fact.confidence,
        "sentiment": fact.sentiment,
        "tags": fact.tags,
        "status": fact.status,
        "visibility": fact.visibility,
        "team": fact.team.name if fact.team_id else None,
        "project": fact.project,
        "owner": fact.owner.get_username(),
        "access_count": fact.access_count,
        "last_accessed_at": fact.last_accessed_at.isoformat() if fact.last_accessed_at else None,
        "valid_from": fact.valid_from.isoformat(),
        "valid_until": fact.valid_until.isoformat() if fact.valid_until else None,
        "superseded_by": fact.superseded_by_id,
        "tier": fact.tier,
        "fleet": fact.fleet,
        "skill": fact.skill,
        "resolution_ref": fact.resolution_ref,
        "fingerprint": fact.fingerprint,
        "agent": fact.agent,
        "occurred_at": fact.occurred_at.isoformat(),
        "speaker": fact.speaker,
        "created_at": fact.created_at.isoformat(),
        "updated_at": fact.updated_at.isoformat(),
        "provenance": {
            "origin": fact.origin,
            "session_id": fact.session_id,
            "created_by": fact.created_by.get_username() if fact.created_by_id else None,
            "agent": fact.created_by_token.name if fact.created_by_token_id else None,
            "source_excerpt": fact.source_excerpt,
            "extraction_confidence": fact.extraction_confidence,
            "derived_from": [parent.pk for parent in fact.derived_from.all()],
            "provider": fact.provider,
        },
        "embedded_with": fact.embedding_model or None,
    }


# --- Forgetting -------------------------------------------------------------------------

# How close in meaning (all-MiniLM-L6-v2) a fact must be to a topic: beside every
# content word of a topic without names, to be certain; beside some of them (the fact
# says "ramen" of "the ramen recommendation", "kitchen" of "the kitchen renovation"), to
# be certain; beside its names when it holds none of the topic's other words ("Maya" for
# "Maya works nights"), to be certain; alone, to be certain; alone, to be shown as
# possible. The fewer of the topic's words a fact holds, the closer it must be. Measured
# by ``bench/forget_quality.py``: lower thresholds tick facts the user did not ask about
# (at 0.5 for some words, "Rui is having knee surgery" for "my knee surgery"; the labelled
# facts that hold some words and are not meant reach 0.52).
FORGET_TERMS_SIMILARITY = 0.35
FORGET_SOME_TERMS_SIMILARITY = 0.55
FORGET_NAMES_SIMILARITY = 0.6
FORGET_ALONE_SIMILARITY = 0.65
FORGET_POSSIBLE_SIMILARITY = 0.2
# A name the certain matches give beside the topic's name ("Rotterdam" in "Acme Corp's
# headquarters are in Rotterdam") is part of the topic when few other facts name it:
# theirs are shown. A name many facts give (the current employer, the partner) is a
# subject of its own.
FORGET_LINKED_MAX_FACTS = 3
# A tag of a certain match files the other facts it tags (or, a compound such as
# "on-call", that say it) under the topic too, shown; a tag on more facts than this is a
# broad area ("work"), not a part of the topic.
FORGET_FILED_MAX_FACTS = 20
FORGET_MAX_MATCHES = 5000
FORGET_VECTOR_CANDIDATES = 200


@dataclass
class ForgetMatch:
    fact: Fact
    certain: bool  # about the topic beyond doubt (ticked); otherwise possibly (shown)
    why: list[str]  # what matched: the topic's names and words, and how close in meaning


def fact_forget_preview(*, user: Any, topic: str) -> list[ForgetMatch]:
    """Every fact of ``user``'s own that may be about ``topic``, in any category, layer
    or status, each *certain* or *possible* with why. The topic is read as people say
    it (``memoryhub.engine.search.topic``): its names and content words, matched in the
    fact's own words (content and tags, never the words its session neighbours lend it
    for recall), and its meaning. A name counts where the fact writes it whole, by a
    word of it that names no one else ("Harbor" for "Project Harbor"), or by the role
    the user's own facts give it and no one else ("my ex", "the dog"). Certain: the fact
    names every name of the topic (none of them ambiguous), not only to date something
    else ("before the Acme years"), and holds one of its other words or is close to it;
    or, for a topic without names, holds every content word, not only as someone else's
    ("Maya's parents" for "my parents"), and is close to it, or says it is the user's
    own (or the user does it) as the topic does, or is filed under it by its own tag
    (or its meaning is not known: embeddings off, or not embedded yet), or holds some of
    them and is closer; or is very close alone. A word counts in another form of it
    ("allergic" for "allergies"). Possible: it holds some of them, or is somewhat close,
    or names the topic's person only by a first name others share, or calls one of an
    ambiguous name's people by their role, or names what the certain matches name beside
    the topic's names and few other facts do, or is filed under a certain match's tag.
    (A team admin deletes others' team facts one by one; a forget is about what one's
    own memory holds.)"""
    if not isinstance(topic, str) or not topic.strip():
        raise InvalidInput("Name the topic to forget.")
    if len(topic) > 500:
        raise InvalidInput("A topic is at most 500 characters.")
    read = topic_read(topic)
    scope = Fact.objects.owned_by(user) if user.is_authenticated else Fact.objects.none()

    def holding(words: list[str]) -> set[int]:
        if not words:
            return set()
        match = " OR ".join(match_all(w, prefix_last=False) for w in words)
        hits = FACT_FTS.search(match, limit=FORGET_MAX_MATCHES, within=scope, columns=FACT_FTS.own)
        return {hit.id for hit in hits}

    candidates = holding(read.search_words)
    if read.roots:  # other forms of its words ("allergic" for "allergies")
        roots = " OR ".join(f'"{root}"*' for root in read.roots)
        hits = FACT_FTS.search(roots, limit=FORGET_MAX_MATCHES, within=scope, columns=FACT_FTS.own)
        candidates.update(hit.id for hit in hits)
    closeness: dict[int, float] = {}
    vector = query_vector(read.core) if not read.empty else None
    if vector is not None:
        for hit in FACT_VECTORS.knn(vector, k=FORGET_VECTOR_CANDIDATES, within=scope):
            if hit.similarity >= FORGET_POSSIBLE_SIMILARITY:
                closeness[hit.id] = hit.similarity
    candidates.update(closeness)
    found = scope.select_related("owner", "team").in_bulk(list(candidates)[:FORGET_MAX_MATCHES])
    texts = {pk: f"{fact.content} {' '.join(fact.tags or [])}" for pk, fact in found.items()}
    # How the facts write a name (capitalised, alone, with a role) is read from their
    # content: tags are lower-cased labels.
    about = topic_refine(read, [fact.content for fact in found.values()])
    # What the texts taught (a name a role stands for, the roles of a name) is looked
    # for in the rest of the user's facts too.
    more = holding([w for w in about.search_words if w not in read.search_words]) - set(found)
    if more:
        found.update(scope.select_related("owner", "team").in_bulk(list(more)))
        texts.update({pk: f"{found[pk].content} {' '.join(found[pk].tags or [])}" for pk in more})
        about = topic_refine(read, [fact.content for fact in found.values()])
    ambiguous = [n for n in about.names if n.ambiguous]
    matches: list[ForgetMatch] = []
    named: list[Fact] = []  # certain matches that name the topic's names
    for pk, fact in found.items():
        held = topic_match(about, texts[pk], tags=fact.tags)
        near = closeness.get(pk, 0.0)
        if about.names:
            certain = (
                held.clear
                and not held.dated
                and (not about.terms or bool(held.terms) or near >= FORGET_NAMES_SIMILARITY)
            )
        else:
            # Without a meaning to compare (embeddings off, or the fact not embedded
            # yet) the words decide alone; where the fact says the thing is the user's
            # own, as the topic does ("my parents"), or is filed under the topic's word
            # ("health" of "my health information"), they need no meaning beside them.
            unknown = vector is None or not fact.embedding_model
            certain = (
                bool(about.terms)
                and len(held.terms) == len(about.terms)
                and not held.others
                and (near >= FORGET_TERMS_SIMILARITY or unknown or held.owned or bool(held.tagged))
            ) or (bool(held.terms) and not held.others and near >= FORGET_SOME_TERMS_SIMILARITY)
        certain = certain or (near >= FORGET_ALONE_SIMILARITY and not ambiguous)
        why = []
        if held.names:
            why.append(f"names {', '.join(held.names)}")
        if held.roles:
            why.append(f"calls it {', '.join(held.roles)}")
        for label in held.shared:
            why.append(f"names {label.split()[0]}: {label} or another?")
        if held.dated:
            why.append("only to date something else")
        for name in ambiguous:
            if name.label in held.names:
                why.append(f"which {name.label}? {', '.join(name.ambiguous)}")
        if held.terms:
            why.append(f"holds the words {', '.join(held.terms)}")
        if held.tagged:
            why.append(f"filed under {', '.join(held.tagged)}")
        if held.others:
            why.append("as someone else's")
        if pk in closeness:
            why.append(f"close in meaning ({near:.2f})")
        if why:
            matches.append(ForgetMatch(fact=fact, certain=certain, why=why))
        if certain and held.clear:
            named.append(fact)
    matches += _forget_linked(
        about=about,
        certain=named,
        filed=[m.fact for m in matches if m.certain],
        shown={m.fact.pk for m in matches},
        texts=list(texts.values()),
        holding=holding,
        scope=scope,
    )
    matches.sort(
        key=lambda m: (not m.certain, -closeness.get(m.fact.pk, 0.0), -len(m.why), -m.fact.pk)
    )
    return matches


def _forget_linked(
    *,
    about: Any,
    certain: list[Fact],
    filed: list[Fact],
    shown: set[int],
    texts: list[str],
    holding: Any,
    scope: QuerySet,
) -> list[ForgetMatch]:
    """The facts, not yet shown, that name what the ``certain`` matches name beside the
    topic's names, where few facts do, or that are filed under a tag of a ``filed``
    (certain) match: possible matches. (A topic without names links no name: beside a
    word, a name is not told apart from the user's own.)"""
    found: dict[int, list[str]] = {}
    about_ids = {fact.pk for fact in certain}
    for phrase in topic_linked(about, [fact.content for fact in certain], texts):
        label = " ".join(phrase)
        ids = holding([label]) - about_ids
        if not ids or len(ids) > FORGET_LINKED_MAX_FACTS:
            continue
        for pk in ids - shown:
            found.setdefault(pk, []).append(f"names {label}, as facts about the topic do")
    filed_ids = {fact.pk for fact in filed}
    for tag in dict.fromkeys(t.lower() for fact in filed for t in fact.tags or []):
        said = tuple(words(tag))
        if not said:
            continue
        ids = holding([" ".join(said)]) - filed_ids
        rows = scope.filter(pk__in=ids).values_list("pk", "content", "tags")
        # Its tag, or, for a compound ("on-call"), the compound in its own words.
        under = [
            pk
            for pk, content, tags in rows
            if tag in {t.lower() for t in tags or []}
            or ("-" in tag and holds_phrase(words(content), said))
        ]
        if len(under) > FORGET_FILED_MAX_FACTS:
            continue
        for pk in set(under) - shown:
            found.setdefault(pk, []).append(f"filed under {tag}, as facts about the topic are")
    if not found:
        return []
    facts = scope.select_related("owner", "team").in_bulk(list(found))
    return [
        ForgetMatch(
            fact=fact,
            certain=False,
            why=found[pk],
        )
        for pk, fact in facts.items()
    ]


def learning_as_dict(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.pk,
        "skill": fact.skill,
        "content": fact.content,
        "fleet": fact.fleet,
        "agent": fact.agent,
        "fingerprint": fact.fingerprint,
        "resolution": fact.resolution_ref,
        "created_at": fact.created_at.isoformat(),
    }


def learnings_of_fingerprint(
    *, user: Any, fleet: str | None, cluster: str, limit: int = 50
) -> dict[str, Any]:
    """The fingerprint index of one cluster: its learnings the user may read (newest
    first; an agent's only of its own fleet or of none) and their resolutions."""
    if not isinstance(cluster, str) or not cluster.strip() or len(cluster) > 200:
        raise InvalidInput("A fingerprint cluster is text of 1 to 200 characters.")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
        raise InvalidInput("limit is between 1 and 200.")
    facts = Fact.objects.visible_to(user).filter(
        tier="skill", category=Category.LEARNING, status=Status.ACTIVE, fingerprint=cluster
    )
    if fleet is not None:
        facts = facts.filter(fleet__in=[fleet, ""])
    found = list(facts.order_by("-created_at", "-id")[:limit])
    resolutions = list(dict.fromkeys(f.resolution_ref for f in found if f.resolution_ref))
    return {
        "cluster": cluster,
        "resolved": bool(resolutions),
        "resolutions": resolutions,
        "learnings": [learning_as_dict(f) for f in found],
    }
