"""Memory for any client of the chat-completions protocol: what happens to one turn
before it goes to the chat model and after its answer comes back.

Before: the facts relevant to the last user message are recalled for the token, as
``POST /api/recall`` recalls them (the same access rule, active team, fleet and
budgets), and the ``## Recalled Facts`` block is added to the system message (one is
created when the conversation has none). After: the new user turn and the answer are
queued for extraction, as ``POST /api/memories/extract`` queues a long conversation,
with the token and the conversation in the facts' provenance. The answer never waits
for that.

A call may switch either off: ``X-MemoryHub-Recall: off`` / ``X-MemoryHub-Capture: off``,
or a ``memoryhub`` object in the body (``{"recall": false, "capture": false}``), which
is taken out before the body goes on. The conversation is named by
``X-MemoryHub-Session`` (or ``memoryhub.session``); without one, by a hash of its
opening messages, so every turn of one chat shares a session.

The transport (streaming, the upstream call) is ``memoryhub.surface.chat_server``'s; this
module is what it asks of the database, in a worker thread.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from facts.recall import MAX_QUERY_LENGTH, fact_recall, fact_recall_count
from facts.services.extraction import (
    EXTRACT_MAX_CHARS,
    conversation_clean,
    memory_extract_request,
)
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import ApplicationError, InvalidInput
from memoryhub.engine.llm.base import redact
from memoryhub.engine.unicode import require_storable_text
from memoryhub.surface.recall import role_block, token_role_recall
from teams.models import AgentToken
from teams.services import Actor, audit_log

log = logging.getLogger(__name__)

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
# A short last message ("and the other one?") is read with the user turn before it.
SHORT_QUESTION_WORDS = 12
MAX_SESSION = 200
MAX_PROJECT = 200


class NoChatModel(ApplicationError):
    """No chat model to forward to: Settings -> Memory names none."""

    status_code = 503


@dataclass(frozen=True)
class Upstream:
    """Where a turn goes: the chat model's endpoint, its key (never logged) and model."""

    base: str
    api_key: str
    model: str

    @property
    def completions(self) -> str:
        return (
            self.base
            if self.base.endswith("/chat/completions")
            else f"{self.base}/chat/completions"
        )

    @property
    def models(self) -> str:
        base = self.base.removesuffix("/chat/completions")
        return f"{base}/models"

    def headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if stream else "application/json",
        }
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def redact(self, text: str) -> str:
        """``text`` fit to show or log: the key and anything shaped like one hidden."""
        return redact(text, secrets=(self.api_key,))


@dataclass
class Turn:
    """One call, ready to forward: the body the chat model gets and what to do after."""

    body: bytes
    stream: bool
    model: str
    upstream: Upstream
    recall: bool
    capture: bool
    session_id: str
    project: str
    recalled: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Milliseconds spent on each step before the chat model is asked (Server-Timing).
    timings: dict[str, float] = field(default_factory=dict)
    # The facts recalled, whose use is counted after the answer (None: no recall ran).
    recalled_ids: list[int] | None = None


def chat_upstream(token: AgentToken | None = None) -> Upstream:
    """The chat model a token's calls go to: its own, or that of Settings -> Memory;
    NoChatModel when there is none."""
    if token is not None and token.chat_url:
        return Upstream(
            base=token.chat_url.rstrip("/"), api_key=token.chat_api_key, model=token.chat_model
        )
    config = memory_config_get()
    base = (config.llm_url or "").strip().rstrip("/")
    if not base:
        raise NoChatModel(
            "No chat model is configured to answer: set its URL and model in Settings -> Memory."
        )
    return Upstream(base=base, api_key=config.llm_api_key or "", model=config.llm_model.strip())


def _switch(value: Any, *, name: str) -> bool | None:
    """A flag from a header or the body: on / off (true / false), None when absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("on", "true", "1", "yes"):
        return True
    if text in ("off", "false", "0", "no"):
        return False
    raise InvalidInput(f"{name} is on or off, not {str(value)[:40]!r}.")


def message_text(message: dict[str, Any]) -> str:
    """The text of a message: its content string, or the text parts of a content list
    (images and other parts are left out)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


