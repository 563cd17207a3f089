"""The audit log in sentences people read: "bob's agent ci-bot wrote fact #58", "alice
forgot 7 facts, 1 summary". Each action has a phrase; its placeholders are filled from
the event (``{target}``: what it was done to, a link while that still exists) and its
details. An action without a phrase still reads as a sentence, naming the action."""

from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import apps
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from teams.models import AuditEvent

# What a target of each type is called, the model that holds it (as "app.Model") and the
# page that shows it, for a link while it exists.
TARGETS: dict[str, tuple[str, str, str]] = {
    "fact": ("fact", "facts.Fact", "memory-fact"),
    "wiki_page": ("wiki page", "wiki.Page", "wiki-page"),
    "team": ("team", "auth.Group", "team"),
    "codeproject": ("code project", "codegraph.CodeProject", ""),
    "job": ("job", "engine.Job", ""),
    "agent_token": ("agent token", "teams.AgentToken", ""),
    "user": ("user", "auth.User", ""),
}

PHRASES: dict[str, str] = {
    "fact.create": "wrote {target}",
    "fact.bulk_create": "wrote {target}",
    "fact.update": "edited {target}",
    "fact.delete": "deleted {target}",
    "fact.archive": "archived {target}",
    "fact.restore": "restored {target}",
    "fact.merge": "merged a repeat into {target}",
    "fact.import": "imported facts{created_count}",
    "fact.export": "exported their facts",
    "visibility.widen": "widened who reads {target}",
    "learning.create": "recorded the learning {target}",
    "learning.import": "imported learnings",
    "memory.forget": "forgot {removed_summary}",
    "memory.extract": "extracted facts from a conversation",
    "memory.distill": "started a distillation ({target})",
    "review.approve": "approved a proposed fact",
    "review.reject": "rejected a proposed fact",
    "recall.cross_scope": "recalled facts of other people they may read",
    "recall.cross_fleet": "read another fleet's learnings ({justification})",
    "tool.call": "called the tool {target_id} over {transport}: {outcome}",
    "chat.completion": "sent a chat turn to the model {target_id} (answer: {outcome}, "
    "{recalled} items recalled, capture: {capture})",
    "wiki.create": "created {target}",
    "wiki.update": "edited {target}",
    "wiki.delete": "deleted {target}",
    "wiki.restore": "restored an earlier revision of {target}",
    "wiki.approve": "approved {target} for agents",
    "wiki.reject": "kept {target} from agents",
    "wiki.export": "exported wiki pages",
    "codegraph.project.create": "added {target}",
    "codegraph.project.move": "moved {target}",
    "codegraph.project.delete": "deleted {target}",
    "codegraph.scan": "started a scan of {target}",
    "concepts.build": "started a knowledge graph build ({target})",
    "concepts.alias_create": "added an alias to the knowledge graph",
    "concepts.alias_delete": "removed an alias from the knowledge graph",
    "team.create": "created {target}",
    "team.delete": "deleted the team {name}",
    "team.rename": "renamed the team {from} to {target}",
    "membership.add": "added {user} to {target}{as_role}",
    "membership.remove": "removed {user} from {target}",
    "membership.role": "made {user} {role} of {target}",
    "token.create": "created {target}",
    "token.revoke": "revoked {target}",
    "token.tools": "changed the tools of {target}",
    "user.invite": "invited {username}",
    "user.invite_accept": "accepted an invitation",
    "user.deactivate": "deactivated {username}",
    "user.password_reset": "made a password reset link for {username}",
    "user.reactivate": "reactivated {username}",
    "settings.memory": "changed their memory settings",
    "settings.instance": "changed the instance's memory settings",
    "export.personalization": "exported a person's data",
}

# How the counts of a forget read, in the order told.
_REMOVED = (
    ("facts", "fact", "facts"),
    ("summaries", "summary", "summaries"),
    ("profiles", "profile", "profiles"),
    ("wiki_pages", "wiki page edited", "wiki pages edited"),
    ("triples", "relation", "relations"),
    ("decisions_abandoned", "decision abandoned", "decisions abandoned"),
)


def _actor(event: AuditEvent) -> str:
    label = event.actor_label or "someone"
    user, via, token = label.partition(" via agent ")
    return f"{user}'s agent {token}" if via else label


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _removed(details: Mapping[str, Any]) -> str:
    removed = details.get("removed") or {}
    told = [
        _count(n, one, many)
        for key, one, many in _REMOVED
        if isinstance(n := removed.get(key), int) and n
    ]
    return ", ".join(told) or "nothing (no fact matched)"


def audit_links(events: Iterable[AuditEvent], *, viewer: Any) -> dict[tuple[str, str], str]:
    """The page of each target of ``events`` that still exists, has a page, and that
    ``viewer`` may open (what they may not read is named, not linked)."""
    wanted: dict[str, set[int]] = {}
    for event in events:
        target = TARGETS.get(event.target_type)
        if target and target[2] and event.target_id.isdigit():
            wanted.setdefault(event.target_type, set()).add(int(event.target_id))
    links = {}
    for target_type, ids in wanted.items():
        _, label, url_name = TARGETS[target_type]
        model = apps.get_model(label)
        if hasattr(model.objects, "visible_to"):
            rows = model.objects.visible_to(viewer)
        elif viewer.is_staff:
            rows = model.objects.all()
        else:  # a team: its members open its page
            rows = model.objects.filter(memberships__user=viewer)
        for pk in rows.filter(pk__in=ids).values_list("pk", flat=True):
            links[(target_type, str(pk))] = reverse(url_name, args=[pk])
    return links


def _target(event: AuditEvent, links: Mapping[tuple[str, str], str]) -> SafeString:
    known = TARGETS.get(event.target_type)
    noun = known[0] if known else event.target_type.replace("_", " ")
    details = event.details if isinstance(event.details, dict) else {}
    name = details.get("name") or details.get("title")
    if event.target_type == "team":
        name = name or details.get("team")
    said = f"{noun} {name}" if isinstance(name, str) and name else noun
    if event.target_id:
        said = f"{said} #{event.target_id}"
    url = links.get((event.target_type, event.target_id))
    return format_html('<a href="{}">{}</a>', url, said) if url else format_html("{}", said)


class _Filled(dict):
    """The values of a phrase's placeholders; one the event lacks reads as "?"."""

    def __missing__(self, key: str) -> str:
        return "?"


def audit_sentence(event: AuditEvent, links: Mapping[tuple[str, str], str]) -> SafeString:
    """One event as a sentence, its target a link while it exists (HTML-safe)."""
    details = event.details if isinstance(event.details, dict) else {}
    values = _Filled(
        {
            key: format_html("{}", value)
            for key, value in details.items()
            if isinstance(value, str | int | float) and not isinstance(value, bool)
        }
    )
    values["target"] = _target(event, links)
    values["target_id"] = format_html("{}", event.target_id)
    values["removed_summary"] = format_html("{}", _removed(details))
    created = details.get("created")
    values["created_count"] = (
        format_html(": {} written", created) if isinstance(created, int) else ""
    )
    role = details.get("role")
    values["as_role"] = format_html(" as {}", role) if isinstance(role, str) and role else ""
    phrase = PHRASES.get(event.action)
    if phrase is None:
        action = event.action.replace("_", " ")
        phrase = f"did {action} on {{target}}" if event.target_type else f"did {action}"
    # Every value is escaped above, and the phrases are ours.
    return format_html("{} {}", _actor(event), mark_safe(phrase.format_map(values)))
