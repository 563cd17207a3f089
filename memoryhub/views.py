from datetime import date, timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import Resolver404, reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from codegraph.models import ScanState
from codegraph.selectors import code_project_list_visible
from facts.models import Category
from facts.selectors import (
    fact_agents_recent,
    fact_embedding_progress,
    fact_layer_stats,
    fact_stats,
    fact_written_per_day,
    memory_review_pending_count,
    recall_served_per_day,
)
from facts.services.distillation import facts_distill_request
from facts.services.extraction import (
    memory_review_approve,
    memory_review_reject,
    memory_reviews_decide,
    memory_reviews_pending,
)
from memoryhub.engine.addresses import chat_base_url
from memoryhub.engine.config import chat_model_status, features_off, memory_config_get
from memoryhub.engine.errors import ApplicationError, InvalidInput
from memoryhub.engine.htmx import htmx_render
from memoryhub.engine.jobs import job_get_visible, jobs_failed_since, jobs_unfinished
from memoryhub.engine.refs import id_of
from memoryhub.health import queue_glance
from memoryhub.surface.chat import turn_messages
from memoryhub.surface.export import personal_export
from memoryhub.surface.forget import memory_forget, memory_forget_preview
from memoryhub.surface.imports import (
    document_parse,
    document_too_large,
    import_max_bytes,
    memories_import_request,
)
from teams.forms import ChatPreviewForm
from teams.selectors import agent_token_list, memberships_of
from teams.services import Actor, agent_token_reads, memory_settings_get
from wiki.selectors import wiki_flagged_waiting

# How far back the home page looks: its charts, the agents' writes and failed work.
GLANCE_DAYS = 30
LATELY_DAYS = 7


@login_required
def home_view(request: HttpRequest) -> HttpResponse:
    """The memory at a glance: facts by layer and category, facts written and recalls
    served per day, what agents wrote lately, the embedding backlog, the jobs under way,
    the review queue, the health of the worker, the queue and the chat model, and what
    needs attention. Of what the user may read (their recalls and jobs); staff see the
    whole instance unless they ask for their own (``?scope=mine``)."""
    user = request.user
    instance = bool(user.is_staff) and request.GET.get("scope") != "mine"
    off = features_off()
    lately = timezone.now() - timedelta(days=LATELY_DAYS)
    stats = fact_stats(user=user, instance=instance)
    written = fact_written_per_day(user=user, days=GLANCE_DAYS, instance=instance)
    served = recall_served_per_day(user=user, days=GLANCE_DAYS, instance=instance)
    jobs, jobs_count = jobs_unfinished(user=user, instance=instance)
    failed, failed_count = jobs_failed_since(user=user, since=lately, instance=instance)
    flagged, flagged_count = (
        ([], 0) if "wiki" in off else wiki_flagged_waiting(user=user, instance=instance)
    )
    projects = code_project_list_visible(user=user)
    if "codegraph" in off:
        projects = projects.none()
    scans = list(projects.filter(state__in=(ScanState.QUEUED, ScanState.RUNNING))[:5])
    context = {
        "instance": instance,
        "glance_days": GLANCE_DAYS,
        "lately_days": LATELY_DAYS,
        "stats": stats,
        "layers": fact_layer_stats(user=user, instance=instance),
        "categories": [
            {"value": value, "label": label, "count": stats["by_category"].get(value, 0)}
            for value, label in Category.choices
        ],
        "activity": [
            {"day": day, "written": written[day], "served": served[day]} for day in written
        ],
        "written": _series(written),
        "served": _series(served),
        "agents": fact_agents_recent(user=user, since=lately, instance=instance),
        "embedding": fact_embedding_progress(user=user, instance=instance),
        "reviews_waiting": memory_review_pending_count(user=user, instance=instance),
        "jobs": jobs,
        "jobs_count": jobs_count,
        "scans": scans,
        "under_way": jobs_count + len(scans),
        "failed_jobs": failed,
        "failed_count": failed_count,
        "failed_scans": list(projects.filter(state=ScanState.FAILED, finished_at__gte=lately)),
        "flagged_pages": flagged,
        "flagged_count": flagged_count,
        **_health_context(),
        "memberships": memberships_of(user=user),
        "prefs": memory_settings_get(user=user),
        "active_tokens": agent_token_list(user=user).filter(revoked_at__isnull=True).count(),
    }
    return render(request, "home.html", context)


def _series(per_day: dict[date, int]) -> dict[str, Any]:
    """A day-by-day count's total and busiest day, for the chart's text alternative."""
    peak = max(per_day, key=lambda day: (per_day[day], day))
    return {"total": sum(per_day.values()), "peak_day": peak, "peak": per_day[peak]}


