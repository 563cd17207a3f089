"""Distillation: a scope's new facts rolled into linked summaries (layer 2), and its
summaries into one profile (layer 3)."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from facts.dedupe import fact_keys_refresh
from facts.models import Category, Fact, Origin, Source, Status
from facts.search import FACT_VECTORS
from facts.services.cleaning import EXCERPT_LENGTH
from facts.services.embedding import queue_embedding
from facts.services.summaries import DISTILL_SCOPE, derived_links
from facts.sessions import facts_index
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.locking import writes_serialise
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor, audit_log

# Sources summarised at once per scope, and summaries asked for.
DISTILL_MAX_SOURCES = 200
DISTILL_MAX_SUMMARIES = 5


@dataclass(frozen=True)
class DistillScope:
    """Facts that may be rolled together: one owner, team, visibility, project and
    fleet (``DISTILL_SCOPE``), so a summary is read by exactly those who read each of
    its sources."""

    owner_id: int
    team_id: int | None
    visibility: str
    project: str
    fleet: str

    def facts(self) -> Any:
        return Fact.objects.filter(
            owner_id=self.owner_id,
            team_id=self.team_id,
            visibility=self.visibility,
            project=self.project,
            fleet=self.fleet,
            status=Status.ACTIVE,
        )


@dataclass
class DistillPlan:
    """What the model said for one scope, before anything is written: the summaries
    (text, source ids) and the profile (text) drawn from the scope's summaries with
    these new ones; and what the model read to say it (id -> content), the sources
    and the scope's earlier summaries, which must still be there, as they were, when
    it is written."""

    scope: DistillScope
    sources: dict[int, str]
    summaries: list[tuple[str, list[int]]]
    earlier: dict[int, str]
    profile: str
    provider: str
    # Offline, the facts the earlier summaries state (id -> content), read with the new
    # ones and stated anew; a summary then cites exactly the facts it states.
    underlying: dict[int, str] = field(default_factory=dict)
    states_facts: bool = False


@dataclass
class DistillRun:
    """What a distillation wrote, and what it could not write as planned."""

    scopes: int = 0
    summaries: list[int] = field(default_factory=list)
    profiles: list[int] = field(default_factory=list)
    providers: set[str] = field(default_factory=set)
    # Scopes whose facts changed while the model read them (forgotten, deleted, edited,
    # moved to another scope, or distilled by another run): distilled again from what
    # was left, or, when that changed again or is no longer due, left for a later run.
    redone: int = 0
    discarded: int = 0

    def result(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "scopes": self.scopes,
            "summaries": self.summaries,
            "profiles": self.profiles,
            "providers": sorted(self.providers),
            "redone": self.redone,
            "discarded": self.discarded,
        }
        if self.redone or self.discarded:
            result["note"] = (
                f"Facts changed while the model read them: {self.redone} scope(s) "
                f"distilled again from what was left, {self.discarded} left for a later run."
            )
        return result


def distill_scopes(
    *, owner_id: int | None = None, project: str | None = None
) -> list[DistillScope]:
    """The scopes holding at least ``distillation_min_facts`` facts not yet distilled
    (of one owner, or project, when given)."""
    config = memory_config_get()
    undistilled = Fact.objects.filter(layer=1, distilled=False, status=Status.ACTIVE)
    if owner_id is not None:
        undistilled = undistilled.filter(owner_id=owner_id)
    if project is not None:
        undistilled = undistilled.filter(project=project)
    rows = (
        undistilled.order_by()
        .values(*DISTILL_SCOPE)
        .annotate(n=models.Count("id"))
        .filter(n__gte=config.distillation_min_facts)
        .order_by(*DISTILL_SCOPE)
    )
    return [DistillScope(**{name: r[name] for name in DISTILL_SCOPE}) for r in rows]


def facts_distill(
    *,
    owner_id: int | None = None,
    project: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Roll each due scope's new facts into one to five summaries (layer 2, linked to
    their sources, which are marked distilled) and its summaries into one profile
    (layer 3, one per scope, rewritten in place). The chat model (or the offline
    provider) is asked everything first, outside any transaction; then each owner's
    scopes are written in one transaction. A model failure raises before anything is
    written, so every source stays as it was. Scopes never mix: a summary is read by
    exactly those who read its sources.

    What the model read may change while it thinks. A scope is written only if every
    fact it read is still there, in its scope, saying what it said (checked under the
    writers' lock); otherwise it is distilled once more from what is left, and left for
    a later run if that changed too, is no longer due, or the model fails on it then.
    The result says how many (``redone``, ``discarded``)."""
    from memoryhub.engine.llm import ChatModelError
    from memoryhub.engine.llm.configured import llm_provider_get

    provider = llm_provider_get()
    scopes = distill_scopes(owner_id=owner_id, project=project)
    run = DistillRun(scopes=len(scopes))
    plans: list[DistillPlan] = []
    for done, scope in enumerate(scopes):
        plans.append(_distill_plan(provider=provider, scope=scope))
        if progress:
            progress(done + 1, len(scopes))
    stale = _distill_write(plans, run)
    if stale:
        # Distilled again from what is left, when still due; what the model fails to
        # say now waits for a later run, as what changed again does.
        due = set(distill_scopes(owner_id=owner_id, project=project))
        try:
            again = [
                _distill_plan(provider=provider, scope=p.scope) for p in stale if p.scope in due
            ]
        except ChatModelError:
            again = []
        left = _distill_write(again, run)
        run.redone += len(again) - len(left)
        run.discarded += len(stale) - len(again) + len(left)
    return run.result()


