from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from memoryhub.engine.embeddings import (
    EmbedderConfigError,
    LegacyEmbedder,
    OpenAIEmbedder,
    RemoteEmbeddingError,
    get_embedder,
)

from .conftest import (
    EmbeddingServer,
    Reply,
    Request,
    Responder,
    legacy_reply,
    openai_reply,
    text_vector,
)

Serve = Callable[[Responder], EmbeddingServer]


def unit(vector: list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float64)
    return (array / np.linalg.norm(array)).astype(np.float32)


def test_openai_posts_the_batch_and_orders_by_index(serve: Serve) -> None:
    server = serve(lambda request, count: openai_reply(request))
    embedder = get_embedder(
        provider="openai", url=server.url + "/v1", model="mini", api_key="sk-alice"
    )

    vectors = embedder.embed(["alpha", "beta", "gamma"])

    assert embedder.model_id == "openai:mini"
    assert embedder.dim == 8
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    for vector, text in zip(vectors, ["alpha", "beta", "gamma"], strict=True):
        np.testing.assert_allclose(vector, unit(text_vector(text)), atol=1e-6)
    (request,) = server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "mini", "input": ["alpha", "beta", "gamma"]}
    assert request.headers["Authorization"] == "Bearer sk-alice"


def test_openai_sends_no_authorization_without_a_key(serve: Serve) -> None:
    server = serve(lambda request, count: openai_reply(request))

    OpenAIEmbedder(url=server.url, model="mini").embed(["alpha"])

    assert "Authorization" not in server.requests[0].headers


def test_openai_splits_large_inputs_into_several_requests(serve: Serve) -> None:
    server = serve(lambda request, count: openai_reply(request))
    texts = [f"note {i}" for i in range(150)]

    vectors = OpenAIEmbedder(url=server.url, model="mini").embed(texts)

    assert len(server.requests) == 3
    np.testing.assert_allclose(vectors[149], unit(text_vector("note 149")), atol=1e-6)


def test_legacy_posts_one_prompt_per_text(serve: Serve) -> None:
    server = serve(lambda request, count: legacy_reply(request))
    embedder = get_embedder(provider="legacy", url=server.url + "/api/embeddings", model="nomic")

    vectors = embedder.embed(["alpha", "beta"])

    assert embedder.model_id == "legacy:nomic"
    assert vectors.shape == (2, 8)
    np.testing.assert_allclose(vectors[1], unit(text_vector("beta")), atol=1e-6)
    assert [r.body for r in server.requests] == [
        {"model": "nomic", "prompt": "alpha"},
        {"model": "nomic", "prompt": "beta"},
    ]
    assert all(r.path == "/api/embeddings" for r in server.requests)


def test_a_500_is_retried_until_success(serve: Serve) -> None:
    def flaky(request: Request, count: int) -> Reply:
        return Reply(status=500, body=b"overloaded") if count == 1 else openai_reply(request)

    server = serve(flaky)

    vectors = OpenAIEmbedder(url=server.url, model="mini", backoff=0.01).embed(["alpha"])

    assert len(server.requests) == 2
    np.testing.assert_allclose(vectors[0], unit(text_vector("alpha")), atol=1e-6)


def test_retries_are_bounded(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(status=503, body=b"down for maintenance"))

    with pytest.raises(RemoteEmbeddingError, match="HTTP 503 after 3 attempts"):
        LegacyEmbedder(url=server.url, model="nomic", retries=2, backoff=0.01).embed(["alpha"])

    assert len(server.requests) == 3


def test_a_client_error_is_not_retried(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(status=401, body={"error": "bad key"}))

    with pytest.raises(RemoteEmbeddingError, match="API key"):
        OpenAIEmbedder(url=server.url, model="mini", api_key="wrong").embed(["alpha"])

    assert len(server.requests) == 1


def test_garbage_is_refused(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(body=b"<html>Welcome to nginx</html>"))

    with pytest.raises(RemoteEmbeddingError, match="not JSON"):
        OpenAIEmbedder(url=server.url, model="mini").embed(["alpha"])


