"""Vectors embedded lately: a batch embeds only the texts not kept, in one call."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from memoryhub.engine.embeddings import remembered
from memoryhub.engine.embeddings.factory import get_embedder


def test_a_batch_embeds_only_what_was_not_embedded_lately(monkeypatch) -> None:
    monkeypatch.setattr(remembered, "_kept", OrderedDict())
    embedder = get_embedder(provider="local")
    asked: list[list[str]] = []
    embed = embedder.embed

    def recording(texts):
        asked.append(list(texts))
        return embed(texts)

    monkeypatch.setattr(embedder, "embed", recording)
    first = remembered.remembered_vectors(embedder, ["staging runs on k8s"])
    both = remembered.remembered_vectors(embedder, ["billing owns invoices", "staging runs on k8s"])
    assert asked == [["staging runs on k8s"], ["billing owns invoices"]]
    assert both[1] is first[0] and not both[1].flags.writeable
    np.testing.assert_allclose(both[0], embed(["billing owns invoices"])[0], atol=1e-6)

    monkeypatch.setattr(remembered, "KEPT", 1)  # the least recently asked goes first
    remembered.remembered_vectors(embedder, ["a third text"])
    remembered.remembered_vectors(embedder, ["staging runs on k8s"])
    assert asked[-1] == ["staging runs on k8s"]
