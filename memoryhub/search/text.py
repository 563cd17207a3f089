"""Turning user text into safe full-text queries."""

import re

WORD = re.compile(r"\w+", re.UNICODE)

# Function words that carry no topic; dropped from recall queries (OR semantics), where
# they would otherwise match nearly every fact.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t don ll re ve d m o y did does doing
    also ever yet still much many lot lots really get got""".split()
)


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, in order."""
    return [w.lower() for w in WORD.findall(text or "")]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_any(text: str, *, drop_stopwords: bool = True) -> str:
    """An FTS5 query matching rows with any of the words of ``text`` (bm25 ranks rows
    with more and rarer words first). Every word is quoted, so operators, quotes,
    ``*``, ``:`` and parentheses in the input are searched as plain words. Returns ""
    when nothing searchable is left."""
    terms = words(text)
    kept = [t for t in terms if t not in STOPWORDS] if drop_stopwords else terms
    kept = kept or terms
    unique = list(dict.fromkeys(kept))
    return " OR ".join(_quote(t) for t in unique)


def match_all(text: str, *, prefix_last: bool = True) -> str:
    """An FTS5 query matching rows with all the words of ``text``; the last word also
    matches as a prefix, for search-as-you-type."""
    terms = list(dict.fromkeys(words(text)))
    if not terms:
        return ""
    quoted = [_quote(t) for t in terms]
    if prefix_last:
        quoted[-1] += "*"
    return " AND ".join(quoted)
