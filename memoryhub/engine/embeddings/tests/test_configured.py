"""The configured embedder as searches use it: a search's vector is kept for the next
search with the same words, a failure is not; a remote embedder that hangs holds a
search for its deadline at most, and one that keeps failing is left alone until a probe
gets an answer."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memoryhub.engine.embeddings.configured import QueryEmbedding, query_vector
from memoryhub.engine.models import MemoryConfig

from .conftest import Reply, openai_reply

pytestmark = pytest.mark.django_db


def test_a_repeated_search_is_embedded_once_and_a_failed_one_is_asked_again(serve) -> None:
    failing = {"now": True}

    def answer(request, count):
        if "down" in request.body["input"][0] and failing["now"]:
            return Reply(status=503, body={"error": "overloaded"})
        return openai_reply(request)

    server = serve(answer)
    MemoryConfig.objects.update_or_create(
        pk=1,
        defaults={
            "embeddings_provider": "openai",
            "embeddings_url": server.url,
            "embeddings_model": "kept-1",
        },
    )
    first = query_vector("where does staging run")
    again = query_vector("where does staging run")
    other = query_vector("who owns billing")
    assert [r.body["input"] for r in server.requests] == [
        ["where does staging run"],
        ["who owns billing"],
    ]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    with pytest.raises(ValueError):
        again *= 2  # one vector serves every caller: nobody may change it

    # A very long text is not kept: it would hold its length in memory per entry.
    long = "staging " * 300
    query_vector(long)
    query_vector(long)
    assert [r.body["input"][0] for r in server.requests].count(long) == 2

    # The endpoint failing is not remembered: the next search asks it again.
    assert query_vector("is it down") is None
    failing["now"] = False
    assert query_vector("is it down") is not None
    assert [r.body["input"][0] for r in server.requests].count("is it down") >= 2


def test_a_sentence_embedded_beside_other_work_is_embedded_once(serve) -> None:
    from memoryhub.engine.embeddings.factory import get_embedder
    from memoryhub.engine.embeddings.pipeline import embed_soon

    server = serve(lambda request, count: openai_reply(request))
    embedder = get_embedder(provider="openai", url=server.url, model="kept-2")
    first = embed_soon(embedder, "what did the team ship in May").result()
    again = embed_soon(embedder, "what did the team ship in May").result()
    assert [r.body["input"] for r in server.requests] == [["what did the team ship in May"]]
    assert again is first and not again.flags.writeable


# --- A remote embedder that hangs or keeps failing ----------------------------------------


@pytest.fixture
def hanging(serve, hang, settings):
    """A remote embedder that takes requests and does not answer; searches wait 0.5 s."""
    settings.EMBEDDINGS_QUERY_DEADLINE_SECONDS = 0.5
    settings.EDGE_CIRCUIT_FAILURES = 2
    settings.EDGE_CIRCUIT_RETRY_SECONDS = 60
    server = serve(lambda request, count: Reply(hold=hang))
    MemoryConfig.objects.update_or_create(
        pk=1,
        defaults={
            "embeddings_provider": "openai",
            "embeddings_url": server.url,
            "embeddings_model": f"hangs-{server.url[-5:]}",
        },
    )
    return server


def timed(call):
    started = time.monotonic()
    return call(), time.monotonic() - started


def test_a_hanging_embedder_holds_a_search_no_longer_than_its_deadline(hanging) -> None:
    embedding, took = timed(lambda: QueryEmbedding("where does staging run"))
    vector, waited = timed(embedding.vector)

    assert took < 0.1  # started, not waited for
    assert vector is None
    assert 0.4 < waited < 1.0  # the deadline, not the workers' 10 s and retries
    assert embedding.failure == "the embedder did not answer within 0.5 s"


def test_an_embedder_failing_again_and_again_is_not_asked_until_a_probe_answers(
    serve, settings
) -> None:
    settings.EMBEDDINGS_QUERY_DEADLINE_SECONDS = 2
    settings.EDGE_CIRCUIT_FAILURES = 2
    settings.EDGE_CIRCUIT_RETRY_SECONDS = 0.5
    state = {"up": False}

    def answer(request, count):
        return openai_reply(request) if state["up"] else Reply(status=502, body=b"bad gateway")

    server = serve(answer)
    MemoryConfig.objects.update_or_create(
        pk=1,
        defaults={
            "embeddings_provider": "openai",
            "embeddings_url": server.url,
            "embeddings_model": "recovers",
        },
    )
    assert query_vector("first try") is None
    assert query_vector("second try") is None
    asked = len(server.requests)

    embedding, took = timed(lambda: QueryEmbedding("third try"))

    assert embedding.vector() is None and took < 0.1
    assert embedding.failure.startswith("the embedder keeps failing and is not asked again")
    assert len(server.requests) == asked == 2  # not retried in a request, not asked now

    state["up"] = True
    time.sleep(0.6)
    assert query_vector("the probe") is not None
    assert query_vector("and after it") is not None
