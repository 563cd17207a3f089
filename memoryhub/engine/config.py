"""The instance settings (Settings -> Memory): the one row every app and the engine
read, and the chat model errors recorded on it.

What a change of a setting means for an app (the fact store re-embeds when the
embedder changes, checks its recall tuning) is that app's workflow: see
``facts.services.config``.
"""

import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Case, F, Q, Value, When
from django.http import Http404
from django.urls import URLPattern

from memoryhub.engine.errors import NotFound
from memoryhub.engine.models import MemoryConfig


def memory_config_get() -> MemoryConfig:
    """The instance's memory settings, created from the environment defaults."""
    config = MemoryConfig.objects.filter(pk=1).first()
    if config is None:
        config, _ = MemoryConfig.objects.get_or_create(pk=1, defaults=settings.MEMORY_DEFAULTS)
    return config


# The apps an instance may switch off, with the setting that does and their name.
SWITCHABLE = {"codegraph": ("codegraph_enabled", "CodeGraph"), "wiki": ("wiki_enabled", "The wiki")}


class FeatureOff(NotFound):
    """A request for a feature switched off in Settings -> Memory."""


def feature_enabled(app: str, *, config: MemoryConfig | None = None) -> bool:
    """Whether the app labelled ``app`` is on (an app that cannot be switched off is)."""
    if app not in SWITCHABLE:
        return True
    return bool(getattr(config or memory_config_get(), SWITCHABLE[app][0]))


def features_off() -> set[str]:
    """The labels of the apps switched off, in one small read (nothing is created: with
    no settings row yet, every app is on)."""
    fields = [field for field, _ in SWITCHABLE.values()]
    row = MemoryConfig.objects.filter(pk=1).values_list(*fields).first()
    if row is None:
        return set()
    return {app for app, on in zip(SWITCHABLE, row, strict=True) if not on}


def feature_require(app: str) -> None:
    """FeatureOff, saying so, when the app labelled ``app`` is switched off."""
    if not feature_enabled(app):
        raise FeatureOff(
            f"{SWITCHABLE[app][1]} is switched off on this server; staff can switch it on "
            "under Settings -> Memory."
        )


def feature_guard[V: Callable[..., Any]](app: str, *, page: bool = False) -> Callable[[V], V]:
    """A view decorator: while the app labelled ``app`` is switched off the view answers
    404 saying so (an API view through FeatureOff, a page through Http404 and the
    dashboard's error page)."""

    def decorate(view: V) -> V:
        @functools.wraps(view)
        def guarded(request: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                feature_require(app)
            except FeatureOff as exc:
                if page:
                    raise Http404(exc.message) from None
                raise
            return view(request, *args, **kwargs)

        return guarded  # type: ignore[return-value]

    return decorate


def feature_pages(app: str, patterns: list[URLPattern]) -> list[URLPattern]:
    """The URL patterns of an app's pages, each answering 404 (saying why) while the
    app is switched off."""
    for pattern in patterns:
        pattern.callback = feature_guard(app, page=True)(pattern.callback)
    return patterns


def chat_model_status(*, config: MemoryConfig) -> dict[str, Any]:
    """What Settings -> Memory shows about the chat model: which one is in use (none:
    the offline rules) and the calls that failed, as stored (not as a form edits them)."""
    return {
        "url": config.llm_url,
        "model": config.llm_model,
        "error_count": config.llm_error_count,
        "last_error_at": config.llm_last_error_at,
        "last_error_kind": config.llm_last_error_kind,
        "last_error_message": config.llm_last_error_message,
    }


def memory_config_llm_error_record(*, kind: str, message: str, at: datetime) -> None:
    """Count one failed chat model call and keep it as the last error, unless a later
    one was recorded meanwhile. One UPDATE, so errors of every process add up.

    ``message`` must hold no secret (the chat model client redacts its messages)."""
    memory_config_get()  # the row exists from here on
    newer = Q(llm_last_error_at__isnull=True) | Q(llm_last_error_at__lte=at)

    def latest(field: str, value: Any) -> Case:
        return Case(When(newer, then=Value(value)), default=F(field))

    MemoryConfig.objects.filter(pk=1).update(
        llm_error_count=F("llm_error_count") + 1,
        llm_last_error_at=latest("llm_last_error_at", at),
        llm_last_error_kind=latest("llm_last_error_kind", kind[:16]),
        llm_last_error_message=latest("llm_last_error_message", message[:300]),
    )