def _scope_texts(scope: DistillScope) -> tuple[dict[int, str], dict[int, str]]:
    """(id -> content) of the scope's new facts, oldest first and at most
    ``DISTILL_MAX_SOURCES``, and of its summaries. The summaries are read with the new
    facts and folded into the new summaries, so a scope holds at most
    ``DISTILL_MAX_SUMMARIES`` at any time."""
    sources = dict(
        scope.facts()
        .filter(layer=1, distilled=False)
        .order_by("created_at", "pk")
        .values_list("pk", "content")[:DISTILL_MAX_SOURCES]
    )
    earlier = dict(scope.facts().filter(layer=2).order_by("pk").values_list("pk", "content"))
    return sources, earlier


def _distill_plan(*, provider: Any, scope: DistillScope) -> DistillPlan:
    """Ask the model about one scope: its summaries of the scope's new facts, then the
    profile of the scope's summaries with the new ones. Outside any transaction."""
    from memoryhub.engine.llm import SourceText
    from memoryhub.engine.llm.offline import PROVIDER_ID as OFFLINE

    if provider.provider_id == OFFLINE:
        return _offline_plan(provider=provider, scope=scope)
    sources, earlier = _scope_texts(scope)
    answer = provider.summarize(
        [SourceText(id=pk, text=text) for pk, text in (earlier | sources).items()],
        max_summaries=DISTILL_MAX_SUMMARIES,
    )
    summaries = [(item.text, list(item.source_ids)) for item in answer.summaries]
    kept = set(earlier) - {i for _, ids in summaries for i in ids}
    # The profile reads the scope's summaries as they will be: the earlier ones no new
    # summary folds in, and the new ones (known here by negative ids until written).
    inputs = [SourceText(id=pk, text=text) for pk, text in earlier.items() if pk in kept]
    inputs += [SourceText(id=-n, text=text) for n, (text, _) in enumerate(summaries, 1)]
    profile = provider.summarize(inputs, max_summaries=1).summaries if inputs else []
    return DistillPlan(
        scope=scope,
        sources=sources,
        summaries=summaries,
        earlier=earlier,
        profile=profile[0].text if profile else "",
        provider=answer.provider,
    )


