"""A topic as people say it ("forget everything about my old job at Acme Corp"), read
into what it is about: the names it mentions, matched as whole phrases, and its other
content words, matched by a light stem. Deciding which rows a topic means reads only
the row's own words (and, for the caller, its meaning); see ``TopicMatch``."""

import re
from dataclasses import dataclass

from memoryhub.engine.search.text import STOPWORDS, stem, words

# What wraps a topic rather than names it: the request itself and its hedges.
FRAMING = frozenset(
    """forget forgets forgetting delete deleting remove removing erase erasing wipe purge
    clear drop everything anything something all whatever what know knows known remember
    remembered stored store saved keep kept related regarding concerning relating
    mentions mentioning mention please pls kindly tell told said say says
    stuff things thing info information memory memories fact facts note notes details
    detail data old former previous past earlier used ex like want wanted need""".split()
)
_TOKEN = re.compile(r"\w+", re.UNICODE)


def _is_name_word(token: str) -> bool:
    """A word written as part of a name: capitalised, or with capitals or digits inside
    ("AnyConnect", "S3", "k8s")."""
    if token.lower() in STOPWORDS or token.lower() in FRAMING:
        return False
    if token[0].isupper():
        return True
    return any(c.isupper() for c in token[1:]) or (
        any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
    )


@dataclass(frozen=True)
class Topic:
    text: str
    names: tuple[tuple[str, ...], ...]  # each a phrase of lower-cased words
    words: tuple[str, ...]  # the other content words, lower-cased

    @property
    def search_words(self) -> list[str]:
        """Every word a row about the topic may hold."""
        return list(dict.fromkeys([w for name in self.names for w in name] + list(self.words)))

    @property
    def core(self) -> str:
        """The topic without its framing, for embedding."""
        return " ".join([" ".join(n) for n in self.names] + list(self.words)) or self.text

    @property
    def empty(self) -> bool:
        return not self.names and not self.words


def topic_read(text: str) -> Topic:
    """The names and content words of a topic. A name is a run of capitalised (or
    mixed-case, or lettered-and-numbered) words; a lower-cased topic has words only."""
    names: list[tuple[str, ...]] = []
    rest: list[str] = []
    run: list[str] = []
    for token in _TOKEN.findall(text or ""):
        if _is_name_word(token):
            run.append(token.lower())
            continue
        if run:
            names.append(tuple(run))
            run = []
        low = token.lower()
        if low not in STOPWORDS and low not in FRAMING and len(low) > 1:
            rest.append(low)
    if run:
        names.append(tuple(run))
    return Topic(
        text=text,
        names=tuple(dict.fromkeys(names)),
        words=tuple(dict.fromkeys(w for w in rest if not any(w in n for n in names))),
    )


def _holds_phrase(haystack: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(haystack[i : i + n]) == phrase for i in range(len(haystack) - n + 1))


@dataclass(frozen=True)
class TopicMatch:
    """How a row's own text stands to a topic."""

    names: tuple[str, ...]  # the topic's names the text holds, as phrases
    words: tuple[str, ...]  # the topic's other words it holds (by stem)
    certain: bool  # the row is meant: every name, or (no names) every word
    partial: bool  # it holds some of the topic: a name or a word


def topic_match(topic: Topic, text: str) -> TopicMatch:
    """Which of ``topic``'s names and words ``text`` holds. A row holding every name of
    the topic is about it ("Acme Corp's VPN ..." for "my old job at Acme Corp"); a topic
    without names needs every content word ("paged" in "being paged", not "page" in
    "status page": stems, not the index's stemming)."""
    said = words(text)
    stems = {stem(w) for w in said}
    names = tuple(" ".join(n) for n in topic.names if _holds_phrase(said, n))
    held = tuple(w for w in topic.words if stem(w) in stems)
    if topic.names:
        certain = len(names) == len(topic.names)
    else:
        certain = bool(topic.words) and len(held) == len(topic.words)
    return TopicMatch(names=names, words=held, certain=certain, partial=bool(names or held))