@pytest.mark.parametrize(
    "body, message",
    [
        ({"data": "nope"}, '"data"'),
        ({"data": [{"index": 0}]}, '"embedding"'),
        ({"data": [{"index": 0, "embedding": [1.0, "x"]}]}, "numbers"),
        ({"data": [{"index": 0, "embedding": [0.0, 0.0]}]}, "all zeros"),
        ({"data": []}, "0 embeddings for 1 texts"),
    ],
)
def test_malformed_openai_answers_are_refused(
    serve: Serve, body: dict[str, Any], message: str
) -> None:
    server = serve(lambda request, count: Reply(body=body))

    with pytest.raises(RemoteEmbeddingError, match=message):
        OpenAIEmbedder(url=server.url, model="mini").embed(["alpha"])


def test_mixed_dimensions_in_one_answer_are_refused(serve: Serve) -> None:
    def ragged(request: Request, count: int) -> Reply:
        return Reply(
            body={"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}
        )

    server = serve(ragged)

    with pytest.raises(RemoteEmbeddingError, match="different dimensions"):
        OpenAIEmbedder(url=server.url, model="mini").embed(["alpha", "beta"])


def test_a_dimension_change_between_answers_is_refused(serve: Serve) -> None:
    def shrinking(request: Request, count: int) -> Reply:
        return legacy_reply(request, dim=8 if count == 1 else 4)

    server = serve(shrinking)
    embedder = LegacyEmbedder(url=server.url, model="nomic")
    embedder.embed(["alpha"])

    with pytest.raises(RemoteEmbeddingError, match=r"4-dimensional vectors .* uses 8 dimensions"):
        embedder.embed(["beta"])


def test_a_configured_dimension_is_enforced(serve: Serve) -> None:
    server = serve(lambda request, count: legacy_reply(request))
    embedder = LegacyEmbedder(url=server.url, model="nomic", dim=768)

    assert embedder.dim == 768
    with pytest.raises(RemoteEmbeddingError, match="8-dimensional"):
        embedder.embed(["alpha"])


def test_the_dimension_is_probed_when_asked_before_any_embedding(serve: Serve) -> None:
    server = serve(lambda request, count: openai_reply(request, dim=5))
    embedder = OpenAIEmbedder(url=server.url, model="mini")

    assert embedder.embed([]).shape == (0, 5)
    assert embedder.dim == 5
    assert len(server.requests) == 1


def test_a_slow_server_times_out(serve: Serve) -> None:
    server = serve(lambda request, count: Reply(delay=2.0, body={"embedding": [1.0]}))
    embedder = LegacyEmbedder(url=server.url, model="nomic", timeout=0.2)

    started = time.monotonic()
    with pytest.raises(RemoteEmbeddingError, match=r"did not answer within 0\.2 s"):
        embedder.embed(["alpha"])

    assert time.monotonic() - started < 1.5
    assert len(server.requests) == 1


def test_an_unreachable_server_is_reported_after_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = LegacyEmbedder(url=f"http://127.0.0.1:{port}", model="nomic", backoff=0.01)

    with pytest.raises(RemoteEmbeddingError, match=r"Could not reach .* after 3 attempts"):
        embedder.embed(["alpha"])


def test_the_factory_caches_per_configuration(serve: Serve) -> None:
    server = serve(lambda request, count: openai_reply(request))

    first = get_embedder(provider="openai", url=server.url, model="mini")
    again = get_embedder(provider="openai", url=server.url, model="mini")
    other = get_embedder(provider="openai", url=server.url, model="large")

    assert first is again
    assert first is not other


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"provider": "word2vec"}, "Unknown embeddings provider"),
        ({"provider": "openai", "url": "http://127.0.0.1:9"}, "needs a model name"),
        ({"provider": "legacy", "model": "nomic"}, "needs the URL"),
        ({"provider": "openai", "url": "127.0.0.1:9", "model": "x"}, "http://"),
        ({"provider": "local", "model": "bge-large"}, "only runs all-MiniLM-L6-v2"),
    ],
)
def test_bad_configurations_say_what_to_fix(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(EmbedderConfigError, match=message):
        get_embedder(**kwargs)