def _messages_checked(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list of {role, content} objects.")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InvalidInput(f"messages[{index}] must be an object with a role.")
        if message.get("role") not in ROLES:
            raise InvalidInput(f"messages[{index}].role must be one of {', '.join(ROLES)}.")
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            raise InvalidInput(
                f"messages[{index}].content must be a string, a list of parts or null."
            )
    return messages


def recall_query(messages: list[dict[str, Any]]) -> str:
    """What to recall for: the last user message, with the user message before it when
    the last is short (a follow-up reads with what it follows), within the query limit."""
    said = [text for m in messages if m.get("role") == "user" and (text := message_text(m).strip())]
    if not said:
        return ""
    query = said[-1]
    if len(said) > 1 and len(query.split()) < SHORT_QUESTION_WORDS:
        query = f"{query}\n{said[-2]}"
    return query[:MAX_QUERY_LENGTH]


def turn_recall(
    *,
    actor: Actor,
    query: str,
    project: str | None = None,
    max_items: int | None = None,
    char_budget: int | None = None,
    touch: bool = True,
    count_later: bool = False,
) -> dict[str, Any]:
    """The per-turn recall of ``POST /api/recall``: the facts block and, for a token with
    a role, its preset's section, with the items behind them. ``touch``: count it as an
    access of the facts recalled (a preview does not); ``count_later``: the caller counts
    it (``fact_recall_count``) once its answer is on its way."""
    result = fact_recall(
        actor=actor,
        query=query,
        project=project,
        max_items=max_items,
        char_budget=char_budget,
        touch=touch,
        count_later=count_later,
    )
    role = actor.token.role if actor.token is not None else ""
    role_items = token_role_recall(actor=actor, query=query, project=project)
    block = "\n\n".join(part for part in (result.block, role_block(role, role_items)) if part)
    return {
        "block": block,
        "items": [item.as_dict() for item in result.items],
        "mode": result.mode,
        "notes": result.notes,
        "role": role,
        "role_items": role_items,
    }


def system_message_with(messages: list[dict[str, Any]], block: str) -> list[dict[str, Any]]:
    """``messages`` with ``block`` at the end of the first system (or developer) message,
    or in a system message put first when there is none. The others are left as sent."""
    messages = list(messages)
    for index, message in enumerate(messages):
        if message.get("role") not in ("system", "developer"):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = [*content, {"type": "text", "text": block}]
        elif isinstance(content, str) and content.strip():
            content = f"{content}\n\n{block}"
        else:
            content = block
        messages[index] = {**message, "content": content}
        return messages
    return [{"role": "system", "content": block}, *messages]


@dataclass
class TurnRecall:
    """What recall made of a conversation: the messages the chat model gets, how many
    items they gained, recall's notes, and (when it ran) the facts it recalled."""

    messages: list[dict[str, Any]]
    recalled: int = 0
    notes: list[str] = field(default_factory=list)
    fact_ids: list[int] | None = None


def turn_messages(
    *,
    actor: Actor,
    messages: list[dict[str, Any]],
    project: str | None = None,
    touch: bool = True,
    count_later: bool = False,
) -> TurnRecall:
    """The messages the chat model gets for ``actor``: the recalled block in the system
    message when anything is recalled. ``touch`` and ``count_later`` as ``turn_recall``."""
    query = recall_query(messages)
    if not query:
        return TurnRecall(messages)
    recalled = turn_recall(
        actor=actor, query=query, project=project, touch=touch, count_later=count_later
    )
    ids = [item["id"] for item in recalled["items"]]
    if not recalled["block"]:
        return TurnRecall(messages, notes=recalled["notes"], fact_ids=ids)
    return TurnRecall(
        system_message_with(messages, recalled["block"]),
        recalled=len(recalled["items"]) + len(recalled["role_items"]),
        notes=recalled["notes"],
        fact_ids=ids,
    )


def _session_of(messages: list[dict[str, Any]]) -> str:
    """A conversation's name when the client gives none: a hash of its opening system
    and user messages, the same on every turn of one chat."""
    opening = [
        message_text(m) for m in messages if m.get("role") in ("system", "developer", "user")
    ][:2]
    digest = hashlib.sha256("\x1f".join(opening).encode("utf-8", "replace")).hexdigest()
    return f"chat-{digest[:16]}"


def turn_prepare(*, actor: Actor, raw: bytes, headers: dict[str, str]) -> Turn:
    """Read a chat-completions body, recall for it and build what goes upstream.
    Bad input raises InvalidInput (nothing is recalled or sent); no chat model,
    NoChatModel."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"The body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidInput("The body must be a JSON object with model and messages.")
    require_storable_text(body)
    options = body.pop("memoryhub", None)
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise InvalidInput('memoryhub must be an object, e.g. {"recall": false}.')
    messages = _messages_checked(body)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise InvalidInput("stream must be true or false.")
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise InvalidInput("model must be a string.")

    def flag(header: str, key: str) -> bool:
        from_header = _switch(headers.get(header), name=header)
        from_body = _switch(options.get(key), name=f"memoryhub.{key}")
        return next((v for v in (from_body, from_header) if v is not None), True)

    recall, capture = flag("x-memoryhub-recall", "recall"), flag("x-memoryhub-capture", "capture")
    session = options.get("session", headers.get("x-memoryhub-session", ""))
    project = options.get("project", headers.get("x-memoryhub-project", ""))
    for name, value, limit in (
        ("session", session, MAX_SESSION),
        ("project", project, MAX_PROJECT),
    ):
        if not isinstance(value, str) or len(value) > limit:
            raise InvalidInput(f"The {name} is a string of at most {limit} characters.")

    upstream = chat_upstream(actor.token)
    if not model or model == "memoryhub":
        if not upstream.model:
            raise NoChatModel("No model was named and Settings -> Memory names none.")
        body["model"] = upstream.model
    turn = Turn(
        body=b"",
        stream=stream,
        model=body["model"],
        upstream=upstream,
        recall=recall,
        capture=capture,
        session_id=session.strip() or _session_of(messages),
        project=project.strip(),
        messages=messages,
    )
    if recall:
        started = time.perf_counter()
        recalled = turn_messages(
            actor=actor, messages=messages, project=turn.project or None, count_later=True
        )
        body["messages"], turn.recalled, turn.notes = (
            recalled.messages,
            recalled.recalled,
            recalled.notes,
        )
        turn.recalled_ids = recalled.fact_ids
        turn.timings["recall"] = (time.perf_counter() - started) * 1000
    turn.body = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return turn


def _exchange(messages: list[dict[str, Any]], answer: str) -> list[dict[str, str]]:
    """The turn to learn from: the user messages since the last answer, and this answer."""
    since = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        if message.get("role") == "user" and (text := message_text(message).strip()):
            since.append({"role": "user", "content": text})
    since.reverse()
    if answer.strip():
        since.append({"role": "assistant", "content": answer})
    # A very long turn keeps its end (the newest words) within what extraction takes.
    total = 0
    kept: list[dict[str, str]] = []
    for message in reversed(since):
        room = EXTRACT_MAX_CHARS - total
        if room <= 0:
            break
        kept.append({**message, "content": message["content"][-room:]})
        total += len(kept[-1]["content"])
    return list(reversed(kept))


def turn_finish(*, actor: Actor, turn: Turn, answer: str, status: int, outcome: str) -> str:
    """After the answer: queue the exchange for extraction (when the call allows it, the
    token may write and the chat model answered), and audit the call without its content.
    Answers what became of the capture."""
    if turn.recalled_ids is not None:
        try:
            fact_recall_count(user_id=actor.user.pk, fact_ids=turn.recalled_ids)
        except Exception:  # counts are bookkeeping: the answer was given
            log.exception("Could not count a chat completion's recall of %s", actor.label)
    capture = "off"
    if turn.capture:
        capture = "not_answered"
        if status == 200:
            capture = _capture(actor=actor, turn=turn, answer=answer)
    try:
        audit_log(
            actor=actor,
            action="chat.completion",
            target_type="model",
            target_id=turn.model[:64],
            details={
                "stream": turn.stream,
                "status": status,
                "outcome": outcome,
                "recalled": turn.recalled,
                "capture": capture,
                "messages": len(turn.messages),
                "request_bytes": len(turn.body),
                "answer_chars": len(answer),
            },
        )
    except Exception:  # the answer was given; a lost audit row is logged, not raised
        log.exception("Could not audit a chat completion of %s", actor.label)
    return capture


def _capture(*, actor: Actor, turn: Turn, answer: str) -> str:
    if actor.token is not None and not actor.token.has_scope("write"):
        return "not_allowed"
    exchange = _exchange(turn.messages, answer)
    if not any(m["role"] == "user" for m in exchange):
        return "nothing"
    try:
        with transaction.atomic():
            memory_extract_request(
                actor=actor,
                conversation=conversation_clean(messages=exchange),
                session_id=turn.session_id,
                project=turn.project,
            )
    except ApplicationError as exc:
        log.warning("A chat turn of %s was not captured: %s", actor.label, exc.message)
        return "refused"
    return "queued"


def turn_refused(*, actor: Actor, status: int, outcome: str) -> None:
    """Audit a call refused before it was forwarded (bad input, no chat model)."""
    audit_log(
        actor=actor,
        action="chat.completion",
        target_type="model",
        target_id="",
        details={"status": status, "outcome": outcome},
    )
