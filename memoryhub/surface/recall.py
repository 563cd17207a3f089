"""Tiered recall across apps: a project's documents and the organisation's notes (wiki
pages), and a skill's learnings (facts), ranked by one formula:

    score = 0.5 x recency + 0.3 x relevance + 0.15 x scope + 0.05 x resolved

recency halves every 30 days; relevance is the cosine of a TF-IDF sketch of the row
against the query, or, without one, against the agent's task context (``context``): a
row sharing a word with it scores above one sharing none (0 with neither); scope is 1.0 for the
caller's own fleet and 0.5 for another fleet's; resolved is 1.0 for a learning with a
resolution reference. Read-only and never cached: every call reads the rows now, through
the access rule. A read across fleets needs ``scope="cross"`` and a justification,
which the audit log keeps.

A role preset (``RolePreset``, edited by staff in the admin) lists the reads an agent of
that role gets by default; ``tiered_recall(role=...)`` runs them and merges the hits by
score, and the per-turn recall of a token with a role adds them (``role_recall``). An
agent's role is its token's, set by the token's owner: a preset may read across fleets,
so an agent never picks one by naming it (``recall_role``).
"""

import math
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from facts.models import Fact, Status, Tier
from facts.search import FACT_FTS
from memoryhub.engine.errors import Forbidden, InvalidInput, NotFound
from memoryhub.engine.refs import shortened
from memoryhub.engine.search.sketch import tfidf_cosines
from memoryhub.engine.search.text import match_any
from teams.services import Actor, audit_log
from wiki.models import Page
from wiki.search import PAGE_FTS

TIERS = ("project", "org", "skill")
HALF_LIFE_DAYS = 30.0
WEIGHTS = {"recency": 0.5, "relevance": 0.3, "scope": 0.15, "resolved": 0.05}
OWN_FLEET, OTHER_FLEET = 1.0, 0.5
DEFAULT_LIMIT, MAX_LIMIT = 10, 50
CANDIDATES = 200  # rows ranked per call, before the limit
SNIPPET = 200
MAX_QUERY = 1000
MAX_CONTEXT = 4000
SINCE = re.compile(r"^(\d{1,4})([hdw])$")
ANY_FINGERPRINT = "*"  # every learning with a fingerprint cluster
MAX_PRESET_ENTRIES = 10
# A preset read of the skill its role names after the dash (``forger-rust``: rust).
ANY_SKILL = "*"
PRESET_KEYS = ("tier", "include", "skill", "fingerprint", "since", "scope")


@dataclass(frozen=True)
class TieredHit:
    path: str  # wiki/<project>/<slug> or skill/<skill>/<fact id>
    snippet: str
    score: float
    ts: str  # when the row last changed (ISO 8601)
    status: str = "active"  # abandoned: a decision whose topic was forgotten


def tiered_score(
    *, ts: datetime, now: datetime, relevance: float, own_fleet: bool, resolved: bool
) -> float:
    """The ranking formula of one row (see the module docstring)."""
    age_days = max((now - ts).total_seconds(), 0.0) / 86_400
    recency = math.pow(0.5, age_days / HALF_LIFE_DAYS)
    return (
        WEIGHTS["recency"] * recency
        + WEIGHTS["relevance"] * relevance
        + WEIGHTS["scope"] * (OWN_FLEET if own_fleet else OTHER_FLEET)
        + WEIGHTS["resolved"] * (1.0 if resolved else 0.0)
    )


def parse_since(since: str | None) -> timedelta | None:
    """``7d``, ``12h`` or ``2w`` as a time span; None stays None."""
    if since in (None, ""):
        return None
    found = SINCE.match(str(since).strip())
    if not found or int(found.group(1)) == 0:
        raise InvalidInput(f"since is a span like 7d, 12h or 2w, not '{shortened(str(since))}'.")
    amount, unit = int(found.group(1)), found.group(2)
    return {
        "h": timedelta(hours=amount),
        "d": timedelta(days=amount),
        "w": timedelta(weeks=amount),
    }[unit]


def _matching(query: str, index: Any, scope: QuerySet) -> list[int]:
    """The candidates holding a word of ``query``, best first (none without one)."""
    if not query:
        return []
    return [hit.id for hit in index.search(match_any(query), limit=CANDIDATES, within=scope)]


def _relevance(against: str, texts: dict[int, str]) -> dict[int, float]:
    """Each candidate's relevance to the query or the task context (see the module
    docstring); 0 for every one when there is neither."""
    return tfidf_cosines(against, texts) if against else dict.fromkeys(texts, 0.0)


