"""Near-duplicate detection for the write path.

A new fact and an active fact of the same write scope (owner, team, visibility, project,
layer) say
the same thing when their content words are very similar (Jaccard similarity at least
the ``dedupe_similarity`` setting, 0.8 to 1), or are about the same subject: similarity
at least 0.4, the same names mentioned, and more than half of the new fact's tags shared.

Finding candidates must not cost a ranked full-text query per fact, so every active fact
carries a few hashed keys (``FACT_KEYS``) built by prefix filtering. Words are put in one
fixed order (longest first). If two word sets of sizes n and m overlap in at least
a = ceil(t * max(n, m)) words (which a similarity of t implies), their first three shared
words lie within the first n - ceil(t * n) + 3 words of one and m - ceil(t * m) + 3 of
the other; so facts that are similar enough always share a key made of a word triple
from those prefixes. (Triples rather than pairs: two long words often come together, as
in "OpenTelemetry dashboards", three far less.) At t >= 0.8 a set of three words or more
is similar only to sets of three or more; those of two words or one are keyed by the
pair or the word. The same-subject rule uses (tag, word) keys: it needs a shared tag, which
lies among the first half of the new fact's tags, and an overlap of ceil(0.4 * n) words.
The words of the tag itself ("rosa" and "quinn" for "rosa-quinn") are left out: every
fact with the tag is likely to contain them, so they would find nearly all of its facts.
Of the c tag words a fact contains, at most c are shared, so ceil(0.4 * n) - c shared words
lie among the others, and each prefix of n - ceil(0.4 * n) + 1 of them holds one. Where
the tag's words may be all that is shared, a (tag, "tag only") key stands in for a word.
Keys are hashed with the scope, so one indexed lookup finds candidates of that scope
only; the rules are then checked on the candidates' text. A lookup reads at most
``PER_KEY`` holders of a key, the newest, so the rows one write reads are bounded however
large the store grows; candidates sharing the most of the keys read whole (the rarer
ones) are checked first. Stored keys are built for the lowest similarity the setting allows,
so changing the setting needs no re-indexing.

Keys exist only for active, not superseded facts: ``fact_keys_refresh`` is called by
every write that changes a fact's content, tags, scope or status.

How keys are built is versioned: ``KEYS_VERSION`` changes whenever the rules or the
layout of the keys do, and ``fact_keys_rebuild`` re-keys every stored fact once, before
the first write that looks keys up (``manage.py rebuild_fact_keys`` does it ahead).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from django.db import connection

from facts.models import Category, Fact, Status, Tier
from facts.search import FACT_KEYS
from memoryhub.engine.config import memory_config_get
from memoryhub.engine.db.bulk import rows_by_ids
from memoryhub.engine.models import MemoryConfig
from memoryhub.engine.search.keys import Sharing
from memoryhub.engine.search.readahead import READERS, read_ahead
from memoryhub.engine.search.text import STOPWORDS, WORD

# Bump whenever the keys of a stored fact would come out differently.
KEYS_VERSION = 4
# The lowest similarity the setting accepts; stored keys are built for it.
MIN_SIMILARITY = 0.8
# Similarity of content words at which two facts are about the same subject.
SAME_SUBJECT_SIMILARITY = 0.4
# Stored facts checked per new fact: the ones sharing the most keys with it.
CANDIDATES = 16
# Holders of one key read per new fact, the newest first: what bounds the rows a write's
# lookup reads, however large its owner's store grows. The keys held by more facts are
# the word triples that every fact of one kind shares ("cluster staging behind"); a
# near-duplicate shares rarer keys too, which are read whole and rank candidates first
# (see ``KeyIndex.sharing``). On the ingest bench's facts every merge of the unbounded
# lookup is made at 1,024, at 40,000 and at 100,000 facts (at 512, four of 25,314 are
# missed at 100,000).
PER_KEY = 1024
# What the rules need of a stored fact, as read for ``stored_signature``.
KEY_FIELDS = (
    "id",
    "content",
    "tags",
    "owner_id",
    "team_id",
    "visibility",
    "project",
    "layer",
    "speaker",
)

NAME = re.compile(r"\b[A-Z][\w-]*")
CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march "
    "april may june july august september october november december".split()
)
PUNCTUATION = re.compile(r"[^\w\s]")


def normalised(text: str) -> str:
    """Lower-cased words of ``text`` without punctuation, single-spaced."""
    return " ".join(PUNCTUATION.sub(" ", text.lower()).split())


# Stored facts come up as candidates again and again while a batch is checked: their
# words and tags are worked out once per process.
@functools.lru_cache(maxsize=1 << 15)
def content_words(text: str) -> frozenset[str]:
    """The words that carry meaning (stopwords dropped, unless nothing else is left)."""
    every = frozenset(WORD.findall(text.lower()))
    return every - STOPWORDS or every


def names(text: str) -> frozenset[str]:
    """Capitalised words that name someone or something (people, products, places).
    A sentence's first word counts only as part of a multi-word name ("Rosa Quinn");
    days and months are values, not subjects. A name followed by a number is named by
    both ("Service 2", "Sprint 14"): the number tells one of a series from the next."""
    tokens = [token.strip(".,;:!?()[]\"'") for token in text.split()]
    found = set()
    for index, word in enumerate(tokens):
        if not NAME.fullmatch(word) or word.lower() in CALENDAR_WORDS:
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if following.isascii() and following.isdigit():
            found.add(f"{word} {following}")
            continue
        if index == 0 and not NAME.match(following):
            continue
        found.add(word)
    return frozenset(found)


def same_names(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two statements can be about the same subject: the names they mention
    overlap, or neither mentions one."""
    if not a or not b:
        return not a and not b
    return not a.isdisjoint(b)


