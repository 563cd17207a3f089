"""What CodeGraph indexes: symbol names split into words, and qualified names, in FTS5."""

from functools import lru_cache

from codegraph.extractor import split_identifier
from memoryhub.engine.search import FtsIndex

# The name's words weigh more than the words of the enclosing definitions. The simple
# unicode61 tokenizer (no stemming): identifiers are not English prose, and "get" must
# not match "gets" any better than a prefix query already does.
SYMBOL_FTS = FtsIndex(
    table="codegraph_symbol_fts",
    columns=("name_words", "qualified_words"),
    tokenize="unicode61 remove_diacritics 2",
    weights=(1.0, 0.3),
)


def fts_values(name: str, qualified_name: str) -> tuple[str, str]:
    """Column values of one symbol: ``getQueryset`` -> "get queryset"."""
    words = _words(name)
    if qualified_name == name:
        return words, words
    if not qualified_name.isascii():
        return words, split_identifier(qualified_name.replace(".", " "))
    # The same words as splitting the whole dotted name (no ASCII word spans a dot),
    # and the parts (``self``, class names, ``__init__``) repeat all over a project.
    return words, " ".join(filter(None, map(_words, qualified_name.split("."))))


@lru_cache(maxsize=1 << 16)
def _words(part: str) -> str:
    return split_identifier(part)
