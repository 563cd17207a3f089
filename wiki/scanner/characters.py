"""Characters that hide or reorder text: zero-width, bidi controls, Unicode tags."""

ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u034f")
BIDI_OVERRIDE = frozenset("\u202d\u202e")  # LRO, RLO: reorder what follows
BIDI_EMBED = frozenset("\u202a\u202b\u202c\u2066\u2067\u2068\u2069")
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
INVISIBLE = ZERO_WIDTH | BIDI_OVERRIDE | BIDI_EMBED
