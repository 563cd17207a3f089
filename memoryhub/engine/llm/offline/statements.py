"""Facts read as statements: what a fact is about (the user, a named thing, or nothing
that can be told) and what it says of it, in a compact third-person form.

"I prefer minimal UIs" is about the user and says "prefers minimal UIs"; "Ledgerd is
written in Rust" is about Ledgerd and says "written in Rust"; "The API gateway is
Envoy" is about the API gateway and says "Envoy". Summaries name a subject once and
list what its facts say; the profile keeps what facts say about the user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryhub.engine.unicode import UNSTORABLE

from .text import sentences

USER = "user"

# What opens a sentence about the user, and what is left of it: "I", "I'm", "the user",
# "the user's", "my" and "user".
_USER_OPENING = re.compile(
    r"^(?:(?P<i>I)(?P<contraction>['\u2019](?:m|ve|d|ll))?|(?P<user>(?:the\s+)?user)"
    r"(?P<possessive>['\u2019]s)?|(?P<my>my))\b\s*",
    re.IGNORECASE,
)
_CONTRACTED = {"m": "is", "ve": "has", "d": "would", "ll": "will"}
_THIRD_PERSON_SAME = frozenset(
    """can could will would shall should must may might did was had used cannot""".split()
)
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "dont": "doesn't"}
# Words between "I" and its verb that the verb keeps in front of it.
_ADVERBS = frozenset(
    """always usually often never sometimes mostly also really generally typically rarely
    still just only mainly normally frequently occasionally absolutely strongly
    definitely actually currently now regularly""".split()
)
# Verbs that may follow a named subject: "Ledgerd runs on", "Alice works at".
_VERBS = frozenset(
    """is are was were has have had uses use runs run depends depend lives live works
    work owns own belongs belong stores store sends send calls call handles handle
    serves serve contains contain includes include needs need requires require
    supports support replaced replaces reads read writes write builds build deploys
    deploy likes like prefers prefer hates hate loves love wants want knows know leads
    lead manages manage maintains maintain reports report talks talk speaks speak
    became becomes moved moves joined joins left leaves keeps keep takes take gets get
    goes go makes make comes come shows show holds hold lacks lack can could will would
    should must may might does do did isn't aren't wasn't doesn't don't didn't won't
    can't""".split()
)
_DETERMINERS = frozenset("the our a an this that these those".split())
_COPULA = re.compile(r"^(?:is|are)\s+(?!not\b)", re.IGNORECASE)
_SUBJECT_WORD = re.compile(r"^[\w][\w.+#&/'\u2019-]*$")


@dataclass(frozen=True)
class Statement:
    """One fact as a statement: ``key`` names its subject for grouping ("user", a
    lower-cased name, or "" when none is told); ``subject`` is how the subject is
    written; ``said`` is what the fact says of it, in the third person, with "is"
    dropped before what it is ("written in Rust", "a backend engineer"); ``whole`` is
    the fact as one sentence in the third person."""

    key: str
    subject: str
    said: str
    whole: str


def statement(text: str) -> Statement:
    """``text`` read as a statement (its first sentence names the subject; the others
    are what more it says of it)."""
    text = UNSTORABLE.sub("\ufffd", text)
    parts = sentences(text) or [" ".join(text.split())]
    first, rest = parts[0].rstrip(" .;"), [p.rstrip(" .;") for p in parts[1:]]
    framed = [_user_framed(p) or (p, p) for p in rest if p]
    more = [_mine(whole, "the user's", "the user") for _, whole in framed]
    user = _user_framed(first)
    if user is not None:
        said, whole = user
        said_more = [_mine(_compact(s), "their", "them") for s, _ in framed]
        return Statement(
            USER,
            "User",
            "; ".join([_mine(_compact(said), "their", "them"), *said_more]),
            _joined([_mine(whole, "their", "them"), *more]),
        )
    named = _named_subject(first)
    if named is not None:
        subject, predicate = named
        first, predicate = (
            _mine(first, "the user's", "the user"),
            _mine(predicate, "the user's", "the user"),
        )
        key = " ".join(w for w in subject.lower().split() if w not in _DETERMINERS)
        shown = _without_determiner(subject)
        said = "; ".join([_compact(predicate), *more])
        return Statement(key, shown, said, _joined([first, *more]))
    return Statement("", "", _joined([first, *more]).rstrip("."), _joined([first, *more]))


