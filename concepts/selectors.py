"""Reads of the concept graph. Every one starts from the facts the user may read
(``Fact.objects.visible_to(user)``, current ones only): a mention or triple is seen
through its fact, so nodes, edges, counts, weights, names and types are all computed
from what the user can see.

An entity is named to the reader by its ref, never its id, and whatever could be ordered
by ids (ties among equally weighted edges or mentioned entities, the paths kept of many
as short, the nodes kept of a neighbourhood, the order the layout reads) is ordered by
names or refs: ids follow the order names were first written in, anyone's facts
included.

Paths are found by a breadth-first search from both ends at once, one query per hop
over the visible edges of the frontier (measured against loading the visible graph
into memory: see ``bench/concepts.py``).
"""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from memoryhub.engine.errors import InvalidInput, NotFound

from .models import ENTITY_TYPES, Alias, Entity, Mention, Triple
from .normalise import entity_key, is_ref, key_without_class_noun
from .services import RAW_LAYER, fact_model

MAX_HOPS = 6
MAX_PATHS = 20
MAX_RELATIONS = 500
SOURCES_PER_EDGE = 20
# Ids per query where a lookup by a set of entities may be large.
ID_CHUNK = 10_000
# A hop whose frontier grows past this many entities stops the search: no answer is a
# path through thousands of nodes.
MAX_FRONTIER = 20_000
DIRECTIONS = ("both", "out", "in")
_SPECIFIC = ("person", "organisation", "project", "tool", "place")


def visible_facts(*, user: Any, project: str | None = None) -> QuerySet:
    """The facts whose triples ``user`` sees: current raw facts they may read."""
    facts = fact_model().objects.visible_to(user).recallable().filter(layer=RAW_LAYER)
    if project is not None:
        facts = facts.filter(project=project)
    return facts.values("pk")


def concept_triples_visible(*, user: Any, project: str | None = None) -> QuerySet[Triple]:
    """Triples stated by facts ``user`` can see. The fact of each triple is looked up by
    its key (EXISTS), so a query about one entity reads that entity's triples and their
    facts, not every fact the user can see."""
    facts = visible_facts(user=user, project=project)
    return Triple.objects.filter(Exists(facts.filter(pk=OuterRef("fact_id"))))


def standing(mentions: QuerySet[Mention]) -> QuerySet[Mention]:
    """The ``mentions`` whose name stands: decided by their own fact, or by another one
    still current and unchanged since (deleted, changed or archived, it decides nothing
    until the catch-up writes the mention again)."""
    decided_by = (
        fact_model()
        .objects.recallable()
        .filter(
            layer=RAW_LAYER, pk=OuterRef("evidence_id"), updated_at=OuterRef("evidence_version")
        )
    )
    return mentions.filter(Q(evidence_version__isnull=True) | Exists(decided_by))


def concept_mentions_visible(*, user: Any, project: str | None = None) -> QuerySet[Mention]:
    """Mentions in facts ``user`` can see (each fact looked up by its key), whose names
    stand (``standing``)."""
    facts = visible_facts(user=user, project=project)
    return standing(Mention.objects.filter(Exists(facts.filter(pk=OuterRef("fact_id")))))


@dataclass(frozen=True)
class EntityView:
    """An entity as one user sees it: the name and type most of their facts give it.
    ``id`` is for queries only: what a reader is given is ``ref``."""

    id: int
    ref: str
    name: str
    type: str
    mentions: int

    def as_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "name": self.name, "type": self.type, "mentions": self.mentions}

    def as_end(self) -> dict[str, Any]:
        """The entity as an end of a relation: named, typed, not counted."""
        return {"ref": self.ref, "name": self.name, "type": self.type}


def _view(entity_id: int, ref: str, names: Counter, types: Counter, mentions: int) -> EntityView:
    """An entity by the name most of its mentions give it, and the type (a specific one
    first among equals)."""
    name = min(names.items(), key=lambda item: (-item[1], item[0]))[0]
    kind = min(types.items(), key=lambda item: (-item[1], item[0] not in _SPECIFIC, item[0]))[0]
    return EntityView(id=entity_id, ref=ref, name=name, type=kind, mentions=mentions)


