"""What the fact store indexes: content, tags, the words of the fact's session
neighbours (see ``facts.sessions``) and who said it in FTS5, vectors of what it says
and who said it in sqlite-vec."""

from memoryhub.engine.search import FtsIndex, KeyIndex, VectorIndex

# Content and the speaker's name weigh more than tags, tags more than the neighbours'
# words, in bm25.
FACT_FTS = FtsIndex(
    table="facts_fact_fts",
    columns=("content", "tags", "context", "speaker"),
    weights=(1.0, 0.5, 0.3, 1.0),
    own=("content", "tags"),
)
FACT_VECTORS = VectorIndex(table="facts_fact_vec", dim=384)
# Near-duplicate keys of active facts (``facts.dedupe``): ``FactKey`` rows on SQLite,
# ``FactKeyList`` arrays on PostgreSQL (see migrations 0020 and 0021).
FACT_KEYS = KeyIndex(
    rows_table="facts_factkey",
    lists_table="facts_factkeylist",
    owner_column="fact_id",
    matching_function="facts_keys_matching",
)


def fts_values(
    content: str, tags: list[str], context: str = "", speaker: str = ""
) -> tuple[str, str, str, str]:
    return (content, " ".join(tags), context, speaker)


def fact_search_warm() -> int:
    """Build this process's in-memory copies of the fact vectors (see
    ``VectorIndex.warm``), on its own database connection, closed after; the facts
    with vectors."""
    from django.db import connection

    try:
        return FACT_VECTORS.warm()
    finally:
        connection.close()