def _pages(
    actor: Actor,
    *,
    project: str | None,
    kinds: list[str],
    query: str,
    now: datetime,
    own_fleet: str = "",
    cross: bool = False,
    context: str = "",
) -> list[tuple[float, TieredHit]]:
    pages = Page.objects.visible_to(actor.user, cross_fleet=cross)
    pages = pages.filter(project=project) if project else pages.filter(project="")
    if kinds:
        pages = pages.filter(kind__in=kinds)
    if query:
        pages = pages.filter(pk__in=_matching(query, PAGE_FTS, pages.order_by()))
    else:
        pages = pages.order_by("-updated_at", "-id")[:CANDIDATES]
    pages = list(pages)
    relevance = _relevance(query or context, {p.pk: f"{p.title}\n{p.content}" for p in pages})
    ranked = []
    for page in pages:
        withheld = actor.token is not None and page.withheld_from_agents
        snippet = "(withheld: flagged by the injection scanner)" if withheld else page.content
        hit = TieredHit(
            path=f"wiki/{page.project or '-'}/{page.slug}",
            snippet=shortened(" ".join(snippet.split()), SNIPPET),
            score=0.0,
            ts=page.updated_at.isoformat(),
            status=page.status,
        )
        score = tiered_score(
            ts=page.updated_at,
            now=now,
            relevance=relevance.get(page.pk, 0.0),
            own_fleet=page.fleet in ("", own_fleet),
            resolved=False,
        )
        ranked.append((score, hit))
    return ranked


def _learnings(
    actor: Actor,
    *,
    skill: str | None,
    fleet: str,
    own_fleet: str,
    cross: bool,
    since: timedelta | None,
    query: str,
    now: datetime,
    fingerprint: str | None = None,
    context: str = "",
) -> list[tuple[float, TieredHit]]:
    facts = Fact.objects.visible_to(actor.user, cross_fleet=cross).filter(
        tier=Tier.SKILL, status=Status.ACTIVE
    )
    if skill:
        facts = facts.filter(skill=skill)
    if fingerprint == ANY_FINGERPRINT:
        facts = facts.exclude(fingerprint="")
    elif fingerprint:
        facts = facts.filter(fingerprint=fingerprint)
    if since is not None:
        facts = facts.filter(created_at__gte=now - since)
    if not cross:
        facts = facts.filter(Q(fleet=fleet) | Q(fleet=""))
    if query:
        facts = facts.filter(pk__in=_matching(query, FACT_FTS, facts.order_by()))
    else:
        facts = facts.order_by("-created_at", "-id")[:CANDIDATES]
    facts = list(facts)
    relevance = _relevance(query or context, {f.pk: f.content for f in facts})
    ranked = []
    for fact in facts:
        hit = TieredHit(
            path=f"skill/{fact.skill or '-'}/{fact.pk}",
            snippet=shortened(fact.content, SNIPPET),
            score=0.0,
            ts=fact.created_at.isoformat(),
        )
        score = tiered_score(
            ts=fact.created_at,
            now=now,
            relevance=relevance.get(fact.pk, 0.0),
            # Scored by the reader's own fleet, whichever fleet it asked to read.
            own_fleet=fact.fleet in ("", own_fleet),
            resolved=bool(fact.resolution_ref),
        )
        ranked.append((score, hit))
    return ranked


