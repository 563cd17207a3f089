"""What the wiki indexes: title, content and tags of each page in FTS5."""

from memoryhub.search import FtsIndex

# A word in the title or the tags says more about a page than one in its body.
PAGE_FTS = FtsIndex(
    table="wiki_page_fts", columns=("title", "content", "tags"), weights=(4.0, 1.0, 2.0)
)

# snippet() picks the best-matching column itself when given -1.
SNIPPET_BEST_COLUMN = -1


def fts_values(title: str, content: str, tags: list[str]) -> tuple[str, str, str]:
    return (title, content, " ".join(tags))
