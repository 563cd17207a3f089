"""Every operation of the JSON API, fed generated requests, answers below 500.

Requests come from the API's own OpenAPI schema (Schemathesis): ones the schema allows
and ones it does not (wrong types, missing or extra fields, values out of range), with
random path ids and the ids of rows that exist, as an agent with a read-write token.

The cases are derandomized, so every run sends the same ones and the suite stays
deterministic. ``MEMORYHUB_FUZZ_EXAMPLES=500 make test PYTEST_ARGS=tests/test_api_fuzz.py``
searches deeper, with fresh random cases each run."""

import contextlib
import os
from collections import defaultdict

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given
from hypothesis import settings as run_with
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from codegraph.services import code_project_scan_request
from facts.services import fact_create
from memoryhub.wsgi import application
from teams.services import Actor
from wiki.services import wiki_page_upsert

DEEPER = os.environ.get("MEMORYHUB_FUZZ_EXAMPLES")
EXAMPLES = int(DEEPER or 30)  # per operation, mode and set of path ids


@pytest.fixture
def wsgi_in_test_transaction():
    """Requests served by the WSGI app directly share the test's connection, as the
    test client's do: it must not be closed at the end of each request."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_request_gets_a_server_error(
    mode, owner, make_token, settings, tmp_path, wsgi_in_test_transaction
):
    # Scans stay inside an empty folder, whatever path is generated.
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    actor = Actor(user=owner)
    (tmp_path / "app.py").write_text("def login():\n    return 1\n")
    known = {
        "fact_id": fact_create(actor=actor, data={"content": "Staging runs PostgreSQL 16"}).fact.pk,
        "slug": wiki_page_upsert(actor=actor, title="Runbook", content="# Steps").page.slug,
        "project_id": code_project_scan_request(actor=actor, name="app", path=str(tmp_path)).pk,
    }
    _, secret = make_token(owner)
    headers = {"Authorization": f"Bearer {secret}"}
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)

    errors: dict[str, list[str]] = defaultdict(list)
    answered: set[str] = set()
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        names = {p.name for p in operation.path_parameters}
        strategies = [operation.as_strategy(mode)]
        if names:
            strategies.append(
                operation.as_strategy(mode, path_parameters={n: known[n] for n in names})
            )
        for strategy in strategies:
            _fuzz(strategy, operation.label, headers, errors, answered)

    assert not errors, "\n".join(f"{label}: {found[0]}" for label, found in errors.items())
    if mode is GenerationMode.POSITIVE:
        # The requests reached the handlers as the agent: reads, writes and known ids.
        reached = {"GET /api/memories", "POST /api/memories", "DELETE /api/memories/{fact_id}"}
        assert reached <= answered, reached - answered


def _fuzz(strategy, label: str, headers: dict, errors: dict, answered: set) -> None:
    """Send EXAMPLES generated requests; note server errors and successful answers."""

    @given(case=strategy)
    @run_with(
        max_examples=EXAMPLES,
        derandomize=not DEEPER,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def call(case):
        response = case.call(headers=headers)
        if response.status_code >= 500:
            errors[label].append(f"{response.status_code} for {case.as_curl_command(headers)}")
        elif response.status_code < 400:
            answered.add(label)

    # Unsatisfiable: nothing to generate, e.g. no input of the operation can break its schema.
    with contextlib.suppress(Unsatisfiable):
        call()