@dataclass(slots=True)
class Signature:
    """What the rules compare of one fact: its scope, words and tags. The rest is
    worked out when first needed: most candidates are turned down on their words."""

    scope: tuple[object, ...]  # (owner id, team id, visibility, project, layer)
    content: str
    tags: tuple[str, ...]
    words: frozenset[str]
    _ordered: tuple[str, ...] | None = None
    _names: frozenset[str] | None = None
    _keys: KeySet | None = None

    @property
    def ordered(self) -> tuple[str, ...]:
        """The words in key order: longest first."""
        if self._ordered is None:
            self._ordered = tuple(sorted(self.words, key=_key_order))
        return self._ordered

    @property
    def text(self) -> str:
        """The normalised text; for a text without words, its lower-cased characters."""
        if self.words:
            return normalised(self.content)
        return " ".join(self.content.lower().split())

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:
            self._names = names(self.content)
        return self._names


def signature(
    *,
    owner_id: int,
    team_id: int | None,
    visibility: str,
    project: str,
    layer: int,
    content: str,
    tags: Sequence,
    speaker: str = "",
) -> Signature:
    """The signature of a fact about to be written, or of a stored one. Its scope holds
    everything that decides who reads the fact, and who said it: a merge never crosses
    it."""
    return Signature(
        scope=(owner_id, team_id, visibility, project, layer, speaker),
        content=content,
        tags=tuple(tags),
        words=content_words(content),
    )


def _key_order(word: str) -> tuple[int, str]:
    return -len(word), word


def is_near_duplicate(new: Signature, old: Signature, similarity: float) -> bool:
    """Whether ``new`` says what ``old`` says (the rules of the module docstring)."""
    if new.scope != old.scope:
        return False
    if not new.words or not old.words:
        return not new.words and not old.words and new.text == old.text
    shared = len(new.words & old.words)
    jaccard = shared / (len(new.words) + len(old.words) - shared)
    if jaccard >= similarity:
        return True
    if not new.tags or jaccard < SAME_SUBJECT_SIMILARITY:
        return False
    shared_tags = sum(1 for tag in new.tags if tag in old.tags)
    return shared_tags * 2 > len(new.tags) and same_names(new.names, old.names)


def _overlap(n: int, similarity: float) -> int:
    """Words a set of ``n`` shares with any set at least ``similarity`` similar to it
    (a small epsilon keeps 0.8 * 5 from rounding up to 5)."""
    return math.ceil(similarity * n - 1e-9)


def _prefix(n: int, similarity: float, shared: int) -> int:
    """How many leading words must hold ``shared`` of the words two sets with at least
    ``similarity`` share."""
    return min(n, n - _overlap(n, similarity) + shared)


