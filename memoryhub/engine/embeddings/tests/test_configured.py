"""The configured embedder as searches use it: a search's vector is kept for the next
search with the same words, a failure is not."""

from __future__ import annotations

import numpy as np
import pytest

from memoryhub.engine.embeddings.configured import query_vector
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
