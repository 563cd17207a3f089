from collections.abc import Callable

import pytest

from teams.services import Actor


@pytest.fixture
def remember(django_capture_on_commit_callbacks) -> Callable:
    """Store a fact for ``user`` through the write service, running the on-commit
    embedding inline (tasks are eager in unit tests)."""
    from facts.services import fact_create

    def store(user, content: str, **data: object):
        with django_capture_on_commit_callbacks(execute=True):
            result = fact_create(actor=Actor(user=user), data={"content": content, **data})
        result.fact.refresh_from_db()
        return result.fact

    return store
