"""Settings -> Memory: the instance settings staff change, with what a change means for
the fact store (its recall tuning checked, its vectors rebuilt for a new embedder)."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from facts.ranking import RecallTuning
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.errors import Forbidden, InvalidInput
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.tasks import enqueue_on_commit
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
