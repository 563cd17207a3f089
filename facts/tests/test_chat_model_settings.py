"""The provider Settings -> Memory configures, and the model errors it records there."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings

from conftest import worker_env
from facts.models import Category, Origin, Sentiment, Source
from facts.services import config as fact_config
from facts.services.config import memory_config_update
from memoryhub.engine.config import memory_config_get, memory_config_llm_error_record
from memoryhub.engine.errors import InvalidInput
from memoryhub.engine.llm import ChatModelConfigError, ChatModelError, OfflineProvider, SourceText
from memoryhub.engine.llm.configured import llm_provider_get
from memoryhub.engine.llm.schemas import FactProposal
from memoryhub.engine.llm.tests.conftest import (  # noqa: F401
    ChatServer,
    Reply,
    Responder,
    completion,
    serve,
)
from memoryhub.engine.models import MemoryConfig
from teams.services import Actor

Serve = Callable[[Responder], ChatServer]
KEY = "sk-live-0123456789abcdef"


@pytest.fixture(autouse=True)
def _quick_client(settings) -> None:
    settings.LLM_RETRIES = 0
    settings.LLM_TIMEOUT_SECONDS = 5.0


def configure(staff, server: ChatServer, model: str = "qwen2.5:7b") -> None:
    memory_config_update(
        actor=Actor(user=staff),
        changes={"llm_url": server.url, "llm_model": model, "llm_api_key": KEY},
    )


@pytest.mark.django_db
def test_without_a_chat_model_url_the_offline_provider_does_the_work() -> None:
    provider = llm_provider_get()

    assert isinstance(provider, OfflineProvider)
    result = provider.summarize([SourceText(id=1, text="The user likes tea.")])
    assert result.provider == "offline"
    assert result.summaries[0].source_ids == [1]


@pytest.mark.django_db
def test_the_configured_model_answers_and_one_client_serves_every_caller(
    serve: Serve,  # noqa: F811
    staff,
) -> None:
    server = serve(
        lambda request, count: completion(
            {"summaries": [{"text": "The user likes tea.", "source_ids": [1]}]}
        )
    )
    configure(staff, server)

    provider = llm_provider_get()
    result = provider.summarize([SourceText(id=1, text="The user likes tea.")])

    assert llm_provider_get() is provider  # so the concurrency cap holds for all of them
    assert result.provider == "qwen2.5:7b"
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert memory_config_get().llm_error_count == 0


@pytest.mark.django_db
def test_a_failed_call_writes_nothing_else_and_is_counted_with_the_last_error(
    serve: Serve,  # noqa: F811
    staff,
) -> None:
    def responder(request, count: int) -> Reply:
        if count == 1:
            return completion("Sure! Here are the facts: tea, biscuits")
        return Reply(status=500, body=f'{{"error": "key {KEY} is over quota"}}'.encode())

    server = serve(responder)
    configure(staff, server)
    provider = llm_provider_get()
    before = datetime.now(UTC)

    with pytest.raises(ChatModelError):
        provider.extract_facts("I like tea.")

    config = memory_config_get()
    assert config.llm_error_count == 1
    assert config.llm_last_error_kind == "malformed"
    assert "not JSON" in config.llm_last_error_message
    assert config.llm_last_error_at >= before

    with pytest.raises(ChatModelError):
        provider.extract_facts("I like tea.")

    config = memory_config_get()
    assert config.llm_error_count == 2
    assert config.llm_last_error_kind == "server"
    assert "HTTP 500" in config.llm_last_error_message
    assert KEY not in config.llm_last_error_message


@pytest.mark.django_db
def test_a_url_without_a_model_name_is_recorded_as_a_configuration_error() -> None:
    memory_config_get()
    MemoryConfig.objects.filter(pk=1).update(llm_url="http://127.0.0.1:9/v1", llm_model="")

    with pytest.raises(ChatModelConfigError, match="model name"):
        llm_provider_get()

    config = memory_config_get()
    assert (config.llm_error_count, config.llm_last_error_kind) == (1, "config")


@pytest.mark.django_db
def test_an_error_recorded_late_counts_but_does_not_replace_a_newer_one() -> None:
    now = datetime.now(UTC)
    memory_config_llm_error_record(kind="timeout", message="newer", at=now)
    memory_config_llm_error_record(kind="server", message="older", at=now - timedelta(seconds=5))

    config = memory_config_get()
    assert config.llm_error_count == 2
    assert (config.llm_last_error_kind, config.llm_last_error_message) == ("timeout", "newer")


@pytest.mark.django_db
def test_saving_settings_read_before_an_error_was_recorded_keeps_the_count(
    staff, monkeypatch
) -> None:
    stale = memory_config_get()  # a settings form opened before the model failed
    memory_config_llm_error_record(kind="invalid", message="bad answer", at=datetime.now(UTC))
    monkeypatch.setattr(fact_config, "memory_config_get", lambda: stale)

    memory_config_update(actor=Actor(user=staff), changes={"recall_max_items": 5})

    config = MemoryConfig.objects.get(pk=1)
    assert config.recall_max_items == 5
    assert (config.llm_error_count, config.llm_last_error_kind) == (1, "invalid")


@pytest.mark.django_db
def test_the_error_fields_are_not_settings_anyone_can_change(staff) -> None:
    with pytest.raises(InvalidInput, match="Unknown memory setting"):
        memory_config_update(actor=Actor(user=staff), changes={"llm_error_count": 0})


_FAIL_IN_CHILD = """
from memoryhub.engine.llm import ChatModelError
from memoryhub.engine.llm.configured import llm_provider_get
provider = llm_provider_get()
for _ in range({calls}):
    try:
        provider.extract_facts("I like tea.")
    except ChatModelError:
        pass
"""


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_errors_of_several_processes_add_up_to_one_count(
    serve: Serve,  # noqa: F811
    staff,
    tmp_path: Path,
) -> None:
    server = serve(lambda request, count: completion('{"facts": "not a list"}'))
    configure(staff, server)
    calls = 8
    env = worker_env(data_dir=tmp_path, extra={"MEMORYHUB_LLM_RETRIES": "0"})
    children = [
        subprocess.Popen(
            [sys.executable, "manage.py", "shell", "-c", _FAIL_IN_CHILD.format(calls=calls)],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for _ in range(2)
    ]
    provider = llm_provider_get()
    for _ in range(calls):
        with pytest.raises(ChatModelError):
            provider.extract_facts("I like tea.")
    for child in children:
        output, _ = child.communicate(timeout=120)
        assert child.returncode == 0, output.decode()

    config = memory_config_get()
    assert len(server.requests) == 3 * calls
    assert config.llm_error_count == 3 * calls
    assert config.llm_last_error_kind == "invalid"


def test_the_proposal_labels_are_those_of_the_fact_store() -> None:
    schema = FactProposal.model_json_schema()["properties"]
    extractable = set(Category.values) - {"summary", "profile", "learning"}

    assert set(schema["category"]["enum"]) == extractable
    assert set(schema["source"]["enum"]) == set(Source.values)
    assert set(schema["sentiment"]["enum"]) == set(Sentiment.values)
    origins = {FactProposal(content="x", source=s).origin for s in Source.values}
    assert origins == set(Origin.values) - {"merged", "imported"}