def tiered_recall(
    *,
    actor: Actor,
    tier: str | None = None,
    query: str = "",
    fleet: str | None = None,
    limit: int = DEFAULT_LIMIT,
    scope: str = "own",
    justification: str = "",
    project: str | None = None,
    kinds: list[str] | None = None,
    skill: str | None = None,
    since: str | None = None,
    fingerprint: str | None = None,
    role: str | None = None,
    context: str = "",
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """The best ``limit`` rows of ``tier`` for ``actor``, as ``{path, snippet, score,
    ts}``, best first. ``project`` names the project (project tier), ``kinds`` the page
    kinds to include, ``skill``, ``since`` (``7d``) and ``fingerprint`` (a cluster, or
    ``*`` for any) narrow the learnings; ``context`` (the agent's task) weighs relevance
    when there is no query. ``fleet`` defaults to the token's; another
    fleet's learnings need ``scope="cross"`` and a justification. With ``role`` (and no
    tier) the role's preset decides what is read; with both, the preset's reads of that
    tier. An agent reads by its token's role only (``recall_role``)."""
    role = recall_role(actor=actor, role=role, tier=tier)
    if role is not None:
        return role_recall(
            actor=actor,
            role=role,
            query=query,
            project=project,
            limit=limit,
            tier=tier,
            context=context,
            now=now,
        )
    if tier is None:
        raise InvalidInput(f"Name a tier ({', '.join(TIERS)}) or a role.")
    _limit_check(limit)
    ranked = _tier_ranked(
        actor=actor,
        tier=tier,
        query=query,
        fleet=fleet,
        scope=scope,
        justification=justification,
        project=project,
        kinds=kinds,
        skill=skill,
        since=since,
        fingerprint=fingerprint,
        context=context,
        now=now or timezone.now(),
    )
    return _best(ranked, limit)


def recall_role(*, actor: Actor, role: str | None, tier: str | None) -> str | None:
    """The role whose preset a tiered recall runs (None: no preset). A person names any
    role: a preset reads only what they may read anyway. An agent's role is its token's:
    it may name that role, or leave it out (with no tier either, the token's role is
    read); naming another role, or any role for a token without one, is refused."""
    if role == "":
        role = None
    token = actor.token
    if token is None:
        return role
    if role is None:
        return (token.role or None) if tier is None else None
    if not token.role:
        raise Forbidden(
            f"This token has no role, so it cannot read as the role '{shortened(str(role))}'; "
            "a token's role is set by its owner when creating it under Agents."
        )
    if role != token.role:
        raise Forbidden(
            f"This token cannot read as the role '{shortened(str(role))}': its role is "
            f"{token.role}, and a token reads by its own role only."
        )
    return role


def _limit_check(limit: Any) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit is between 1 and {MAX_LIMIT}.")


def _best(ranked: list[tuple[float, TieredHit]], limit: int) -> list[dict[str, Any]]:
    ranked.sort(key=lambda pair: (-pair[0], pair[1].path))
    hits, seen = [], set()
    for score, hit in ranked:
        if hit.path in seen:
            continue
        seen.add(hit.path)
        hits.append(
            asdict(
                TieredHit(
                    path=hit.path,
                    snippet=hit.snippet,
                    score=round(score, 4),
                    ts=hit.ts,
                    status=hit.status,
                )
            )
        )
        if len(hits) == limit:
            break
    return hits


def _tier_ranked(
    *,
    actor: Actor,
    tier: str,
    query: str,
    fleet: str | None,
    scope: str,
    justification: str,
    project: str | None,
    kinds: list[str] | None,
    skill: str | None,
    since: str | None,
    fingerprint: str | None,
    now: datetime,
    context: str = "",
) -> list[tuple[float, TieredHit]]:
    """Every candidate of one tier read, scored (unsorted); a cross-fleet read is audited."""
    if tier not in TIERS:
        raise InvalidInput(f"Unknown tier '{shortened(str(tier))}': use {', '.join(TIERS)}.")
    if scope not in ("own", "cross"):
        raise InvalidInput(f"scope is 'own' or 'cross', not '{shortened(str(scope))}'.")
    query = (query or "").strip()
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"The query is at most {MAX_QUERY} characters.")
    context = (context or "").strip()
    if len(context) > MAX_CONTEXT:
        raise InvalidInput(f"The task context is at most {MAX_CONTEXT} characters.")
    if fingerprint is not None and len(fingerprint) > 200:
        raise InvalidInput("A fingerprint cluster is at most 200 characters.")
    own_fleet = actor.token.fleet if actor.token is not None else ""
    fleet = (fleet if fleet is not None else own_fleet).strip()
    cross = scope == "cross" or (actor.token is not None and fleet != own_fleet)
    if cross:
        if scope != "cross" or not justification.strip():
            raise Forbidden(
                "Reading another fleet's learnings needs scope 'cross' and a justification."
            )
        if len(justification) > 500:
            raise InvalidInput("A justification is at most 500 characters.")
    if tier == "project" and not project:
        raise InvalidInput("The project tier needs a project.")
    window = parse_since(since)
    if tier == "skill":
        ranked = _learnings(
            actor,
            skill=skill,
            fleet=fleet,
            own_fleet=own_fleet,
            cross=cross,
            since=window,
            query=query,
            now=now,
            fingerprint=fingerprint,
            context=context,
        )
    else:
        ranked = _pages(
            actor,
            project=project if tier == "project" else None,
            kinds=list(kinds or []),
            query=query,
            now=now,
            own_fleet=own_fleet,
            cross=cross,
            context=context,
        )
    if cross:
        audit_log(
            actor=actor,
            action="recall.cross_fleet",
            target_type="tier",
            target_id=tier,
            details={
                "fleet": fleet,
                "own_fleet": own_fleet,
                "justification": justification.strip(),
                "candidates": len(ranked),
            },
        )
    return ranked


# --- Role presets ------------------------------------------------------------------------


