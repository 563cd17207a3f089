"""Every operation of the JSON API, fed generated requests, answers below 500.

Requests come from the API's own OpenAPI schema (Schemathesis): ones the schema allows
and ones it does not (wrong types, missing or extra fields, values out of range), with
random path ids and the ids of rows that exist, as an agent with a read-write token.

The cases are derandomized, so every run sends the same ones and the suite stays
deterministic. ``MEMORYHUB_FUZZ_EXAMPLES=500 make test PYTEST_ARGS=tests/test_api_fuzz.py``
searches deeper, with fresh random cases each run."""

import contextlib
import json
import os
from collections import defaultdict
from urllib.parse import urlencode

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as run_with
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from codegraph.services import code_project_scan_request
from concepts.models import Entity
from concepts.services import concept_alias_create, concept_graph_sync
from facts.models import MemoryReview
from facts.services.create import fact_create
from memoryhub.engine.jobs import job_create
from memoryhub.wsgi import application
from teams.services import Actor
from wiki.services import wiki_page_upsert

DEEPER = os.environ.get("MEMORYHUB_FUZZ_EXAMPLES")
EXAMPLES = int(DEEPER or 20)  # per operation, mode and set of path ids


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
    mode, owner, team, make_token, settings, tmp_path, wsgi_in_test_transaction
):
    # Scans stay inside an empty folder, whatever path is generated.
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    actor = Actor(user=owner)
    (tmp_path / "app.py").write_text("def login():\n    return 1\n")
    known = {
        "fact_id": fact_create(actor=actor, data={"content": "Staging runs PostgreSQL 16"}).fact.pk,
        "slug": wiki_page_upsert(actor=actor, title="Runbook", content="# Steps").page.slug,
        "project_id": code_project_scan_request(actor=actor, name="app", path=str(tmp_path)).pk,
        "job_id": job_create(owner=owner, kind="import").pk,
        "name": "recall",  # a tool
        "cluster": "rollout-stall",  # a fingerprint cluster of learnings
        "review_id": MemoryReview.objects.create(
            owner=owner, visibility="private", content="The user likes tea"
        ).pk,
        **_concept_ids(actor),
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


def _concept_ids(actor: Actor) -> dict[str, int]:
    """An entity of the concept graph and an alias, for the graph's path ids."""
    fact_create(actor=actor, data={"content": "Alice works at Acme Corp."})
    concept_graph_sync()
    alias = concept_alias_create(actor=actor, alias="Acme", target="Acme Corp")
    return {"entity_ref": Entity.objects.get(key="acme corp").ref, "alias_id": alias.pk}


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


# Strings that broke handlers before: lone surrogates (valid JSON escapes, not valid
# Unicode text), a text past SQLite's LIKE pattern limit, full-text query syntax, NUL.
ODD_STRINGS = ["\ud800", "a\udfffb", "t" * 50_001, 'NEAR("x" "y") OR ^* -', "\x00"]
ODD_EXAMPLES = int(DEEPER or 4)  # valid requests per operation, each bent every way


def _string_leaves(value, path=()):
    """The paths of every string inside a JSON value."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_leaves(item, (*path, index))


def _replaced(value, path, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    if len(path) == 1:
        copy[path[0]] = new  # also a field the request did not have
    else:
        copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@pytest.mark.django_db
def test_odd_strings_in_any_field_never_get_a_server_error(
    owner, team, make_token, settings, tmp_path, wsgi_in_test_transaction
):
    """Valid requests with one string at a time (body field, list item, query or path
    parameter) replaced by each odd string: a 4xx with a message, never a 500."""
    settings.CODEGRAPH_ALLOWED_ROOTS = [str(tmp_path)]
    actor = Actor(user=owner)
    known = {
        "fact_id": fact_create(actor=actor, data={"content": "Staging runs PostgreSQL 16"}).fact.pk,
        "slug": wiki_page_upsert(actor=actor, title="Runbook", content="# Steps").page.slug,
        "project_id": code_project_scan_request(actor=actor, name="app", path=str(tmp_path)).pk,
        "job_id": job_create(owner=owner, kind="import").pk,
        "name": "recall",  # a tool
        "cluster": "rollout-stall",  # a fingerprint cluster of learnings
        "review_id": MemoryReview.objects.create(
            owner=owner, visibility="private", content="The user likes tea"
        ).pk,
        **_concept_ids(actor),
    }
    _, secret = make_token(owner)
    client = Client(headers={"Authorization": f"Bearer {secret}"}, raise_request_exception=False)
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)
    errors: dict[str, list[str]] = defaultdict(list)
    for operation in (result.ok() for result in schema.get_all_operations()):
        names = {p.name for p in operation.path_parameters}
        strategy = operation.as_strategy(
            GenerationMode.POSITIVE, path_parameters={n: known[n] for n in names}
        )

        @given(case=strategy)
        @run_with(
            max_examples=ODD_EXAMPLES,
            derandomize=not DEEPER,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def call(case):
            parts = {"body": case.body, "query": case.query, "path": case.path_parameters}
            # Fields the generated request left out are sent too, one at a time.
            extra = {
                "body": _body_fields(case.operation) if isinstance(case.body, dict) else [],
                "query": [p.name for p in case.operation.query],
                "path": [],
            }
            for part, original in parts.items():
                if not isinstance(original, dict | list):
                    if not extra[part]:
                        continue
                    original = {}

                # A URL carries bytes: a lone surrogate cannot be written in one (and
                # invalid UTF-8 there is decoded with replacement characters).
                odds = ODD_STRINGS if part == "body" else [o for o in ODD_STRINGS if o.isascii()]
                absent = [(name,) for name in extra[part] if name not in original]
                for path in [*_string_leaves(original), *absent]:
                    for odd in odds:
                        bent = _replaced(original, path, odd)
                        status = _send(client, case, **{part: bent})
                        if status >= 500:
                            where = ".".join(map(str, (part, *path)))
                            errors[case.operation.label].append(
                                f"{status} for {where}={odd[:8]!r} in {str(bent)[:300]}"
                            )

        with contextlib.suppress(Unsatisfiable):
            call()

    assert not errors, "\n".join(f"{label}: {found[:3]}" for label, found in errors.items())


def _body_fields(operation) -> list[str]:
    """The top-level fields the operation's JSON body schema declares."""
    for body in operation.body:
        return list(body.validation_schema.get("properties", {}))
    return []


def _send(client: Client, case, *, body=None, query=None, path=None) -> int:
    """Send ``case`` with one part replaced, through the test client: Schemathesis's own
    transport checks bodies against the schema, which cannot hold a lone surrogate."""
    url = case.operation.path.format(**(path if path is not None else case.path_parameters or {}))
    query = query if query is not None else case.query
    body = body if body is not None else case.body
    if query:
        url += "?" + urlencode(query, doseq=True)
    kwargs = {}
    if isinstance(body, dict | list):
        kwargs = {"data": json.dumps(body), "content_type": "application/json"}
    return client.generic(case.method, url, **kwargs).status_code
