"""Tiered recall across apps: a project's documents and the organisation's notes (wiki
pages), and a skill's learnings (facts), ranked by one formula:

    score = 0.5 x recency + 0.3 x relevance + 0.15 x scope + 0.05 x resolved

recency halves every 30 days; relevance is the search's score normalised over the
candidates (min-max, 1.0 for the best; 0 without a query); scope is 1.0 for the
caller's own fleet and 0.5 for another fleet's; resolved is 1.0 for a learning with a
resolution reference. Read-only and never cached: every call reads the rows now, through
the access rule. A read across fleets needs ``scope="cross"`` and a justification,
which the audit log keeps.
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
from memoryhub.errors import Forbidden, InvalidInput
from memoryhub.refs import shortened
from memoryhub.search.text import match_any
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
SINCE = re.compile(r"^(\d{1,4})([hdw])$")


@dataclass(frozen=True)
class TieredHit:
    path: str  # wiki/<project>/<slug> or skill/<skill>/<fact id>
    snippet: str
    score: float
    ts: str  # when the row last changed (ISO 8601)


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


def _relevance(query: str, index: Any, scope: QuerySet) -> dict[int, float]:
    """Search scores over the candidates, min-max normalised to 0..1 (1.0: the best)."""
    hits = index.search(match_any(query), limit=CANDIDATES, within=scope) if query else []
    if not hits:
        return {}
    # bm25 as SQLite reports it: lower is better.
    best, worst = min(h.score for h in hits), max(h.score for h in hits)
    spread = worst - best
    return {h.id: 1.0 if spread == 0 else (worst - h.score) / spread for h in hits}


def _pages(
    actor: Actor, *, project: str | None, kinds: list[str], query: str, now: datetime
) -> list[tuple[float, TieredHit]]:
    pages = Page.objects.visible_to(actor.user)
    pages = pages.filter(project=project) if project else pages.filter(project="")
    if kinds:
        pages = pages.filter(kind__in=kinds)
    relevance = _relevance(query, PAGE_FTS, pages.order_by())
    if query:
        pages = pages.filter(pk__in=list(relevance))
    else:
        pages = pages.order_by("-updated_at", "-id")[:CANDIDATES]
    ranked = []
    for page in pages:
        withheld = actor.token is not None and page.withheld_from_agents
        snippet = "(withheld: flagged by the injection scanner)" if withheld else page.content
        hit = TieredHit(
            path=f"wiki/{page.project or '-'}/{page.slug}",
            snippet=shortened(" ".join(snippet.split()), SNIPPET),
            score=0.0,
            ts=page.updated_at.isoformat(),
        )
        score = tiered_score(
            ts=page.updated_at,
            now=now,
            relevance=relevance.get(page.pk, 0.0),
            own_fleet=True,
            resolved=False,
        )
        ranked.append((score, hit))
    return ranked


def _learnings(
    actor: Actor,
    *,
    skill: str | None,
    fleet: str,
    cross: bool,
    since: timedelta | None,
    query: str,
    now: datetime,
) -> list[tuple[float, TieredHit]]:
    facts = Fact.objects.visible_to(actor.user).filter(tier=Tier.SKILL, status=Status.ACTIVE)
    if skill:
        facts = facts.filter(skill=skill)
    if since is not None:
        facts = facts.filter(created_at__gte=now - since)
    if not cross:
        facts = facts.filter(Q(fleet=fleet) | Q(fleet=""))
    relevance = _relevance(query, FACT_FTS, facts.order_by())
    if query:
        facts = facts.filter(pk__in=list(relevance))
    else:
        facts = facts.order_by("-created_at", "-id")[:CANDIDATES]
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
            own_fleet=fact.fleet in ("", fleet),
            resolved=bool(fact.resolution_ref),
        )
        ranked.append((score, hit))
    return ranked


def tiered_recall(
    *,
    actor: Actor,
    tier: str,
    query: str = "",
    fleet: str | None = None,
    limit: int = DEFAULT_LIMIT,
    scope: str = "own",
    justification: str = "",
    project: str | None = None,
    kinds: list[str] | None = None,
    skill: str | None = None,
    since: str | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """The best ``limit`` rows of ``tier`` for ``actor``, as ``{path, snippet, score,
    ts}``, best first. ``project`` names the project (project tier), ``kinds`` the page
    kinds to include, ``skill`` and ``since`` (``7d``) narrow the learnings. ``fleet``
    defaults to the token's; another fleet's learnings need ``scope="cross"`` and a
    justification."""
    if tier not in TIERS:
        raise InvalidInput(f"Unknown tier '{shortened(str(tier))}': use {', '.join(TIERS)}.")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit is between 1 and {MAX_LIMIT}.")
    if scope not in ("own", "cross"):
        raise InvalidInput(f"scope is 'own' or 'cross', not '{shortened(str(scope))}'.")
    query = (query or "").strip()
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"The query is at most {MAX_QUERY} characters.")
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
    now = now or timezone.now()
    window = parse_since(since)
    if tier == "skill":
        ranked = _learnings(
            actor, skill=skill, fleet=fleet, cross=cross, since=window, query=query, now=now
        )
    else:
        ranked = _pages(
            actor,
            project=project if tier == "project" else None,
            kinds=list(kinds or []),
            query=query,
            now=now,
        )
    ranked.sort(key=lambda pair: (-pair[0], pair[1].path))
    hits = [
        asdict(TieredHit(path=h.path, snippet=h.snippet, score=round(s, 4), ts=h.ts))
        for s, h in ranked[:limit]
    ]
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
                "returned": len(hits),
            },
        )
    return hits