@functools.lru_cache(maxsize=1 << 16)
def _token(text: str) -> int:
    """A stable 64-bit hash of a word, tag or scope (the same in every process)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


MASK = (1 << 64) - 1
PRIME = 0x100000001B3  # odd: multiplying by it mod 2**64 loses nothing
OFFSET = 0xCBF29CE484222325


def _mix(value: int, token: int) -> int:
    """Fold one token hash into an unsigned 64-bit running hash."""
    return ((value ^ token) * PRIME) & MASK


def _signed(value: int) -> int:
    """An unsigned 64-bit hash as the signed value a BIGINT column holds."""
    return value - (1 << 64) if value >> 63 else value


TRIPLE, PAIR, SINGLE, BARE, SUBJECT, TAG_ONLY = (
    _token(kind) for kind in ("triple", "pair", "single", "bare", "subject", "tag only")
)


@functools.lru_cache(maxsize=1 << 12)
def _tag_words(tag: str) -> frozenset[str]:
    return frozenset(WORD.findall(tag.lower()))


@dataclass(slots=True)
class KeySet:
    """A fact's keys, laid out so that the keys to look up for any similarity are
    leading slices: word triples ordered by their last word, then their middle one (so
    the triples within the first q words come first), and the subject keys in blocks per
    tag, tags sorted."""

    words: list[int]
    subjects: list[list[int]]
    stored: list[int]  # every key once: what an active fact is stored under


def _key_set(sig: Signature) -> KeySet:
    scope = _mix(OFFSET, _token("\x1f".join(map(str, sig.scope))))
    ordered = sig.ordered
    n = len(ordered)
    if n == 0:
        bare = [_signed(_mix(_mix(scope, BARE), _token(sig.text)))]
        return KeySet(bare, [], bare)
    tokens = [_token(word) for word in ordered]
    if n == 1:
        words = [_signed(_mix(_mix(scope, SINGLE), tokens[0]))]
    elif n == 2:
        words = [_signed(_mix(_mix(_mix(scope, PAIR), tokens[0]), tokens[1]))]
    else:
        prefix = tokens[: _prefix(n, MIN_SIMILARITY, 3)]
        firsts = [_mix(_mix(scope, TRIPLE), t) for t in prefix]
        # seconds[j]: the running hashes of the word pairs (i, j), i < j.
        seconds = [[_mix(firsts[i], t) for i in range(j)] for j, t in enumerate(prefix)]
        words = [
            _signed(_mix(pair, last))
            for k, last in enumerate(prefix[2:], 2)
            for j in range(1, k)
            for pair in seconds[j]
        ]
    subjects = []
    # Shared words the same-subject rule needs, at least (from this side's size).
    needed = _overlap(n, SAME_SUBJECT_SIMILARITY)
    for tag in sorted(set(sig.tags)):
        tag_base = _mix(_mix(scope, SUBJECT), _token(tag))
        inside = _tag_words(tag)
        if inside.isdisjoint(sig.words):
            rest = tokens
        else:
            rest = [t for word, t in zip(ordered, tokens, strict=True) if word not in inside]
        # Every fact with this tag shares the tag's own words, so they are left out
        # of the keys; the shared words outside the tag number at least ``still``.
        still = needed - (n - len(rest))
        block = [_signed(_mix(tag_base, TAG_ONLY))] if still <= 0 else []
        block.extend(_signed(_mix(tag_base, t)) for t in rest[: len(rest) - max(still, 1) + 1])
        subjects.append(block)
    stored = list(dict.fromkeys([*words, *(k for block in subjects for k in block)]))
    return KeySet(words, subjects, stored)


def key_set(sig: Signature) -> KeySet:
    if sig._keys is None:
        sig._keys = _key_set(sig)
    return sig._keys


def stored_keys(sig: Signature) -> list[int]:
    """The keys an active fact is stored under (built for the lowest similarity)."""
    return key_set(sig).stored


def query_keys(sig: Signature, similarity: float) -> list[int]:
    """The keys to look up for a new fact: every fact it may duplicate has one. Its
    word triples come from a shorter prefix the higher ``similarity`` is, and its
    subject keys from the first half of its tags."""
    keys = key_set(sig)
    words = keys.words
    if len(sig.ordered) > 2:
        words = words[: math.comb(_prefix(len(sig.ordered), similarity, 3), 3)]
    half = keys.subjects[: math.ceil(len(keys.subjects) / 2)]
    return [*words, *(k for block in half for k in block)]


def stored_signature(row: tuple) -> Signature:
    """The signature of a stored fact from its (id, *KEY_FIELDS[1:]) row."""
    _, content, tags, owner_id, team_id, visibility, project, layer, speaker = row
    return signature(
        owner_id=owner_id,
        team_id=team_id,
        visibility=visibility,
        project=project,
        layer=layer,
        speaker=speaker,
        content=content,
        tags=tags,
    )


class DuplicateFinder:
    """For facts about to be written one after another, the active fact each one
    duplicates: a stored one (found through its keys) or one written earlier in the
    same run (``added`` or ``merged`` here, kept in memory until the writes land).

    A reference is whatever the caller names an unsaved fact with; stored facts are
    named by their id."""

    def __init__(self, similarity: float) -> None:
        self.similarity = min(1.0, max(similarity, MIN_SIMILARITY))
        self._pending: dict[int, list[object]] = defaultdict(list)
        # Current signature per fact seen (None: stored but not active).
        self._current: dict[object, Signature | None] = {}
        self._ahead: deque[Signature] = deque()
        self._answers: Iterator[tuple] | None = None

    def look_ahead(self, sigs: Sequence[Signature]) -> None:
        """Look up the stored candidates of ``sigs`` (the next ones ``find`` will be
        asked about, in order) ahead, on a second connection, so the lookups overlap
        the checking. The finder keeps what its writer wrote in memory, so committed
        rows are enough inside the writer's own transaction; inside a caller's, ``find``
        looks them up in turn."""
        chunks = look_ahead_chunks(sigs)
        # The chunks are dealt out to the readers in turn and their answers taken back
        # in the same turn, so that every reader works ahead of the checking. The
        # readers work out the keys too: the checking starts once the first chunk's
        # candidates are in, not after the keys of the whole batch.
        readers = min(READERS, len(chunks))
        similarity = self.similarity
        streams = [
            read_ahead(
                lambda dealt=chunks[r::readers]: _look_up_all(dealt, similarity),
                own_transaction=True,
            )
            for r in range(readers)
        ]
        if streams and all(stream is not None for stream in streams):
            self._ahead.extend(sigs)
            self._answers = (
                next(streams[c % readers]) for c, chunk in enumerate(chunks) for _ in chunk
            )

    def find(self, sig: Signature) -> object | None:
        if self._ahead and self._ahead[0] is sig:
            self._ahead.popleft()
            keys, shared, rows = next(self._answers)
        else:
            keys = query_keys(sig, self.similarity)
            shared = candidate_ids(keys)
            rows = active_rows(
                [fact_id for fact_id, _, _ in shared.owners if fact_id not in self._current]
            )
        for fact_id, row in rows.items():
            if fact_id not in self._current:
                self._current[fact_id] = None if row is None else stored_signature(row)
        # Per candidate: (whole keys shared, keys shared), as ``KeyIndex.sharing`` ranks.
        whole: Counter[object] = Counter()
        counts: Counter[object] = Counter()
        for key in keys:
            refs = self._pending.get(key, ())
            counts.update(refs)
            if key not in shared.cut:
                whole.update(refs)
        for fact_id, rare, n in shared.owners:
            if self._current.get(fact_id) is not None:
                whole[fact_id] += rare
                counts[fact_id] += n
        for ref in sorted(counts, key=lambda ref: (-whole[ref], -counts[ref])):
            if is_near_duplicate(sig, self._current[ref], self.similarity):
                return ref
        return None

    def added(self, ref: object, sig: Signature) -> None:
        """``sig`` will be written as a new fact named ``ref``."""
        self._current[ref] = sig
        for key in stored_keys(sig):
            self._pending[key].append(ref)

    def merged(self, ref: object, sig: Signature) -> None:
        """The fact ``ref`` takes the content of ``sig`` and both facts' tags (a merge)."""
        old = self._current[ref]
        self.added(ref, replace(sig, tags=tuple(merged_tags(old.tags, sig.tags))))