def _keys(entity_ids: Iterable[int]) -> dict[int, str]:
    """The keys of these entities, to order by name what would otherwise follow ids."""
    ids = list(entity_ids)
    keys: dict[int, str] = {}
    for at in range(0, len(ids), ID_CHUNK):
        keys.update(Entity.objects.filter(pk__in=ids[at : at + ID_CHUNK]).values_list("pk", "key"))
    return keys


def concept_entities_describe(
    *, user: Any, entity_ids: Iterable[int], project: str | None = None
) -> dict[int, EntityView]:
    """The entities of ``entity_ids`` that ``user`` sees, by id (others are absent)."""
    ids = list(set(entity_ids))
    if not ids:
        return {}
    names: dict[int, Counter] = defaultdict(Counter)
    types: dict[int, Counter] = defaultdict(Counter)
    mentions: Counter = Counter()
    refs: dict[int, str] = {}
    rows = (
        concept_mentions_visible(user=user, project=project)
        .filter(entity_id__in=ids)
        .values_list("entity_id", "entity__ref", "name", "type")
        .annotate(n=Count("fact_id"))
        .order_by()
    )
    for entity_id, ref, name, kind, n in rows:
        refs[entity_id] = ref
        names[entity_id][name] += n
        types[entity_id][kind] += n
        mentions[entity_id] += n
    return {
        entity_id: _view(entity_id, refs[entity_id], names[entity_id], types[entity_id], total)
        for entity_id, total in mentions.items()
    }


def _ends_described(edges: list[dict[str, Any]]) -> dict[int, EntityView]:
    """The ends of ``edges`` named and typed as the facts stating them (their listed
    sources, all visible) name and type them. Bounded by the edges' sources, where a
    count of every visible mention of a much-mentioned end would read thousands of rows
    per end; ``mentions`` is left 0 (an end is not counted)."""
    facts = {fact_id for e in edges for fact_id in e["source_fact_ids"]}
    ends = {e["subject_id"] for e in edges} | {e["object_id"] for e in edges}
    names: dict[int, Counter] = defaultdict(Counter)
    types: dict[int, Counter] = defaultdict(Counter)
    refs: dict[int, str] = {}
    for entity_id, ref, name, kind in standing(
        Mention.objects.filter(fact_id__in=facts, entity_id__in=ends)
    ).values_list("entity_id", "entity__ref", "name", "type"):
        refs[entity_id] = ref
        names[entity_id][name] += 1
        types[entity_id][kind] += 1
    return {i: _view(i, refs[i], names[i], types[i], 0) for i in names}


def concept_entity_get_visible(*, user: Any, ref: Any, project: str | None = None) -> EntityView:
    """The entity of ``ref`` if a visible fact mentions it; NotFound otherwise (an id, or
    anything else that is not a ref, names no entity)."""
    if not isinstance(ref, str) or not is_ref(ref):
        raise NotFound("No such entity: an entity is named by its ref, as the graph gives it.")
    entity_id = Entity.objects.filter(ref=ref).values_list("pk", flat=True).first()
    found = {} if entity_id is None else _describe_one(user, entity_id, project)
    if entity_id not in found:
        raise NotFound(f"No entity {ref}.")
    return found[entity_id]


def _describe_one(user: Any, entity_id: int, project: str | None) -> dict[int, EntityView]:
    return concept_entities_describe(user=user, entity_ids=[entity_id], project=project)