def _offline_plan(*, provider: Any, scope: DistillScope) -> DistillPlan:
    """The built-in rules' plan for one scope: its new facts and those its summaries
    state, grouped by topic anew into at most ``DISTILL_MAX_SUMMARIES`` summaries, each
    stating every fact it cites and folding in the earlier summaries whose facts it
    states; the profile from what the stated facts say about the user."""
    from memoryhub.engine.llm import SourceText

    config = memory_config_get()
    sources, earlier = _scope_texts(scope)
    links = derived_links(children=set(earlier))
    facts = (
        scope.facts()
        .filter(layer=1)
        .filter(models.Q(pk__in=sources) | models.Q(pk__in={pk for _, pk in links}))
        .order_by("created_at", "pk")
        .values_list("pk", "content", "category")
    )
    rows = list(facts)
    underlying = {pk: content for pk, content, _ in rows if pk not in sources}
    vectors = FACT_VECTORS.vectors([pk for pk, _, _ in rows]) if config.embeddings_enabled else {}
    texts = [
        SourceText(
            id=pk,
            text=content,
            category=category,
            vector=tuple(vectors[pk].tolist()) if pk in vectors else None,
        )
        for pk, content, category in rows
    ]
    answer = provider.summarize(
        texts, max_summaries=DISTILL_MAX_SUMMARIES, max_characters=config.max_content_length
    )
    # Each earlier summary is folded into every new one stating one of its facts (the
    # first, when none states any), so none is left beside them.
    facts_of: dict[int, set[int]] = {}
    for child, parent in links:
        facts_of.setdefault(child, set()).add(parent)
    cited = [set(item.source_ids) for item in answer.summaries]
    history: list[list[int]] = [
        [pk for pk in earlier if facts_of.get(pk, set()) & ids] for ids in cited
    ]
    if history:
        history[0] += [pk for pk in earlier if not any(pk in h for h in history)]
    summaries = [
        (item.text, [*item.source_ids, *history[n]]) for n, item in enumerate(answer.summaries)
    ]
    stated = {pk for ids in cited for pk in ids}
    profile = provider.describe_user(
        [t for t in texts if t.id in stated], max_characters=config.max_content_length
    )
    return DistillPlan(
        scope=scope,
        sources=sources,
        summaries=summaries,
        earlier=earlier,
        profile=profile if summaries else "",
        provider=answer.provider,
        underlying=underlying,
        states_facts=True,
    )


def _distill_write(plans: list[DistillPlan], run: DistillRun) -> list[DistillPlan]:
    """Write the plans that still hold, each owner's in one transaction; the plans that
    no longer do (what the model read changed meanwhile), unwritten."""
    stale: list[DistillPlan] = []
    owners = sorted({plan.scope.owner_id for plan in plans})
    for owner_id in owners:
        with transaction.atomic():
            # The fact store's writers of this owner's facts wait for this write, and it
            # for them: what it checks stays true until it commits.
            writes_serialise("facts", owner_id)
            for plan in plans:
                if plan.scope.owner_id != owner_id:
                    continue
                if _plan_holds(plan):
                    _plan_write(plan, run)
                else:
                    stale.append(plan)
    return stale


def _plan_holds(plan: DistillPlan) -> bool:
    """Whether everything the model read for ``plan`` is still there, in its scope, as
    it was: the sources not yet distilled, the scope's summaries no more and no fewer.
    The rows are locked until the transaction ends."""
    read = {**plan.sources, **plan.earlier, **plan.underlying}
    current = dict(
        Fact.objects.select_for_update(of=("self",))
        .filter(pk__in=read)
        .order_by("pk")
        .values_list("pk", "content")
    )
    if current != read:  # one was deleted, forgotten or edited
        return False
    sources = plan.scope.facts().filter(pk__in=plan.sources, layer=1, distilled=False)
    summaries = plan.scope.facts().filter(layer=2).values_list("pk", flat=True)
    underlying = plan.scope.facts().filter(pk__in=plan.underlying, layer=1)
    return (
        sources.count() == len(plan.sources)
        and set(summaries) == set(plan.earlier)
        and underlying.count() == len(plan.underlying)
    )


