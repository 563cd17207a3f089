"""Full-text queries built from user words: safe to run whatever the input, and on a
large index limited to rows sharing two of the words (one of them uncommon, first) when
there are enough."""

import pytest

from facts.search import FACT_FTS
from memoryhub.engine.search import fts
from memoryhub.engine.search.remembered import Remembered
from memoryhub.engine.search.text import match_any, match_pairs, query_terms


def test_match_pairs_pairs_the_words_and_quotes_them():
    terms = query_terms('the deploy "prod" AND (db')
    assert terms == ["deploy", "prod", "db"]  # stopwords and operators are words to drop
    assert match_pairs(terms) == (
        '("deploy" AND "prod") OR ("deploy" AND "db") OR ("prod" AND "db")'
    )
    assert match_pairs(terms, anchors=["db"]) == '("deploy" AND "db") OR ("prod" AND "db")'
    assert match_any("who runs tests") == '"runs" OR "tests"'


@pytest.fixture
def indexed(db):
    rows = {
        1: "Priya runs load tests on Vortex",
        2: "Vortex stores images in S3",
        3: "Tom runs the weekly tests",
        4: "Lunch is at noon",
    }
    FACT_FTS.upsert([(i, (text, "", "", "")) for i, text in rows.items()], new=True)
    yield rows
    FACT_FTS.delete(rows)


@pytest.fixture
def large(monkeypatch):
    monkeypatch.setattr(fts, "TWO_WORDS_ROWS", 1)
    monkeypatch.setattr(fts, "_row_counts", Remembered(fts.ROW_COUNT_TTL))
    monkeypatch.setattr(fts, "_doc_counts", Remembered(fts.DOC_COUNT_TTL))


def test_on_a_large_index_rows_sharing_two_words_are_enough(indexed, large):
    hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=2)
    assert [h.id for h in hits] == [1, 3]  # the S3 fact shares one word only


def test_too_few_rows_sharing_two_words_fall_back_to_any_word(indexed, large):
    hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=3)
    assert {h.id for h in hits} == {1, 2, 3}


def test_a_small_index_ranks_every_row_sharing_a_word(indexed):
    hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=2)
    assert hits[0].id == 1 and len(hits) == 2


def test_rows_sharing_an_uncommon_word_are_ranked_first(indexed, large, monkeypatch):
    """Many rows repeat the common words of the question ("runs", "load", "tests") and
    would outrank a row naming what it asks about; when enough rows pair its uncommon
    word with another, only those are ranked."""
    monkeypatch.setattr(fts, "COMMON_SHARE", 0.1)
    crowd = {100 + i: f"Person{i} runs runs load load tests tests" for i in range(15)}
    crowd |= {200 + i: f"Lunch number {i} is at noon" for i in range(80)}
    crowd[5] = "The Vortex load balancer drops idle sockets"
    FACT_FTS.upsert([(i, (text, "", "", "")) for i, text in crowd.items()], new=True)
    try:
        hits = FACT_FTS.search_words("Who runs load tests on Vortex?", limit=2)
        assert {h.id for h in hits} == {1, 5}
        # Without an uncommon word, every pair is ranked: the crowd comes back.
        hits = FACT_FTS.search_words("Who runs load tests?", limit=2)
        assert {h.id for h in hits} <= {1, 3, *crowd} and 5 not in {h.id for h in hits}
    finally:
        FACT_FTS.delete(crowd)


def test_anchors_are_the_rarest_words_that_fit_the_budget_together():
    """Rows pairing the question's rarest words with the others are ranked first; a
    word is an anchor while the anchors' rows add up to at most the budget, so that on
    a large index a pair of common-ish words does not bring in tens of thousands."""
    holding = {"runs": 95, "kestrel": 10, "analytics": 19, "warehouse": 19}
    assert fts._rarest(list(holding), holding, budget=20) == ["kestrel"]
    assert fts._rarest(list(holding), holding, budget=30) == ["kestrel", "analytics"]
    assert fts._rarest(["runs"], {"runs": 95}, budget=20) == []


def test_a_filter_that_admits_nothing_finds_nothing(indexed):
    from facts.models import Fact

    assert FACT_FTS.search('"tests"', limit=5, within=Fact.objects.none()) == []
    assert FACT_FTS.search_words("who runs tests", limit=5, within=Fact.objects.none()) == []


