"""One key per entity name: "The  Billing Services", "billing service" and "Billing
service" name one node, so do "Alice", "alice" and "Alice's", and "the Atlas project",
"Project Atlas" and "Atlas"; and the ref readers know that node by."""

import base64
import hashlib
import hmac
import re
import unicodedata

from memoryhub.engine.unicode import UNSTORABLE

from .models import NAME_LENGTH, REF_LENGTH

# The user who wrote a fact: one node per person, never one "user" for everyone.
USER_NAME = "user"
_WORD = re.compile(r"\w+")
_REF = re.compile(rf"[a-z2-7]{{{REF_LENGTH}}}")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_POSSESSIVE_END = re.compile(r"(?<=\w)(?:['\u2019]s|(?<=s)['\u2019])$", re.IGNORECASE)
_DETERMINER = re.compile(
    r"^(?:the|a|an|our|my|your|their|his|her|its|this|that|these|those)\s+", re.IGNORECASE
)
_EDGE_PUNCTUATION = "\"'`\u201c\u201d\u2018\u2019()[]{}<>.,;:!?*_~"
# "the Atlas project" is Atlas, in any case; a reader asking for "the Ledgerd service"
# finds Ledgerd when no entity has the longer name (``key_without_class_noun``). Only
# "project" joins names in the key: "the Billing service" and "the billing service"
# must stay one entity, and nothing there tells a name from a common word.
PROJECT = "project"
CLASS_NOUNS = frozenset(
    "project service microservice app application library framework platform product "
    "tool company".split()
)


def _singular(word: str, *, head: bool) -> str:
    # The head of a name of several words ("billing services", "Billing Services") in
    # any case; a word alone only where its ending can be nothing but a plural
    # ("libraries", "boxes"), so "Redis", "redis", "Jenkins" and "Atlas" keep their s.
    if len(word) > 4 and word.endswith("ies") and word not in ("series", "species"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if not head:
        return word
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def _is_name_word(word: str) -> bool:
    # Written as a name: capitalised, or an identifier (digits, inner capitals, dashes).
    return (
        word[:1].isupper() or any(c.isdigit() for c in word) or bool(re.search(r"\w[-_.]\w", word))
    )


def _class_noun_dropped(words: list[str]) -> list[str]:
    """ "the Atlas project" and "Project Atlas" as "Atlas": "project" after a name (not
    after a possessive: "Marta's project" is not Marta), or "Project" written before a
    capitalised name."""
    if len(words) < 2:
        return words
    if words[-1].casefold() == PROJECT and not _POSSESSIVE_END.search(words[-2]):
        return words[:-1]
    if words[0] == "Project" and all(_is_name_word(w) for w in words[1:]):
        return words[1:]
    return words


def entity_key(name: str) -> str:
    """The key of ``name``: Unicode-normalised, without a leading determiner, edge
    punctuation or possessive endings, without "project" after a name ("the Atlas
    project" is "atlas"), the last word of a name of several made singular (and a word
    alone whose ending is only ever a plural's), case-folded, single spaces. "" for a
    name with nothing left. The same letters give the same key in any case."""
    text = unicodedata.normalize("NFKC", UNSTORABLE.sub("", name))
    text = " ".join(text.split()).strip(_EDGE_PUNCTUATION + " ")
    text = _DETERMINER.sub("", text)
    words = _class_noun_dropped(text.split())
    words = [_POSSESSIVE_END.sub("", word) or word for word in words]
    words = [
        _singular(word.casefold(), head=len(words) > 1 and at == len(words) - 1)
        for at, word in enumerate(words)
    ]
    return " ".join(words)[:NAME_LENGTH].strip()


def key_without_class_noun(name: str) -> str | None:
    """The key of ``name`` less a class noun before or after it, whatever its case
    ("atlas project" as "atlas"), for finding what a reader names; None when it has
    none."""
    words = " ".join(name.split()).strip(_EDGE_PUNCTUATION + " ")
    words = _DETERMINER.sub("", words).split()
    if len(words) < 2:
        return None
    if words[-1].casefold() in CLASS_NOUNS:
        return entity_key(" ".join(words[:-1])) or None
    if words[0].casefold() == "project":
        return entity_key(" ".join(words[1:])) or None
    return None


def entity_ref(key: str, *, secret: str) -> str:
    """The ref of the entity of ``key``: an HMAC-SHA256 of the key under the install's
    ``secret`` (``EntityRefKey``), 128 bits in lower-case base32. It depends on the name
    alone, never on when or by whom the name was first written, and without the secret
    nobody can tell which name a ref stands for."""
    digest = hmac.new(secret.encode(), key.encode(), hashlib.sha256).digest()
    return base64.b32encode(digest[:16]).decode().rstrip("=").lower()[:REF_LENGTH]


def is_ref(value: str) -> bool:
    """Whether ``value`` has the shape of a ref (anything else names no entity)."""
    return _REF.fullmatch(value) is not None


def user_key(owner_id: int) -> str:
    """The key of the person who wrote the facts of ``owner_id``."""
    return f"@user:{owner_id}"


def _words(text: str) -> list[str]:
    # Case-folded words without a possessive ending, each made singular, split at
    # anything not a letter or digit ("Node.js" is "node" and "js").
    folded = unicodedata.normalize("NFKC", UNSTORABLE.sub("", text)).casefold()
    words = _WORD.findall(_POSSESSIVE.sub("", folded))
    return [_singular(word, head=True) for word in words]


def _unspaced(name: str) -> bool:
    # Written in a script that puts no spaces between words (Chinese, Japanese, Thai...).
    return any(unicodedata.east_asian_width(c) in "WF" or "\u0e00" <= c <= "\u109f" for c in name)


def name_stated_in(name: str, text: str) -> bool:
    """Whether ``text`` names ``name``: its words, in order, ignoring case, a leading
    determiner, plurals and possessives ("the billing services" in "Our billing
    service's queue"). "user" is the writer of the text, named or not."""
    if name.strip().casefold() == USER_NAME:
        return True
    wanted = _words(entity_key(name))
    if not wanted:
        return False
    words = _words(text)
    size = len(wanted)
    if any(words[at : at + size] == wanted for at in range(len(words) - size + 1)):
        return True
    return _unspaced(name) and "".join(wanted) in "".join(words)