def _plan_write(plan: DistillPlan, run: DistillRun) -> None:
    """Write one plan: its summaries, its sources marked distilled, the earlier
    summaries they fold in archived, its profile.

    A summary that folds in earlier ones draws on their facts: it links them as its
    sources beside its new facts, and the earlier summaries as its history (archived,
    as a merge keeps an earlier wording), so forgetting a fact reaches every text that
    said it."""
    config = memory_config_get()
    folded: list[int] = []
    stated: set[int] = set()
    for text, source_ids in plan.summaries:
        cited = list(dict.fromkeys(source_ids))
        new = [i for i in cited if i in plan.sources]
        history = [i for i in cited if i in plan.earlier]
        if plan.states_facts:
            # It links the facts it states, no others, and the earlier wordings the
            # summaries it folds in kept.
            underlying = [i for i in cited if i in plan.underlying]
            stated |= set(underlying)
            parents = {pk for _, pk in derived_links(children=set(history))}
            underlying += list(
                Fact.objects.filter(pk__in=parents, layer=2, status=Status.ARCHIVED)
                .order_by("pk")
                .values_list("pk", flat=True)
            )
        elif history:
            underlying = [
                pk for _, pk in derived_links(children=set(history)) if pk not in plan.earlier
            ]
        else:
            underlying = []
        if not new and not history and not underlying:
            continue
        sources = list(dict.fromkeys([*new, *underlying, *history]))
        summary = _derived_fact(
            scope=plan.scope,
            layer=2,
            content=text,
            sources=sources,
            config=config,
            provider=plan.provider,
        )
        run.summaries.append(summary.pk)
        Fact.objects.filter(pk__in=new).update(distilled=True)
        folded += history
    Fact.objects.filter(pk__in=folded, layer=2).update(status=Status.ARCHIVED)
    # Facts an earlier summary stated that no new one has room for wait for a later run.
    Fact.objects.filter(pk__in=set(plan.underlying) - stated).update(distilled=False)
    summary_ids = list(plan.scope.facts().filter(layer=2).values_list("pk", flat=True))
    if plan.profile and summary_ids:
        profile = _profile_write(
            scope=plan.scope, content=plan.profile, sources=summary_ids, provider=plan.provider
        )
        run.profiles.append(profile.pk)
    run.providers.add(plan.provider)


def _derived_fact(
    *,
    scope: DistillScope,
    layer: int,
    content: str,
    sources: list[int],
    config: MemoryConfig,
    provider: str,
) -> Fact:
    now = timezone.now()
    category = Category.SUMMARY if layer == 2 else Category.PROFILE
    fact = Fact.objects.create(
        owner_id=scope.owner_id,
        team_id=scope.team_id,
        visibility=scope.visibility,
        project=scope.project,
        fleet=scope.fleet,
        content=content[: config.max_content_length],
        category=category,
        source=Source.EXTRACTED,
        layer=layer,
        origin=Origin.INFERRED,
        source_excerpt=content[:EXCERPT_LENGTH],
        provider=provider,
        created_at=now,
        updated_at=now,
        valid_from=now,
    )
    fact.derived_from.set(sources)
    facts_index([], new=[fact.pk])
    fact_keys_refresh([fact.pk])
    queue_embedding([fact.pk], config)
    return fact


def _profile_write(*, scope: DistillScope, content: str, sources: list[int], provider: str) -> Fact:
    """The scope's one profile, rewritten in place (created the first time)."""
    config = memory_config_get()
    existing = scope.facts().filter(layer=3).order_by("pk").first()
    if existing is None:
        return _derived_fact(
            scope=scope, layer=3, content=content, sources=sources, config=config, provider=provider
        )
    text = content[: config.max_content_length]
    Fact.objects.filter(pk=existing.pk).update(
        content=text,
        provider=provider,
        source_excerpt=text[:EXCERPT_LENGTH],
        updated_at=timezone.now(),
        embedding_model="",
    )
    existing.derived_from.set(sources)
    FACT_VECTORS.delete([existing.pk])
    facts_index([existing.pk])
    fact_keys_refresh([existing.pk])
    queue_embedding([existing.pk], config)
    return existing


def facts_distill_request(*, actor: Actor, project: str | None = None) -> Any:
    """Distill now: a job distilling the actor's due scopes (of ``project`` when
    given), queued once this commits."""
    from facts.tasks import facts_distill as facts_distill_task
    from memoryhub.engine.jobs import job_create

    if project is not None and (not isinstance(project, str) or len(project) > 200):
        raise InvalidInput("A project key is at most 200 characters.")
    job = job_create(
        owner=actor.user, kind="distill", task=facts_distill_task, arguments={"project": project}
    )
    audit_log(actor=actor, action="memory.distill", target_type="job", target_id=job.pk)
    return job


def facts_distill_due() -> dict[str, Any] | None:
    """The scheduled distillation: runs when switched on and its interval has passed."""
    config = memory_config_get()
    if not config.distillation_enabled:
        return None
    now = timezone.now()
    interval = timedelta(hours=config.distillation_every_hours)
    if config.distilled_at is not None and now - config.distilled_at < interval:
        return None
    # Claimed first, so two beats (or workers) never run it twice.
    claimed = MemoryConfig.objects.filter(pk=config.pk, distilled_at=config.distilled_at).update(
        distilled_at=now
    )
    if not claimed:
        return None
    return facts_distill()