def concept_entity_find_visible(*, user: Any, name: Any, project: str | None = None) -> EntityView:
    """The entity ``name`` names for ``user`` (through the aliases they can see, then
    without a class noun such as "project", then their facts' names); NotFound when no
    visible fact mentions it."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("Name an entity.")
    if len(name) > 1000:
        raise InvalidInput("An entity name is at most 1000 characters.")
    key = entity_key(name)
    if not key:
        raise NotFound(f"No entity named {name[:100]!r}.")
    keys = [key]
    alias = Alias.objects.visible_to(user).filter(alias_key=key).order_by("id").first()
    if alias is not None:
        keys.insert(0, alias.target_key)
    # "atlas project" written in lower case, for the Atlas the facts call "the Atlas
    # project" (a key without the noun only when the name with it names nothing).
    shorter = key_without_class_noun(name)
    if shorter and shorter != key:
        keys.append(shorter)
    for candidate in keys:
        entity = Entity.objects.filter(key=candidate).values_list("pk", flat=True).first()
        if entity is not None:
            found = _describe_one(user, entity, project)
            if entity in found:
                return found[entity]
    # A name as the user's facts write it ("user" is each writer's own node).
    mention = (
        concept_mentions_visible(user=user, project=project)
        .filter(Q(raw_key=key) | Q(name__iexact=" ".join(name.split())))
        .values_list("entity_id", flat=True)
        .first()
    )
    if mention is not None:
        return _describe_one(user, mention, project)[mention]
    raise NotFound(f"No entity named {name[:100]!r}.")


def _edges(triples: QuerySet[Triple], *, limit: int, offset: int = 0) -> list[dict[str, Any]]:
    """Edges (subject, relation, object) of ``triples``, heaviest first, with weight
    (facts stating it) and up to ``SOURCES_PER_EDGE`` source fact ids."""
    grouped = list(
        triples.values("subject_id", "relation", "object_id")
        .annotate(weight=Count("fact_id", distinct=True))
        .order_by("-weight", "subject__key", "relation", "object__key")[offset : offset + limit]
    )
    if not grouped:
        return []
    # The heaviest edges' sources: one query bounded by their ends, the pairs that are
    # not among them dropped here (an OR of every edge costs more to build than to run).
    keys = {(e["subject_id"], e["relation"], e["object_id"]) for e in grouped}
    sources: dict[tuple[int, str, int], list[int]] = defaultdict(list)
    for s, r, o, fact_id in (
        triples.filter(
            subject_id__in={s for s, _, _ in keys},
            object_id__in={o for _, _, o in keys},
            relation__in={r for _, r, _ in keys},
        )
        .order_by("fact_id")
        .values_list("subject_id", "relation", "object_id", "fact_id")
    ):
        if (s, r, o) in keys and len(sources[(s, r, o)]) < SOURCES_PER_EDGE:
            sources[(s, r, o)].append(fact_id)
    return [
        {
            **edge,
            "source_fact_ids": sources[(edge["subject_id"], edge["relation"], edge["object_id"])],
        }
        for edge in grouped
    ]


def _named(edges: list[dict[str, Any]], views: dict[int, EntityView]) -> list[dict[str, Any]]:
    return [
        {
            "subject": views[e["subject_id"]].as_end(),
            "relation": e["relation"],
            "object": views[e["object_id"]].as_end(),
            "weight": e["weight"],
            "source_fact_ids": e["source_fact_ids"],
        }
        for e in edges
        if e["subject_id"] in views and e["object_id"] in views
    ]


def _clean_relation(relation: str | None) -> str | None:
    if relation is None or relation == "":
        return None
    if len(relation) > 64:
        raise InvalidInput("A relation name is at most 64 characters.")
    return "_".join(relation.strip().lower().replace("-", " ").split())


def concept_relations(
    *,
    user: Any,
    entity: EntityView,
    relation: str | None = None,
    direction: str = "both",
    type: str | None = None,
    limit: int = 50,
    project: str | None = None,
) -> list[dict[str, Any]]:
    """The relations ``entity`` takes part in (as subject, object or both), heaviest
    first, optionally of one relation and with the other end of one type."""
    if direction not in DIRECTIONS:
        raise InvalidInput(f"direction must be one of {', '.join(DIRECTIONS)}.")
    if not 1 <= limit <= MAX_RELATIONS:
        raise InvalidInput(f"limit must be between 1 and {MAX_RELATIONS}.")
    if type is not None and type not in ENTITY_TYPES:
        raise InvalidInput(f"type must be one of {', '.join(ENTITY_TYPES)}.")
    triples = concept_triples_visible(user=user, project=project)
    ends = {
        "both": Q(subject_id=entity.id) | Q(object_id=entity.id),
        "out": Q(subject_id=entity.id),
        "in": Q(object_id=entity.id),
    }[direction]
    triples = triples.filter(ends)
    relation = _clean_relation(relation)
    if relation:
        triples = triples.filter(relation=relation)
    # With a type filter the other ends are typed first, so the limit counts matches.
    edges = _edges(triples, limit=MAX_RELATIONS if type else limit)
    named = _named(edges, {**_ends_described(edges), entity.id: entity})
    if type:
        named = [
            e
            for e in named
            if (e["object"] if e["subject"]["ref"] == entity.ref else e["subject"])["type"] == type
        ][:limit]
    return named


def concept_neighbours(
    *, user: Any, entity: EntityView, type: str | None = None, project: str | None = None
) -> list[EntityView]:
    """The entities one edge away from ``entity`` (of ``type``), most mentioned first."""
    triples = concept_triples_visible(user=user, project=project)
    ids = set(triples.filter(subject_id=entity.id).values_list("object_id", flat=True))
    ids |= set(triples.filter(object_id=entity.id).values_list("subject_id", flat=True))
    ids.discard(entity.id)
    views = concept_entities_describe(user=user, entity_ids=ids, project=project)
    found = [v for v in views.values() if type is None or v.type == type]
    return sorted(found, key=lambda v: (-v.mentions, v.name, v.ref))


# --- Paths --------------------------------------------------------------------------------


def _hop(triples: QuerySet[Triple], frontier: set[int]) -> list[tuple[int, str, int]]:
    """Visible (subject, relation, object) edges touching ``frontier``."""
    ids = list(frontier)
    return list(
        triples.filter(Q(subject_id__in=ids) | Q(object_id__in=ids))
        .values_list("subject_id", "relation", "object_id")
        .distinct()
    )


def concept_paths(
    *,
    user: Any,
    start: EntityView,
    end: EntityView,
    max_hops: int = 3,
    limit: int = 5,
    project: str | None = None,
) -> list[list[dict[str, Any]]]:
    """The shortest paths (at most ``limit``) of at most ``max_hops`` edges between two
    entities, each a list of triples in order; edges are followed either way, and each
    triple keeps its own direction. [] when none is that short."""
    if not 1 <= max_hops <= MAX_HOPS:
        raise InvalidInput(f"max_hops must be between 1 and {MAX_HOPS}.")
    if not 1 <= limit <= MAX_PATHS:
        raise InvalidInput(f"limit must be between 1 and {MAX_PATHS}.")
    if start.id == end.id:
        return []
    triples = concept_triples_visible(user=user, project=project)
    # Per side: node -> the edges that reached it from the previous level.
    parents: list[dict[int, list[tuple[int, tuple[int, str, int]]]]] = [
        {start.id: []},
        {end.id: []},
    ]
    frontiers = [{start.id}, {end.id}]
    levels: list[dict[int, int]] = [{start.id: 0}, {end.id: 0}]
    depth = [0, 0]
    meeting: set[int] = set()
    while depth[0] + depth[1] < max_hops and not meeting:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        if not frontiers[side] or len(frontiers[side]) > MAX_FRONTIER:
            break
        reached: dict[int, list[tuple[int, tuple[int, str, int]]]] = defaultdict(list)
        for edge in _hop(triples, frontiers[side]):
            s, _, o = edge
            for here, there in ((s, o), (o, s)):
                if here in frontiers[side] and there not in parents[side]:
                    reached[there].append((here, edge))
        parents[side].update(reached)
        frontiers[side] = set(reached)
        depth[side] += 1
        levels[side].update(dict.fromkeys(reached, depth[side]))
        meeting = set(parents[0]) & set(parents[1])
    if not meeting:
        return []
    shortest = min(levels[0][n] + levels[1][n] for n in meeting)
    meeting = {n for n in meeting if levels[0][n] + levels[1][n] == shortest}
    # Of more paths as short, those kept are the first by the names along them.
    on_walks = _on_walks(parents, meeting)
    keys = _keys(on_walks[0] | on_walks[1])
    for side in (0, 1):
        for node in on_walks[side]:
            parents[side][node].sort(
                key=lambda step: (keys.get(step[0], ""), step[1][1], keys.get(step[1][0], ""))
            )

    def walks(side: int, node: int) -> Iterable[list[tuple[int, str, int]]]:
        if not parents[side][node]:
            yield []
            return
        for previous, edge in parents[side][node]:
            for walk in walks(side, previous):
                yield [*walk, edge]

    found: list[list[tuple[int, str, int]]] = []
    for node in sorted(meeting, key=lambda n: keys.get(n, "")):
        for head in walks(0, node):
            for tail in walks(1, node):
                found.append(head + tail[::-1])
                if len(found) >= limit:
                    break
            if len(found) >= limit:
                break
        if len(found) >= limit:
            break
    views = concept_entities_describe(
        user=user,
        entity_ids={n for path in found for s, _, o in path for n in (s, o)},
        project=project,
    )
    return [
        [
            {"subject": views[s].as_dict(), "relation": r, "object": views[o].as_dict()}
            for s, r, o in path
        ]
        for path in found
    ]


def _on_walks(
    parents: list[dict[int, list[tuple[int, tuple[int, str, int]]]]], meeting: set[int]
) -> tuple[set[int], set[int]]:
    """The nodes on the walks from each end to the meeting nodes."""
    sides: list[set[int]] = []
    for side in (0, 1):
        seen, todo = set(meeting), list(meeting)
        while todo:
            for previous, _ in parents[side][todo.pop()]:
                if previous not in seen:
                    seen.add(previous)
                    todo.append(previous)
        sides.append(seen)
    return sides[0], sides[1]


# --- Lists and stats ----------------------------------------------------------------------


def concept_nodes_visible(
    *,
    user: Any,
    type: str | None = None,
    q: str | None = None,
    limit: int = 50,
    offset: int = 0,
    project: str | None = None,
) -> tuple[list[EntityView], int]:
    """Entities by mentions (most first) and how many there are; ``q`` matches names,
    ``type`` the type some visible fact gives them."""
    if type is not None and type not in ENTITY_TYPES:
        raise InvalidInput(f"type must be one of {', '.join(ENTITY_TYPES)}.")
    mentions = concept_mentions_visible(user=user, project=project)
    if type:
        mentions = mentions.filter(entity_id__in=mentions.filter(type=type).values("entity_id"))
    if q:
        if len(q) > 200:
            raise InvalidInput("A search is at most 200 characters.")
        mentions = mentions.filter(
            entity_id__in=mentions.filter(name__icontains=q.strip()).values("entity_id")
        )
    ranked = mentions.values("entity_id").annotate(n=Count("fact_id")).order_by("-n", "entity__key")
    count = ranked.count()
    ids = [row["entity_id"] for row in ranked[offset : offset + limit]]
    views = concept_entities_describe(user=user, entity_ids=ids, project=project)
    return [views[i] for i in ids if i in views], count


def concept_edges_visible(
    *,
    user: Any,
    relation: str | None = None,
    limit: int = 50,
    offset: int = 0,
    project: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Edges, heaviest first, with their entities, and how many there are."""
    triples = concept_triples_visible(user=user, project=project)
    relation = _clean_relation(relation)
    if relation:
        triples = triples.filter(relation=relation)
    count = triples.values("subject_id", "relation", "object_id").distinct().count()
    edges = _edges(triples, limit=limit, offset=offset)
    return _named(edges, _ends_described(edges)), count


