"""Settings -> Memory: the instance settings staff change, and the chat model errors
recorded beside them."""

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from facts.models import MemoryConfig
from facts.ranking import RecallTuning
from facts.selectors import memory_config_get
from memoryhub.errors import Forbidden, InvalidInput
from memoryhub.tasks import enqueue_on_commit
from teams.services import Actor, audit_log

SECRET_FIELDS = ("embeddings_api_key", "llm_api_key")
EDITABLE_SETTINGS = frozenset(
    f.name
    for f in MemoryConfig._meta.concrete_fields
    if f.editable and f.name not in ("id", "updated_at")
)


@transaction.atomic
def memory_config_update(*, actor: Actor, changes: dict[str, Any]) -> MemoryConfig:
    """Change instance settings (staff only). Empty secret fields keep the stored key.
    Switching embeddings on or changing the model queues a backfill."""
    if not actor.user.is_staff:
        raise Forbidden("Only staff can change the memory settings.")
    config = memory_config_get()
    before_key, before_enabled = config.embedder_key, config.embeddings_enabled
    changed: dict[str, Any] = {}
    for name, value in changes.items():
        if name in SECRET_FIELDS and not value:
            continue
        if name not in EDITABLE_SETTINGS:
            raise InvalidInput(f"Unknown memory setting '{name}'.")
        if name == "recall_tuning":
            value = RecallTuning.clean(value)
        if getattr(config, name) != value:
            setattr(config, name, value)
            changed[name] = "(set)" if name in SECRET_FIELDS else value
    if not changed:
        return config
    config.updated_at = timezone.now()
    # Only what changed: the row also holds counts other processes add to meanwhile.
    config.save(update_fields=[*changed, "updated_at"])
    audit_log(
        actor=actor,
        action="settings.instance",
        target_type="memory_config",
        target_id=1,
        details=changed,
    )
    if config.embeddings_enabled and (config.embedder_key != before_key or not before_enabled):
        from facts.tasks import facts_backfill_embeddings

        enqueue_on_commit(facts_backfill_embeddings)
    return config


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