_MY = re.compile(r"\b(?:(?P<my>my)|(?P<me>me|myself))\b", re.IGNORECASE)


def _mine(text: str, mine: str, me: str) -> str:
    """ "my" and "me" said of the user: "Alice is my manager" -> "Alice is the user's
    manager"."""
    return _MY.sub(lambda m: mine if m.group("my") else me, text)


def _joined(parts: list[str]) -> str:
    return ". ".join(p for p in parts if p) + "."


def _user_framed(sentence: str) -> tuple[str, str] | None:
    """What ``sentence`` says of the user in the third person ("prefers tea"), and the
    sentence with the user named ("The user prefers tea"), when it opens with "I",
    "the user" or "my"; ``None`` otherwise."""
    match = _USER_OPENING.match(sentence)
    if match is None or not match.end() < len(sentence):
        return None
    rest = sentence[match.end() :]
    if match.group("contraction"):
        verb = _CONTRACTED[match.group("contraction")[1:].lower()]
        said = f"{verb} {rest}"
    elif match.group("i"):
        said = _third_person(rest)
    elif match.group("possessive") or match.group("my"):
        return rest, "The user's " + rest  # "my editor is Neovim": "editor is Neovim"
    else:
        said = rest  # "the user prefers tea": already in the third person
    return said, "The user " + said


def _third_person(words_after_i: str) -> str:
    """ "prefer tea" -> "prefers tea", "usually deploy on Fridays" -> "usually deploys
    on Fridays", "am a backend engineer" -> "is a backend engineer"."""
    words = words_after_i.split(" ")
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in _ADVERBS:
            continue
        words[index] = _verb_third_person(word)
        break
    return " ".join(words)


def _verb_third_person(verb: str) -> str:
    lower = verb.lower().replace("\u2019", "'")
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower in _THIRD_PERSON_SAME or lower.endswith(("ed", "n't")) or not lower.isalpha():
        return verb
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lower) > 2 and lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _named_subject(sentence: str) -> tuple[str, str] | None:
    """("Ledgerd", "is written in Rust") for "Ledgerd is written in Rust": a subject of
    at most five words that names something (a capital or an identifier past its first
    word, or a determiner in front), then a verb."""
    words = sentence.split(" ")
    known = [i for i, w in enumerate(words[1:6], 1) if w.replace("\u2019", "'") in _VERBS]
    guessed = [i for i, w in enumerate(words[1:6], 1) if _verb_like(w)]
    for index in known or guessed:
        subject_words = words[:index]
        if not all(_SUBJECT_WORD.match(w) for w in subject_words):
            return None
        if not _names_something(subject_words):
            continue  # "The payments team owns ...": the verb is further on
        predicate = " ".join(words[index:])
        return " ".join(subject_words), predicate
    return None


def _verb_like(word: str) -> bool:
    """A lower-case word that may be a verb in the third person ("terminates")."""
    lower = word.replace("\u2019", "'")
    return (
        lower.isalpha()
        and lower.islower()
        and len(lower) > 3
        and lower.endswith("s")
        and not lower.endswith(("ss", "us", "is", "ics"))
    )


def _names_something(subject_words: list[str]) -> bool:
    first = subject_words[0]
    if first.lower() in _DETERMINERS:
        return len(subject_words) > 1
    if first.lower() in {"it", "they", "he", "she", "we", "you", "there", "this", "that"}:
        return False
    # The first word is capitalised for opening the sentence: a name of one word, or
    # one with a capital or an identifier further on ("Ledgerd", "Acme Cloud").
    return len(subject_words) == 1 or any(
        w[:1].isupper() or any(c.isdigit() for c in w) or "-" in w or "_" in w
        for w in subject_words[1:]
    )


def _without_determiner(subject: str) -> str:
    words = subject.split(" ")
    if len(words) > 1 and words[0].lower() in _DETERMINERS:
        words = words[1:]
    shown = " ".join(words)
    return shown[:1].upper() + shown[1:]


def _compact(predicate: str) -> str:
    """What is said, "is" dropped before what something is: "is written in Rust" ->
    "written in Rust"."""
    return _COPULA.sub("", predicate.strip().rstrip(" ."))
