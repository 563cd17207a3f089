"""What the wiki indexes: title, content and tags of each page in FTS5, and a vector
of each passage of its text (see ``PagePassage``) in sqlite-vec."""

import re

from memoryhub.engine.search import FtsIndex, VectorIndex

# A word in the title or the tags says more about a page than one in its body.
PAGE_FTS = FtsIndex(
    table="wiki_page_fts", columns=("title", "content", "tags"), weights=(4.0, 1.0, 2.0)
)
PASSAGE_VECTORS = VectorIndex(table="wiki_passage_vec", dim=384)

# snippet() picks the best-matching column itself when given -1.
SNIPPET_BEST_COLUMN = -1

# A passage is one paragraph (a heading joins the paragraph after it), cut at line
# ends and then anywhere past PASSAGE_CHARS, well within what the embedding model reads
# whole (256 word pieces, about 1,000 characters of English). Paragraphs are not
# pooled: one vector of several blurs their topics (a one-line statement beside 400
# characters of another subject loses a quarter of its similarity to a question about
# it). Past MAX_PASSAGES (a 200 KB page) the rest is found by its words only.
PASSAGE_CHARS = 600
MAX_PASSAGES = 400
_BLOCKS = re.compile(r"\n\s*\n")


def fts_values(title: str, content: str, tags: list[str]) -> tuple[str, str, str]:
    return (title, content, " ".join(tags))


def _pieces(block: str) -> list[str]:
    """``block`` in pieces of at most PASSAGE_CHARS, cut at line ends where it can."""
    if len(block) <= PASSAGE_CHARS:
        return [block]
    pieces: list[str] = []
    current = ""
    for line in block.splitlines():
        while len(line) > PASSAGE_CHARS:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:PASSAGE_CHARS])
            line = line[PASSAGE_CHARS:]
        if current and len(current) + 1 + len(line) > PASSAGE_CHARS:
            pieces.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current:
        pieces.append(current)
    return pieces


def page_passages(title: str, content: str) -> list[str]:
    """The texts a page's vectors are made of: its paragraphs, each led by the page's
    title (a paragraph of a "Billing" page is about billing even when it does not say
    so). A page without content is its title."""
    passages: list[str] = []
    heading = ""
    for block in (b.strip() for b in _BLOCKS.split(content)):
        if not block:
            continue
        if block.startswith("#") and "\n" not in block:
            heading = f"{heading}\n{block}" if heading else block
            continue
        pieces = _pieces(f"{heading}\n{block}" if heading else block)
        heading = ""
        passages.extend(pieces)
    if heading:
        passages.append(heading)
    return [f"{title}\n\n{text}" for text in passages[:MAX_PASSAGES]] or [title]