def concept_stats(*, user: Any, project: str | None = None) -> dict[str, Any]:
    """Nodes, edges, triples and facts of the graph ``user`` sees, nodes by type and
    edges by relation."""
    triples = concept_triples_visible(user=user, project=project)
    mentions = concept_mentions_visible(user=user, project=project)
    types: dict[int, Counter] = defaultdict(Counter)
    for entity_id, kind, n in (
        mentions.values_list("entity_id", "type").annotate(n=Count("fact_id")).order_by()
    ):
        types[entity_id][kind] += n
    by_type = Counter(
        min(c.items(), key=lambda item: (-item[1], item[0] not in _SPECIFIC, item[0]))[0]
        for c in types.values()
    )
    by_relation = dict(
        triples.values_list("relation")
        .annotate(n=Count("id"))
        .order_by("-n", "relation")
        .values_list("relation", "n")[:50]
    )
    return {
        "nodes": len(types),
        "edges": triples.values("subject_id", "relation", "object_id").distinct().count(),
        "triples": triples.count(),
        "facts": triples.values("fact_id").distinct().count(),
        "by_type": dict(sorted(by_type.items(), key=lambda item: (-item[1], item[0]))),
        "by_relation": by_relation,
    }


def concept_entity_sources(
    *, user: Any, entity: EntityView, limit: int = 50, project: str | None = None
) -> list[dict[str, Any]]:
    """The visible facts that mention ``entity``, newest first."""
    facts = (
        fact_model()
        .objects.filter(
            pk__in=concept_mentions_visible(user=user, project=project)
            .filter(entity_id=entity.id)
            .values("fact_id")
        )
        .order_by("-created_at", "-pk")[:limit]
    )
    return [
        {"id": f.pk, "content": f.content, "category": f.category, "visibility": f.visibility}
        for f in facts
    ]