def merged_tags(kept: Sequence[str], incoming: Sequence[str]) -> list[str]:
    """The tags of a merged fact: its own, then the new ones, each once."""
    return list(dict.fromkeys([*kept, *incoming]))


def candidate_ids(keys: list[int]) -> Sharing:
    """(fact id, whole keys shared, keys shared) of the stored facts sharing the most of
    ``keys``, and the keys held by too many facts to be read whole."""
    return candidate_ids_many([keys])[0]


def candidate_ids_many(key_lists: Sequence[list[int]]) -> list[Sharing]:
    """``candidate_ids`` of each key list, in one statement."""
    return FACT_KEYS.sharing(key_lists, CANDIDATES, PER_KEY)


def active_rows(fact_ids: Iterable[int]) -> dict[int, tuple | None]:
    """The KEY_FIELDS rows of these facts; None for those no longer active. Read as
    plain rows: thousands are read per batch, and the query layer would cost more than
    the reading."""
    ids = list(dict.fromkeys(fact_ids))
    found: dict[int, tuple | None] = dict.fromkeys(ids)
    meta, quote = Fact._meta, connection.ops.quote_name
    tags = meta.get_field("tags")
    # Looked up by id alone and sorted out here: during a bulk load the planner's
    # statistics can call the status index the better way in.
    columns = [*KEY_FIELDS, "status", "superseded_by_id"]
    rows = rows_by_ids(
        f"SELECT {', '.join(quote(meta.get_field(name).column) for name in columns)} "
        f"FROM {quote(meta.db_table)}",
        quote(meta.pk.column),
        ids,
    )
    for fact_id, content, tag_list, *rest, status, superseded_by in rows:
        if status == Status.ACTIVE and superseded_by is None:
            tag_values = tags.from_db_value(tag_list, None, connection)
            found[fact_id] = (fact_id, content, tag_values, *rest)
    return found


