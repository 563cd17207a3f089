"""One key per entity name: "The  Billing Services", "billing service" and "Billing
service" name one node; and the ref readers know that node by."""

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
_DETERMINER = re.compile(r"^(?:the|a|an|our|my|their|his|her|its)\s+", re.IGNORECASE)
_EDGE_PUNCTUATION = "\"'`\u201c\u201d\u2018\u2019()[]{}<>.,;:!?*_~"


def _singular(word: str, *, last_of_several: bool) -> str:
    # Common nouns, and the head of a longer name ("Billing Services"); a one-word name
    # written capitalised ("Jenkins", "Redis") keeps its s.
    if not (word.islower() or last_of_several):
        return word
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def entity_key(name: str) -> str:
    """The key of ``name``: Unicode-normalised, without a leading determiner or edge
    punctuation, simple plurals made singular (lower-case words, and the last word of a
    name of several), case-folded, single
    spaces. "" for a name with nothing left."""
    text = unicodedata.normalize("NFKC", UNSTORABLE.sub("", name))
    text = " ".join(text.split()).strip(_EDGE_PUNCTUATION + " ")
    text = _DETERMINER.sub("", text)
    words = text.split()
    words = [
        _singular(word, last_of_several=len(words) > 1 and at == len(words) - 1)
        for at, word in enumerate(words)
    ]
    return " ".join(words).casefold()[:NAME_LENGTH].strip()


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
    return [_singular(word, last_of_several=True) for word in words]


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
