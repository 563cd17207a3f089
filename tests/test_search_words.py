"""Full-text queries built from user words: safe to run whatever the input, and on a
large index limited to rows sharing two of the words when there are enough."""

import pytest

from facts.search import FACT_FTS
from memoryhub.search import fts
from memoryhub.search.text import match_any, match_two


def test_match_two_pairs_every_word_and_quotes_them():
    assert match_two('deploy "prod" AND (db') == (
        '("deploy" AND "prod") OR ("deploy" AND "db") OR ("prod" AND "db")'
    )
    assert match_two("the deploy") == ""  # one word once stopwords are dropped
    assert match_two(" ".join(f"w{i}" for i in range(9))) == ""  # too many pairs
    assert match_any("who runs tests") == '"runs" OR "tests"'


@pytest.fixture
def indexed(db):
    rows = {
        1: "Priya runs load tests on Vortex",
        2: "Vortex stores images in S3",
        3: "Tom runs the weekly tests",
        4: "Lunch is at noon",
    }
    FACT_FTS.upsert([(i, (text, "")) for i, text in rows.items()], new=True)
    yield rows
    FACT_FTS.delete(rows)


@pytest.fixture
def large(monkeypatch):
    monkeypatch.setattr(fts, "TWO_WORDS_ROWS", 1)
    monkeypatch.setattr(fts, "_row_counts", {})


def test_on_a_large_index_rows_sharing_two_words_are_enough(indexed, large):
    hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=2)
    assert [h.id for h in hits] == [1, 3]  # the S3 fact shares one word only


def test_too_few_rows_sharing_two_words_fall_back_to_any_word(indexed, large):
    hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=3)
    assert {h.id for h in hits} == {1, 2, 3}


def test_a_small_index_ranks_every_row_sharing_a_word(indexed):
    hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=2)
    assert hits[0].id == 1 and len(hits) == 2