def preset_entries_clean(entries: Any) -> list[dict[str, Any]]:
    """A preset's reads, checked: a list of at most ``MAX_PRESET_ENTRIES`` objects with a
    known tier and only the keys of ``PRESET_KEYS``."""
    if not isinstance(entries, list) or len(entries) > MAX_PRESET_ENTRIES:
        raise InvalidInput(f"A preset is a list of at most {MAX_PRESET_ENTRIES} reads.")
    cleaned = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise InvalidInput(f"Read {number} of the preset is not an object.")
        unknown = sorted(set(entry) - set(PRESET_KEYS))
        if unknown:
            raise InvalidInput(f"Read {number} has unknown keys: {', '.join(unknown)}.")
        if entry.get("tier") not in TIERS:
            raise InvalidInput(f"Read {number} needs a tier: {', '.join(TIERS)}.")
        include = entry.get("include") or []
        if not isinstance(include, list) or not all(
            isinstance(k, str) and 0 < len(k) <= 40 for k in include
        ):
            raise InvalidInput(f"Read {number}: include is a list of page kinds.")
        for key in ("skill", "fingerprint", "since"):
            if entry.get(key) is not None and (
                not isinstance(entry[key], str) or len(entry[key]) > 200
            ):
                raise InvalidInput(f"Read {number}: {key} is short text.")
        if entry.get("since"):
            parse_since(entry["since"])
        if entry.get("scope", "own") not in ("own", "cross"):
            raise InvalidInput(f"Read {number}: scope is 'own' or 'cross'.")
        cleaned.append({k: v for k, v in entry.items() if v not in (None, "", [])})
    return cleaned


def role_preset_entries(role: str) -> list[dict[str, Any]] | None:
    """The reads of ``role``'s preset; None when the role has no preset. A preset serves
    its role and the roles that extend it with a dash, the longest first: ``forger``
    serves ``forger-rust`` when no ``forger-rust`` preset exists; its reads with
    ``skill: "*"`` then read the skill the role names after the dash (``rust``)."""
    from memoryhub.surface.models import RolePreset

    names = [role]
    while "-" in names[-1]:
        names.append(names[-1].rsplit("-", 1)[0])
    found = dict(RolePreset.objects.filter(role__in=names).values_list("role", "entries"))
    name = next((n for n in names if n in found), None)
    if name is None:
        return None
    try:
        entries = preset_entries_clean(found[name])
    except InvalidInput:
        return []  # a preset broken outside the admin reads nothing rather than failing
    suffix = role[len(name) + 1 :]
    for entry in entries:
        if entry.get("skill") == ANY_SKILL:
            if not suffix:
                entry.pop("skill")  # the role itself names no skill: any
            else:
                entry["skill"] = suffix
    return entries


def role_recall(
    *,
    actor: Actor,
    role: str,
    query: str = "",
    project: str | None = None,
    limit: int = DEFAULT_LIMIT,
    tier: str | None = None,
    context: str = "",
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """The hits of ``role``'s preset, merged by score: each read of the preset runs as a
    tiered recall (project reads only with a project). A cross-fleet read of a preset
    is justified by the preset and audited as any other."""
    if not isinstance(role, str) or len(role) > 100:
        raise InvalidInput("A role is a short name.")
    if tier is not None and tier not in TIERS:
        raise InvalidInput(f"Unknown tier '{shortened(str(tier))}': use {', '.join(TIERS)}.")
    _limit_check(limit)
    entries = role_preset_entries(role)
    if entries is None:
        raise NotFound(f"There is no preset for the role '{shortened(role)}'.")
    now = now or timezone.now()
    ranked: list[tuple[float, TieredHit]] = []
    for entry in entries:
        if tier is not None and entry["tier"] != tier:
            continue
        if entry["tier"] == "project" and not project:
            continue
        scope = entry.get("scope", "own")
        ranked += _tier_ranked(
            actor=actor,
            tier=entry["tier"],
            query=query,
            fleet=None,
            scope=scope,
            justification=f"the {role} role preset" if scope == "cross" else "",
            project=project,
            kinds=entry.get("include"),
            skill=entry.get("skill"),
            since=entry.get("since"),
            fingerprint=entry.get("fingerprint"),
            context=context,
            now=now,
        )
    return _best(ranked, limit)


def token_role_recall(
    *, actor: Actor, query: str, project: str | None = None, now: datetime | None = None
) -> list[dict[str, Any]]:
    """What the per-turn recall of an agent adds for its token's role: the preset's hits
    (nothing without a token, a role or a preset)."""
    token = actor.token
    if token is None or not token.role:
        return []
    try:
        return role_recall(actor=actor, role=token.role, query=query, project=project, now=now)
    except NotFound:
        return []


def role_block(role: str, hits: list[dict[str, Any]]) -> str:
    """The preset's hits as a prompt section."""
    if not hits:
        return ""
    lines = [f"## Recalled for the {role} role", ""]
    lines += [
        f"- [{hit['path']}]{' (abandoned)' if hit['status'] == 'abandoned' else ''} "
        f"{hit['snippet']}"
        for hit in hits
    ]
    return "\n".join(lines)
