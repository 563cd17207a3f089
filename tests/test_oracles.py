"""No figure a reader sees depends on rows they cannot read: a recall's keyword score is
relative to the reader's own candidates, not to how often others' private rows hold the
word."""

import json

import pytest

pytestmark = pytest.mark.django_db


def recall_bm25(client, query: str) -> dict[int, float]:
    answer = client.post(
        "/api/recall", json.dumps({"query": query, "max_items": 10}), "application/json"
    )
    assert answer.status_code == 200, answer.content
    return {item["id"]: item["bm25"] for item in answer.json()["items"]}


def test_a_keyword_score_does_not_count_others_private_rows(
    owner, outsider, outsider_client, remember
):
    remember(outsider, "Kestrelvault backs up the lab every night")
    remember(outsider, "The Kestrelvault key lives with the lab manager and the dean")
    before = recall_bm25(outsider_client, "kestrelvault")
    assert sorted(before.values()) == [0.5, 1.0]
    for n in range(30):
        remember(owner, f"Kestrelvault private note number {n}", visibility="private")
    after = recall_bm25(outsider_client, "kestrelvault")
    assert after == pytest.approx(before)
