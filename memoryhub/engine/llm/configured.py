"""The instance's chat-model provider, as Settings -> Memory configures it.

The rest of this package knows nothing of Django; this module reads the instance
settings row (``memoryhub.engine.config``) and records failed calls on it, imported when
called so the client itself loads without Django's models.
"""

from __future__ import annotations

from django.conf import settings

from memoryhub.engine.circuits import RequestLimits

from .base import ChatModelConfigError, ChatProvider, ErrorReport, redact
from .factory import get_chat_provider


def llm_provider_get(*, in_request: bool = False) -> ChatProvider:
    """The provider for the configured chat model: offline without a chat model URL,
    model-backed otherwise (one per configuration per process, so the concurrency cap
    holds for every caller of the process).

    ``in_request``: for a call made while a request waits. It then takes at most
    ``LLM_REQUEST_DEADLINE_SECONDS`` in all, fails at once with ChatModelBusy when the
    process's ``LLM_CONCURRENCY`` calls for requests are under way, and fails at once
    (kind ``circuit_open``) while the model is left alone after failing
    ``EDGE_CIRCUIT_FAILURES`` times in a row. Jobs leave it false: they keep the longer
    ``LLM_TIMEOUT_SECONDS`` and ``LLM_RETRIES``, and wait their turn.

    Call its jobs outside any database transaction: a model call may take a minute, and
    must hold no lock meanwhile; and a failure recorded inside a transaction that then
    rolls back would be lost with it. A configuration that cannot work (a URL without a
    model name) is recorded and raised as ChatModelConfigError.
    """
    from memoryhub.engine.config import memory_config_get

    config = memory_config_get()
    try:
        return get_chat_provider(
            url=config.llm_url,
            model=config.llm_model,
            api_key=config.llm_api_key,
            timeout=settings.LLM_TIMEOUT_SECONDS,
            retries=settings.LLM_RETRIES,
            max_concurrency=settings.LLM_CONCURRENCY,
            on_error=llm_error_record,
            in_request=(
                RequestLimits(
                    deadline=settings.LLM_REQUEST_DEADLINE_SECONDS,
                    failures=settings.EDGE_CIRCUIT_FAILURES,
                    retry_seconds=settings.EDGE_CIRCUIT_RETRY_SECONDS,
                )
                if in_request
                else None
            ),
        )
    except ChatModelConfigError as exc:
        llm_error_record(
            ErrorReport(
                kind="config",
                message=redact(exc.message, secrets=(config.llm_api_key,)),
                model=config.llm_model,
            )
        )
        raise


def llm_error_record(report: ErrorReport) -> None:
    """Add a failed call to the model errors count shown in Settings -> Memory."""
    from memoryhub.engine.config import memory_config_llm_error_record

    memory_config_llm_error_record(kind=report.kind, message=report.message, at=report.at)