# A look-ahead reads the candidates of this many facts in its first statement, then of
# twice as many in each next one, up to LOOK_AHEAD_CHUNK: the first answers come soon,
# and the rest in few statements. Each statement costs a reader a wait for the server
# and then one for the interpreter's lock, which the checking thread holds while it
# works: fewer, larger statements keep the readers ahead of it.
LOOK_AHEAD_FIRST = 16
LOOK_AHEAD_CHUNK = 128


def look_ahead_chunks[T](items: Sequence[T]) -> list[Sequence[T]]:
    """``items`` cut into the look-ahead's chunks, in order."""
    chunks, start, size = [], 0, LOOK_AHEAD_FIRST
    while start < len(items):
        chunks.append(items[start : start + size])
        start += size
        size = min(size * 2, LOOK_AHEAD_CHUNK)
    return chunks


def _look_up_all(chunks: list[Sequence[Signature]], similarity: float) -> Iterator[tuple]:
    """(keys to look up, candidate ids, rows of the ids not given before) per signature
    of these chunks, in order; rows are read once per chunk."""
    sent: set[int] = set()
    for sigs in chunks:
        key_lists = [query_keys(sig, similarity) for sig in sigs]
        chunk = candidate_ids_many(key_lists)
        rows = active_rows(i for shared in chunk for i, _, _ in shared.owners if i not in sent)
        for keys, shared in zip(key_lists, chunk, strict=True):
            fresh = {i: rows[i] for i, _, _ in shared.owners if i not in sent}
            sent.update(fresh)
            yield keys, shared, fresh


def fact_keys_add(rows: Iterable[tuple[int, Signature]]) -> None:
    """Store the keys of facts just written (active ones)."""
    FACT_KEYS.add((i, stored_keys(sig)) for i, sig in rows)


def fact_keys_refresh(fact_ids: Iterable[int]) -> None:
    """Rebuild the keys of these facts from what is stored now: the active, not
    superseded ones get keys, the others none."""
    ids = list(dict.fromkeys(fact_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        FACT_KEYS.remove(chunk)
        active = active_rows(chunk).values()
        fact_keys_add((row[0], stored_signature(row)) for row in active if row is not None)


def fact_keys_stale() -> bool:
    """Whether the stored keys were built by another version of the rules. Read inside
    the writing transaction, so that one writer rebuilds and the next sees it done."""
    built = MemoryConfig.objects.filter(pk=1).values_list("fact_keys_version", flat=True)
    if built.first() == KEYS_VERSION:
        return False
    if Fact.objects.exists():
        return True
    # With no fact stored yet there are no keys to build: the rules in force are current.
    memory_config_get()
    MemoryConfig.objects.filter(pk=1).update(fact_keys_version=KEYS_VERSION)
    return False


def fact_keys_rebuild(*, progress: Callable[[int, int], None] | None = None) -> int:
    """Re-key every active fact with the current rules and record the version; the
    number of facts keyed. ``progress(done, total)`` is called after each chunk.
    Learnings are append-only and never merged, so they carry no keys."""
    FACT_KEYS.clear()
    ids = list(
        Fact.objects.filter(status=Status.ACTIVE, superseded_by__isnull=True)
        .exclude(tier=Tier.SKILL, category=Category.LEARNING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for start in range(0, len(ids), REBUILD_CHUNK):
        active = active_rows(ids[start : start + REBUILD_CHUNK]).values()
        fact_keys_add((row[0], stored_signature(row)) for row in active if row is not None)
        if progress is not None:
            progress(min(start + REBUILD_CHUNK, len(ids)), len(ids))
    MemoryConfig.objects.filter(pk=1).update(fact_keys_version=KEYS_VERSION)
    return len(ids)


REBUILD_CHUNK = 2000
