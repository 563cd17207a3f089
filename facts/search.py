"""What the fact store indexes: content, tags and the words of the fact's session
neighbours (see ``facts.sessions``) in FTS5, content vectors in sqlite-vec."""

from memoryhub.search import FtsIndex, VectorIndex

# Content weighs more than tags, tags more than the neighbours' words, in bm25.
FACT_FTS = FtsIndex(
    table="facts_fact_fts", columns=("content", "tags", "context"), weights=(1.0, 0.5, 0.3)
)
FACT_VECTORS = VectorIndex(table="facts_fact_vec", dim=384)


def fts_values(content: str, tags: list[str], context: str = "") -> tuple[str, str, str]:
    return (content, " ".join(tags), context)
