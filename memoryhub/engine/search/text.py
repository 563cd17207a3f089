"""Turning user text into safe full-text queries."""

import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence

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


def query_terms(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """The distinct words of ``text`` a query searches for (stopwords dropped, unless
    nothing else is left)."""
    terms = words(text)
    kept = [t for t in terms if t not in STOPWORDS] if drop_stopwords else terms
    return list(dict.fromkeys(kept or terms))


def _plain(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def holds_words(text: str, query: str) -> bool:
    """Whether ``text`` holds every word of ``query`` as written (accents aside), the
    last as a prefix: what exact search promises, where the index also matches a word's
    other forms ("paged" for "page")."""
    wanted = [_plain(w) for w in words(query)]
    said = {_plain(w) for w in words(text)}
    if not wanted:
        return False
    *whole, last = wanted
    return all(w in said for w in whole) and any(w.startswith(last) for w in said)


def match_any(text: str, *, drop_stopwords: bool = True) -> str:
    """An FTS5 query matching rows with any of the words of ``text`` (bm25 ranks rows
    with more and rarer words first). Every word is quoted, so operators, quotes,
    ``*``, ``:`` and parentheses in the input are searched as plain words. Returns ""
    when nothing searchable is left."""
    return " OR ".join(_quote(t) for t in query_terms(text, drop_stopwords=drop_stopwords))


def match_pairs(terms: list[str], *, anchors: list[str] | None = None) -> str:
    """An FTS5 query matching rows with two of ``terms``, one of them among ``anchors``
    when given (every pair otherwise)."""
    anchored = set(terms if anchors is None else anchors)
    return " OR ".join(
        f"({_quote(a)} AND {_quote(b)})"
        for a, b in itertools.combinations(terms, 2)
        if a in anchored or b in anchored
    )


def in_columns(match: str, columns: Sequence[str] | None) -> str:
    """``match`` restricted to ``columns`` of the index (all of them when None)."""
    if not match or not columns:
        return match
    return "{" + " ".join(columns) + "} : (" + match + ")"


def match_all(text: str, *, prefix_last: bool = True, drop_stopwords: bool = False) -> str:
    """An FTS5 query matching rows with all the words of ``text`` (but stopwords, with
    ``drop_stopwords``); the last word also matches as a prefix, for search-as-you-type."""
    terms = query_terms(text, drop_stopwords=drop_stopwords)
    if not terms:
        return ""
    quoted = [_quote(t) for t in terms]
    if prefix_last:
        quoted[-1] += "*"
    return " AND ".join(quoted)


_SUFFIXES = ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "ly", "s")


# Words recur across the candidates of every recall: a stem is worked out once.
@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix-stripping stem, enough to tell that "painted", "paints" and
    "painting" share a word (the full-text index stems with Porter's rules; this only
    needs to agree with itself)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ied", "ies"):
                return base + "y"
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]  # "running" -> "run"
            return base
    return word


def content_stems(text: str) -> set[str]:
    """The stems of the words of ``text`` that carry a topic (stopwords left out)."""
    return {stem(w) for w in words(text) if w not in STOPWORDS}