def _health_context() -> dict[str, Any]:
    chat_model = chat_model_status(config=memory_config_get())
    chat_model["last_error_kind"] = chat_model["last_error_kind"].replace("_", " ")
    return {"queue": queue_glance(), "chat_model": chat_model}


@login_required
def home_health_view(request: HttpRequest) -> HttpResponse:
    """The home page's health card, which polls it: the worker and the queue as last
    checked (never waiting for a check) and the chat model's errors."""
    return render(request, "home.html#health", _health_context())


# --- Error pages --------------------------------------------------------------------------
# Django calls these (see handler400/403/404 in urls.py) with the exception that refused
# the request. Each answers inside the dashboard layout with the reason, or with just
# the card when HTMX asked, so it lands where the action's result would have.


def _error_page(request: HttpRequest, *, status: int, title: str, reason: str) -> HttpResponse:
    context = {"status": status, "title": title, "reason": reason}
    return htmx_render(request, "error.html", context, partial="error-card", status=status)


def _message_of(exception: Exception | None) -> str:
    """The message a view gave the exception, if it gave one."""
    args = getattr(exception, "args", ())
    return args[0] if args and isinstance(args[0], str) else ""


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    # A malformed or oversized request says nothing more about the server than that.
    reason = "" if isinstance(exception, SuspiciousOperation) else _message_of(exception)
    return _error_page(
        request,
        status=400,
        title="Bad request",
        reason=reason or "The request could not be read: it was malformed or too large.",
    )


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(
        request,
        status=403,
        title="Not allowed",
        reason=_message_of(exception) or "You are not allowed to do this.",
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    reason = "" if isinstance(exception, Resolver404) else _message_of(exception)
    return _error_page(
        request,
        status=404,
        title="Not found",
        reason=reason or f"There is no page at {request.path}.",
    )


@login_required
@require_POST
def chat_preview_view(request: HttpRequest) -> HttpResponse:
    """The Agents page's preview: the system message the chat model would get when the
    chosen token's agent sends this conversation through the OpenAI-compatible endpoint.
    Nothing is counted as an access."""
    form = ChatPreviewForm(request.POST, user=request.user)
    context: dict[str, Any] = {"preview_form": form}
    status = 200
    if form.is_valid():
        said = [{"role": "user", "content": form.cleaned_data["message"]}]
        if form.cleaned_data["system"].strip():
            said.insert(0, {"role": "system", "content": form.cleaned_data["system"]})
        try:
            turn = turn_messages(
                actor=agent_token_reads(form.cleaned_data["token"]),
                messages=said,
                project=form.cleaned_data["project"].strip() or None,
                touch=False,
            )
        except ApplicationError as exc:
            context["preview_error"], status = exc.message, exc.status_code
        else:
            system = next((m["content"] for m in turn.messages if m["role"] == "system"), "")
            context["preview"] = {"system": system, "recalled": turn.recalled, "notes": turn.notes}
    else:
        status = 400
    return render(request, "teams/agents.html#chat-preview", context, status=status)


@csrf_exempt  # an API client's call, answered with where to send it; nothing changes
def chat_elsewhere(request: HttpRequest, rest: str = "") -> HttpResponse:
    """``/v1/...`` on the web server's port: the OpenAI-compatible endpoint is on its own
    port (a long answer must not hold a web thread); say where, in the protocol's shape."""
    base = chat_base_url(request)
    message = (
        f"The OpenAI-compatible endpoint is served at {base}: use that as the base URL "
        "(and your agent token as the API key)."
    )
    return JsonResponse(
        {"error": {"message": message, "type": "invalid_request_error", "code": "wrong_port"}},
        status=421,
    )


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return _error_page(
        request,
        status=403,
        title="Form expired",
        reason="This form could not be checked (it expired, or cookies are blocked): "
        "go back, reload the page and send it again.",
    )


# --- Forget a topic -----------------------------------------------------------------------


@login_required
def forget_view(request: HttpRequest) -> HttpResponse:
    """Forget topic: GET previews the facts about a topic (``?topic=``), each with why it
    matched; POST forgets the ones ticked, with all that derives from them, and shows
    the receipt."""
    actor = Actor.from_request(request)
    topic = (request.POST.get("topic") or request.GET.get("topic") or "").strip()
    context: dict = {"topic": topic, "preview": None, "receipt": None, "error": ""}
    status = 200
    try:
        if request.method == "POST":
            ids = [id_of(value) for value in request.POST.getlist("ids")]
            if not ids or None in ids:
                raise InvalidInput("Tick the facts to forget.")
            context["receipt"] = memory_forget(actor=actor, topic=topic, ids=ids)
        elif topic:
            context["preview"] = memory_forget_preview(actor=actor, topic=topic)
    except ApplicationError as exc:
        context["error"], status = exc.message, exc.status_code
    return htmx_render(request, "forget.html", context, partial="forget-result", status=status)


@login_required
def memory_import_view(request: HttpRequest) -> HttpResponse:
    """Import: GET shows the upload form; POST checks the uploaded document whole and
    imports it now when it is small, else starts a job whose progress the answer
    polls."""
    context: dict = {"max_bytes": import_max_bytes(), "result": None, "job": None, "error": ""}
    status = 200
    if request.method == "POST":
        try:
            upload = request.FILES.get("file")
            if upload is None:
                raise InvalidInput("Choose a JSON file to import.")
            if upload.size > import_max_bytes():
                raise document_too_large(upload.size)
            outcome = memories_import_request(
                actor=Actor.from_request(request), document=document_parse(upload.read())
            )
            context["result" if isinstance(outcome, dict) else "job"] = outcome
        except ApplicationError as exc:
            context["error"], status = exc.message, exc.status_code
    return htmx_render(request, "import.html", context, partial="import-result", status=status)


# --- Reviews and distillation --------------------------------------------------------------


@login_required
def reviews_view(request: HttpRequest) -> HttpResponse:
    """The proposals extraction made for the user: approve (edited or not) or reject
    them, one by one or ticked in bulk; and Distill now, with its job's progress."""
    actor = Actor.from_request(request)
    notice, error, status = "", "", 200
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            notice = _review_action(actor=actor, action=action, data=request.POST)
        except ApplicationError as exc:
            error, status = exc.message, exc.status_code
    pending = list(memory_reviews_pending(user=request.user)[:200])
    context = {
        "reviews": pending,
        "notice": notice,
        "error": error,
        "categories": Category.choices,
        "job": _latest_distill_job(request.user),
    }
    return htmx_render(request, "reviews.html", context, partial="review-queue", status=status)


def _review_action(*, actor: Actor, action: str, data: Any) -> str:
    if action == "distill":
        job = facts_distill_request(actor=actor)
        return f"Distillation started (job {job.pk})."
    if action in ("approve-ticked", "reject-ticked"):
        ids = [id_of(value) for value in data.getlist("ids")]
        if not ids or None in ids:
            raise InvalidInput("Tick the proposals first.")
        done = memory_reviews_decide(
            actor=actor, review_ids=ids, approve=action == "approve-ticked"
        )
        verb = "Approved" if action == "approve-ticked" else "Rejected"
        refused = f"; {len(done['refused'])} could not be" if done["refused"] else ""
        return f"{verb} {len(done['done'])} proposal{pluralize(len(done['done']))}{refused}."
    review_id = id_of(data.get("review", ""))
    if review_id is None:
        raise InvalidInput("Name the proposal.")
    if action == "reject":
        memory_review_reject(actor=actor, review_id=review_id)
        return f"Rejected proposal {review_id}."
    if action == "approve":
        edits = {}
        for name in ("content", "category", "importance"):
            value = data.get(name)
            if value not in (None, ""):
                edits[name] = value
        if "importance" in edits:
            try:
                edits["importance"] = float(edits["importance"])
            except ValueError:
                raise InvalidInput("Importance must be a number between 0 and 1.") from None
        result = memory_review_approve(actor=actor, review_id=review_id, edits=edits)
        how = "written as" if result.created else "merged into"
        return f"Approved proposal {review_id}: {how} fact {result.fact.pk}."
    raise InvalidInput("Unknown action.")


def _latest_distill_job(user: Any) -> Any:
    from memoryhub.engine.models import Job

    return Job.objects.filter(owner=user, kind="distill").order_by("-created_at", "-id").first()


@login_required
def job_view(request: HttpRequest, job_id: int) -> HttpResponse:
    """A job's progress card (polled by the page while it runs), or opened by its
    address, a page of its own."""
    try:
        job = job_get_visible(user=request.user, job_id=job_id)
    except ApplicationError as exc:
        return _error_page(request, status=exc.status_code, title="Not found", reason=exc.message)
    return htmx_render(request, "job.html", {"job": job}, partial="job-card")


# --- A person's data, for their data subject request ---------------------------------------


@login_required
def person_export_view(request: HttpRequest) -> HttpResponse:
    """Staff download a person's export from Settings; a name nobody has (or a refusal)
    is said on the settings page, not as a JSON error."""
    username = request.GET.get("user", "").strip()
    try:
        subject, pieces = personal_export(actor=Actor.from_request(request), username=username)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect(f"{reverse('settings')}#export-person")
    response = StreamingHttpResponse(pieces, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="memoryhub-export-{subject.pk}.json"'
    return response