@pytest.mark.parametrize("snippet_column", [None, 0])
def test_a_filter_finds_its_rows_however_far_below_the_index_s_best(indexed, snippet_column):
    """A filtered search looks at the index's best rows first and filters them: when
    too few of those pass, it still finds the admitted rows further down."""
    crowd = {100 + i: "tests tests tests, nothing but tests" for i in range(150)}
    FACT_FTS.upsert([(i, (text, "", "", "")) for i, text in crowd.items()], new=True)
    try:
        ranked = [h.id for h in FACT_FTS.search('"tests"', limit=200)]
        assert set(ranked[:150]) == set(crowd)  # rows 1 and 3 come last
        admit_two = ("SELECT 3 AS pk UNION ALL SELECT 1", ())
        hits = FACT_FTS.search('"tests"', limit=5, within=admit_two, snippet_column=snippet_column)
        assert [h.id for h in hits] == [i for i in ranked if i in (1, 3)]
        if snippet_column is not None:
            assert all("[[" in h.snippet for h in hits)
        # Admitted rows among the best come in the index's order, with their scores.
        admit_crowd = ("SELECT 105 AS pk UNION ALL SELECT 140 UNION ALL SELECT 1", ())
        hits = FACT_FTS.search('"tests"', limit=2, within=admit_crowd)
        scores = {h.id: h.score for h in FACT_FTS.search('"tests"', limit=200)}
        assert [(h.id, h.score) for h in hits] == sorted(
            [(105, scores[105]), (140, scores[140])], key=lambda p: (p[1], p[0])
        )
    finally:
        FACT_FTS.delete(crowd)


def test_a_new_row_under_the_id_of_an_entry_left_behind_replaces_it(indexed):
    # Row 4's fact went without its index entry (a cascade); its id is given out again.
    FACT_FTS.upsert([(4, ("Dinner is at eight", "", "", ""))], new=True)
    assert FACT_FTS.content_of(4) == ("Dinner is at eight", "", "", "")
    assert FACT_FTS.search('"lunch"', limit=5) == []
    assert [h.id for h in FACT_FTS.search('"dinner"', limit=5)] == [4]


@pytest.mark.postgresql_only("the planner's statistics and the GIN index are PostgreSQL's")
def test_a_pairs_query_finds_every_row_the_pairs_match(indexed, monkeypatch):
    """PostgreSQL's GIN index answers pairs of words (and a pair beside a word): the
    rows found are those the whole query matches."""
    from django.db import connection

    from memoryhub.engine.search import postgres as pg

    monkeypatch.setattr(pg, "_common_shares", Remembered(pg.STATISTICS_TTL))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {FACT_FTS.table}")
    cases = {
        match_pairs(["runs", "tests", "vortex"]): {1, 3},
        match_pairs(["runs", "tests", "vortex"], anchors=["vortex"]): {1},
        match_pairs(["nowhere", "images", "s3"]): {2},  # "nowhere": rarest, in no row
        match_pairs(["runs", "priya", "tom"]): {1, 3},
        '("s3" AND "images") OR "lunch"': {2, 4},
    }
    for match, expected in cases.items():
        assert {h.id for h in FACT_FTS.search(match, limit=10)} == expected, match


@pytest.mark.postgresql_only("the planner's statistics are PostgreSQL's")
def test_a_common_word_is_counted_from_the_statistics_and_a_rare_one_exactly(db, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memoryhub.engine.search import postgres as pg

    monkeypatch.setattr(pg, "_common_shares", Remembered(pg.STATISTICS_TTL))
    monkeypatch.setattr(fts, "_row_counts", Remembered(fts.ROW_COUNT_TTL))
    monkeypatch.setattr(fts, "_doc_counts", Remembered(fts.DOC_COUNT_TTL))
    rows = {i: (f"deploy number {i}", "", "", "") for i in range(1, 401)}
    rows |= {500 + i: (f"zephyr rollout {i}", "", "", "") for i in range(3)}
    FACT_FTS.upsert(list(rows.items()), new=True)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {FACT_FTS.table}")
    with CaptureQueriesContext(connection) as queries:
        counts = FACT_FTS.doc_counts(["deploy", "zephyr", "the"])
    assert counts["zephyr"] == 3 and counts["the"] == 0
    assert abs(counts["deploy"] - 400) <= 40
    counted = [q["sql"] for q in queries if "count(*)" in q["sql"] and "@@" in q["sql"]]
    assert len(counted) == 1  # the rare word's, not the common one's