def concept_relation_facts(
    *, user: Any, relations: list[dict[str, Any]], project: str | None = None
) -> dict[int, str]:
    """The text of the visible facts behind ``relations`` (their ``source_fact_ids``),
    by id: what the entity panel quotes under each relation."""
    ids = {i for r in relations for i in r["source_fact_ids"]}
    if not ids:
        return {}
    facts = visible_facts(user=user, project=project).filter(pk__in=ids)
    return dict(fact_model().objects.filter(pk__in=facts).values_list("pk", "content"))


def concept_aliases_visible(*, user: Any) -> QuerySet[Alias]:
    return Alias.objects.visible_to(user).order_by("alias_key", "id")


# --- The graph view -----------------------------------------------------------------------

MAX_VIEW_NODES = 2000
MAX_VIEW_HOPS = 3
# Layout iterations shrink as the graph grows: each is quadratic in the nodes.
_LAYOUT_WORK = 40_000_000


def _spring(graph: Any, seed: int) -> list[tuple[float, float]]:
    """Force-directed positions of one connected graph, in [-1, 1]² (rustworkx's
    Fruchterman-Reingold spring layout), the same for the same graph."""
    import rustworkx

    size = graph.num_nodes()
    if size == 1:
        return [(0.0, 0.0)]
    if size == 2:
        return [(-1.0, 0.0), (1.0, 0.0)]
    iterations = max(8, min(60, _LAYOUT_WORK // (size**2 * 5)))
    positions = rustworkx.spring_layout(
        graph, num_iter=iterations, seed=seed, weight_fn=lambda w: w, scale=1.0
    )
    return [tuple(positions[i]) for i in graph.node_indices()]


def _pack(sizes: list[float], gap: float) -> list[tuple[float, float]]:
    """Centres for squares of side ``sizes`` (largest first), packed in rows about as
    wide as the whole is tall: shelves filled left to right, each as tall as its first."""
    width = max(max(sizes), (sum((s + gap) ** 2 for s in sizes) ** 0.5) * 1.25)
    centres, x, y, row = [], 0.0, 0.0, 0.0
    for side in sizes:
        if x > 0 and x + side > width:
            x, y, row = 0.0, y + row + gap, 0.0
        centres.append((x + side / 2, y + side / 2))
        x, row = x + side + gap, max(row, side)
    return centres


def _layout(
    node_ids: list[int], edges: list[tuple[int, int, int]]
) -> dict[int, tuple[float, float]]:
    """Positions in [-1, 1]², the same for the same graph: each connected component laid
    out force-directed on its own, scaled to its size, and the components packed side by
    side, largest first (a spring layout of the whole flings the small ones to the
    corners)."""
    import rustworkx

    if not node_ids:
        return {}
    graph = rustworkx.PyGraph()
    index = dict(zip(node_ids, graph.add_nodes_from(node_ids), strict=True))
    graph.add_edges_from([(index[s], index[o], float(w)) for s, o, w in edges])
    order = {i: at for at, i in enumerate(index.values())}  # the order nodes came in
    components = sorted(
        (sorted(c, key=order.__getitem__) for c in rustworkx.connected_components(graph)),
        key=lambda c: (-len(c), order[c[0]]),
    )
    # A component of n nodes takes a square of side proportional to √n.
    sides = [2 * len(c) ** 0.5 for c in components]
    centres = _pack(sides, gap=1.0)
    placed: dict[int, tuple[float, float]] = {}
    for component, side, (cx, cy) in zip(components, sides, centres, strict=True):
        sub = graph.subgraph(component)
        half = side / 2 if len(component) > 1 else 0.0
        payloads = [sub[i] for i in sub.node_indices()]
        for node, (x, y) in zip(payloads, _spring(sub, seed=7), strict=True):
            placed[node] = (cx + x * half, cy + y * half)
    xs = [x for x, _ in placed.values()]
    ys = [y for _, y in placed.values()]
    mid_x, mid_y = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    reach = max(max(xs) - min(xs), max(ys) - min(ys)) / 2 or 1.0
    return {n: ((x - mid_x) / reach, (y - mid_y) / reach) for n, (x, y) in placed.items()}


def concept_graph_view(
    *,
    user: Any,
    center: str | None = None,
    ref: str | None = None,
    hops: int = 2,
    type: str | None = None,
    relation: str | None = None,
    limit: int = 500,
    project: str | None = None,
) -> dict[str, Any]:
    """The visible graph as the Knowledge graph page draws it: the ``limit`` most
    mentioned entities (or those within ``hops`` of ``center``, an entity named, or of the
    entity ``ref``), of ``type``, the edges among them (of ``relation``), and positions
    (``_layout``)."""
    if not 1 <= limit <= MAX_VIEW_NODES:
        raise InvalidInput(f"limit must be between 1 and {MAX_VIEW_NODES}.")
    if not 1 <= hops <= MAX_VIEW_HOPS:
        raise InvalidInput(f"hops must be between 1 and {MAX_VIEW_HOPS}.")
    if type is not None and type not in ENTITY_TYPES:
        raise InvalidInput(f"type must be one of {', '.join(ENTITY_TYPES)}.")
    relation = _clean_relation(relation)
    triples = concept_triples_visible(user=user, project=project)
    if relation:
        triples = triples.filter(relation=relation)
    focus = None
    if center or ref:
        if ref:
            focus = concept_entity_get_visible(user=user, ref=ref, project=project)
        else:
            focus = concept_entity_find_visible(user=user, name=center, project=project)
        ids, frontier = {focus.id}, {focus.id}
        for _ in range(hops):
            reached = {n for s, _, o in _hop(triples, frontier) for n in (s, o)} - ids
            room = limit - len(ids)
            if len(reached) > room:  # the first by name
                keys = _keys(reached)
                reached = set(sorted(reached, key=lambda n: keys.get(n, ""))[:room])
            frontier = reached
            ids |= frontier
            if not frontier or len(ids) >= limit:
                break
        views = concept_entities_describe(user=user, entity_ids=ids, project=project)
    else:
        ranked, _ = concept_nodes_visible(user=user, type=type, limit=limit, project=project)
        views = {v.id: v for v in ranked}
    if type:
        views = {i: v for i, v in views.items() if v.type == type or (focus and i == focus.id)}
    # The layout depends on the order it reads nodes and edges in: by name, not by id.
    ids = sorted(views, key=lambda i: (-views[i].mentions, views[i].name, views[i].ref))
    edges = sorted(
        triples.filter(subject_id__in=ids, object_id__in=ids)
        .values_list("subject_id", "relation", "object_id")
        .annotate(weight=Count("fact_id", distinct=True))
        .order_by(),
        key=lambda e: (-e[3], views[e[0]].ref, e[1], views[e[2]].ref),
    )
    positions = _layout(ids, [(s, o, w) for s, _, o, w in edges])
    return {
        "center": focus.ref if focus else None,
        "nodes": [
            {**views[i].as_dict(), "x": round(positions[i][0], 4), "y": round(positions[i][1], 4)}
            for i in ids
        ],
        "edges": [{"s": views[s].ref, "r": r, "o": views[o].ref, "w": w} for s, r, o, w in edges],
    }
