"""Sentences, words and named things: the text handling the offline rules share."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryhub.engine.search.text import STOPWORDS, words
from memoryhub.engine.unicode import UNSTORABLE

from ..schemas import EXCERPT_LENGTH

# Words that open sentences without naming anything, beyond the stopwords.
_OPENERS = frozenset(
    """please remember note yesterday today tomorrow tonight also however maybe perhaps
    thanks thank hi hello hey yes no ok okay sure well so let lets actually basically
    currently recently usually always never sometimes often now then anyway btw fyi
    honestly unfortunately luckily sadly hopefully i""".split()
)
_ABBREVIATIONS = frozenset("e.g i.e mr mrs ms dr vs etc st no fig approx".split())
# A sentence ends at . ! ? (or a line break) followed by space and what can open one.
_BOUNDARY = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))[ \t]+(?=[\"'(\[]?[A-Z0-9`])|[ \t]*\n[\s]*"
)
_TOKEN = re.compile(r"`[^`\n]{1,80}`|\w(?:[\w.+#&'/-]*[\w+#])?|[^\w\s]")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$")
_ORG_SUFFIXES = frozenset(
    "inc ltd llc gmbh corp corporation co company labs university bank group foundation".split()
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order (line breaks end sentences too).
    A lone surrogate, which no result could hold, becomes U+FFFD."""
    text = UNSTORABLE.sub("\ufffd", text)
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if "\n" not in match.group():
            before = text[start : match.start()].split()
            if before and before[-1].rstrip(".").lower() in _ABBREVIATIONS:
                continue  # "e.g. Postgres" goes on
        pieces.append(text[start : match.start()])
        start = match.end()
    pieces.append(text[start:])
    return [" ".join(p.split()) for p in pieces if p.strip()]


def stem(word: str) -> str:
    """A crude singular: enough for "services" and "service" to count as one word."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The topical words of ``text``: lower-cased, stemmed, stopwords dropped."""
    return [stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1]


def best_excerpt(said: str, excerpt: str, content: str) -> str:
    """Words of ``said`` that a fact comes from, at most ``EXCERPT_LENGTH`` characters:
    ``excerpt`` when it is really in ``said``, else the sentence of ``said`` sharing the
    most words with ``content`` and ``excerpt``."""
    excerpt = " ".join(excerpt.split())
    if excerpt and excerpt.casefold() in " ".join(said.split()).casefold():
        return clip(excerpt)
    wanted = set(content_words(content + " " + excerpt))
    best, best_score = "", 0
    for sentence in sentences(said):
        score = len(wanted & set(content_words(sentence)))
        if score > best_score:
            best, best_score = sentence, score
    return clip(best)


def clip(text: str, limit: int = EXCERPT_LENGTH) -> str:
    """``text`` cut to ``limit`` characters at a word boundary where one is near."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


@dataclass(frozen=True)
class Span:
    """A named thing in a sentence: its text and where it is."""

    text: str
    start: int
    end: int
    # Kind of evidence: "name" (capitalised words), "code" (an identifier such as
    # dbstage01, billing-service or `make test`).
    kind: str
    # A name whose first word opens the sentence, a line or what follows a colon, where
    # any word is capitalised: that capital says nothing ("Deploys are slow").
    opens: bool = False

    @property
    def looks_like_organisation(self) -> bool:
        last = self.text.rsplit(None, 1)[-1].rstrip(".").lower()
        return self.kind == "name" and " " in self.text and last in _ORG_SUFFIXES


def _is_code(token: str) -> bool:
    if token.startswith("`"):
        return True
    has_alpha = any(c.isalpha() for c in token)
    has_digit = any(c.isdigit() for c in token)
    if has_alpha and has_digit:
        return True
    if re.search(r"[a-z][A-Z]", token):  # camelCase, PostgreSQL
        return True
    return has_alpha and bool(re.search(r"\w[_./-]\w", token))


def _is_pronoun(token: str) -> bool:
    return token == "I" or token.startswith(("I'", "I\u2019"))


def _is_capitalised(token: str) -> bool:
    return token[:1].isupper() and any(c.isalpha() for c in token)


def _openings(tokens: list[re.Match[str]]) -> set[int]:
    # The tokens capitalised by their place: a sentence's (or a line's, or a list
    # item's) first word, and the first after a colon ("Note: Deploys go through ...").
    found: set[int] = set()
    expecting = True
    for index, token in enumerate(tokens):
        text = token.group()
        following = tokens[index + 1].group() if index + 1 < len(tokens) else ""
        if expecting and text.isdigit() and following in (".", ")"):
            continue  # a list item's number: "1) Deploys go through Argo CD"
        if text[0].isalnum() or text.startswith("`"):
            if expecting:
                found.add(index)
            expecting = False
        elif text == ":":
            expecting = True
    return found


def entities(sentence: str) -> list[Span]:
    """Named things in ``sentence``: runs of capitalised words (a sentence's first word
    only when it is not a common opener), and identifiers. ``I`` is never one. A run
    that starts where any word is capitalised is marked ``opens``."""
    tokens = list(_TOKEN.finditer(sentence))
    found: list[Span] = []
    index = 0
    first_word = next((i for i, t in enumerate(tokens) if t.group()[0].isalnum()), -1)
    openings = _openings(tokens)
    while index < len(tokens):
        token = tokens[index].group()
        if _is_pronoun(token) or not (token[0].isalnum() or token.startswith("`")):
            index += 1
            continue
        if _is_code(token):
            end = index
            # A name written in inner capitals goes on over capitalised words after
            # it: "GitHub Actions", "PostgreSQL Server".
            if re.fullmatch(r"[A-Za-z]+", token):
                while (
                    end + 1 < len(tokens)
                    and re.fullmatch(r"[A-Z][a-z]+", tokens[end + 1].group())
                    and sentence[tokens[end].end() : tokens[end + 1].start()] == " "
                ):
                    end += 1
            if end > index:
                start_at, end_at = tokens[index].start(), tokens[end].end()
                found.append(Span(sentence[start_at:end_at], start_at, end_at, "name"))
            else:
                text = token.strip("`")
                found.append(Span(text, tokens[index].start(), tokens[index].end(), "code"))
            index = end + 1
            continue
        opener = index == first_word and token.lower() in (STOPWORDS | _OPENERS)
        if _is_capitalised(token) and not opener:
            end = index
            # Extend over further capitalised words, and "of" / "&" between two of them.
            while end + 1 < len(tokens):
                following = tokens[end + 1].group()
                if (_is_capitalised(following) and not _is_pronoun(following)) or _VERSION.match(
                    following
                ):
                    end += 1
                elif (
                    following in ("of", "&", "de", "van", "von")
                    and end + 2 < len(tokens)
                    and _is_capitalised(tokens[end + 2].group())
                ):
                    end += 2
                else:
                    break
            start_at, end_at = tokens[index].start(), tokens[end].end()
            found.append(
                Span(sentence[start_at:end_at], start_at, end_at, "name", index in openings)
            )
            index = end + 1
            continue
        index += 1
    return found


def tags_of(sentence: str, limit: int = 5) -> list[str]:
    """Lower-case tags naming the things ``sentence`` mentions."""
    seen: dict[str, None] = {}
    for span in entities(sentence):
        seen[span.text.lower()] = None
    return list(seen)[:limit]
