"""The chat-model provider interface, its errors, and the error reports callers record."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol, runtime_checkable

from .schemas import ChatMessage, FactProposals, SourceText, Summaries, Triples

# What went wrong with one call, as the settings page shows it.
ErrorKind = Literal[
    "config",  # the configuration cannot work (no model name, a bad URL)
    "unreachable",  # no connection to the server, after the retries
    "timeout",  # no complete answer within the time allowed, after the retries
    "rate_limited",  # HTTP 429 after the retries, or a Retry-After longer than we wait
    "server",  # HTTP 5xx after the retries
    "refused",  # HTTP 4xx other than 429: the request itself is wrong (never retried)
    "malformed",  # the answer is not JSON, not a chat completion, or cut off
    "invalid",  # the JSON does not match the schema the caller asked for
    # Only for calls made while a request waits, and never recorded: the model was not asked.
    "busy",  # every slot of the process for requests is taken
    "circuit_open",  # it failed too often lately, and is left alone for a while
]

MESSAGE_LIMIT = 300


class ChatModelError(Exception):
    """Base of every error of the chat-model package; ``kind`` says which failure."""

    kind: ErrorKind = "config"

    def __init__(
        self, message: str, *, kind: ErrorKind | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        # Seconds after which asking again may work, when that is known.
        self.retry_after = retry_after


class ChatModelConfigError(ChatModelError):
    """The chat-model configuration (URL, model) is unusable."""

    kind: ErrorKind = "config"


class ChatModelUnavailable(ChatModelError):
    """The server could not be reached, timed out, was rate limited or failed.

    Nothing was learned from the model; trying again later may work."""


class ChatModelBusy(ChatModelUnavailable):
    """A call made while a request waits found every slot of the process for such calls
    taken: it was not made (a job may make it instead)."""

    kind: ErrorKind = "busy"


class ChatModelOutputError(ChatModelError):
    """The server answered, but not with JSON matching the requested schema.

    ``kind`` is ``malformed`` (not JSON, not a chat completion, truncated) or
    ``invalid`` (JSON that breaks the schema)."""


@dataclass(frozen=True)
class ErrorReport:
    """One failed call, as recorded for the operator: no prompt, no answer, no key."""

    kind: ErrorKind
    message: str
    model: str = ""
    at: datetime = field(default_factory=lambda: datetime.now(UTC))


# Called once per failed call (not per retry), before the error is raised.
ErrorRecorder = Callable[[ErrorReport], None]

_SECRET_PATTERNS = (
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{6,}"),
    # The shapes of providers' keys: sk-..., sk-proj-..., gsk_..., hf_..., xai-..., nvapi-...
    re.compile(r"\b(?:sk|pk|rk|gsk|hf|xai|nvapi)[-_][A-Za-z0-9_-]{8,}"),
)


def redact(text: str, *, secrets: Sequence[str] = ()) -> str:
    """``text`` on one line, at most ``MESSAGE_LIMIT`` characters, with the given secrets
    and anything shaped like an API key or bearer token replaced by ``***``.

    Servers echo request details in their error bodies, so every message that may be
    stored or shown passes through here."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) + " ***") if m.lastindex else "***", text)
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


@runtime_checkable
class ChatProvider(Protocol):
    """The jobs the memory lifecycle and the concept graph ask of a chat model.

    Two implementations: :class:`~memoryhub.engine.llm.offline.OfflineProvider` (rules and
    statistics, no model) and :class:`~memoryhub.engine.llm.model.ModelProvider` (prompts to an
    OpenAI-compatible endpoint, answers validated against a schema). Every result names
    the provider that produced it in ``provider`` (``"offline"`` or the model id), so
    callers can record where a summary, fact or triple came from.

    The model provider raises :class:`ChatModelUnavailable` or
    :class:`ChatModelOutputError` when it gets no usable answer; callers then write
    nothing. The offline provider does not fail on any text.
    """

    @property
    def provider_id(self) -> str:
        """``"offline"``, or the id of the model that answers."""
        ...

    def summarize(self, sources: Sequence[SourceText], *, max_summaries: int = 5) -> Summaries:
        """Condense ``sources`` into at most ``max_summaries`` summaries, each naming the
        ids of the sources it draws on (only ids given here)."""
        ...

    def extract_facts(self, conversation: str | Sequence[ChatMessage]) -> FactProposals:
        """Propose the durable facts a conversation (or a plain text, taken as said by
        the user) states about the user and the things they work with."""
        ...

    def extract_triples(self, sources: str | Sequence[SourceText]) -> Triples:
        """Subject -> relation -> object statements found in ``sources``, each with the
        types of its two entities and the id of the source it came from (0 for a plain
        text)."""
        ...
