"""What the fact store indexes: content and tags in FTS5, content vectors in sqlite-vec."""

from memoryhub.search import FtsIndex, VectorIndex

# Content weighs more than tags in bm25.
FACT_FTS = FtsIndex(table="facts_fact_fts", columns=("content", "tags"), weights=(1.0, 0.5))
FACT_VECTORS = VectorIndex(table="facts_fact_vec", dim=384)


def fts_values(content: str, tags: list[str]) -> tuple[str, str]:
    return (content, " ".join(tags))
