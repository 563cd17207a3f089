"""The offline provider: the chat-model jobs done by rules and statistics, no model.

Used when no chat model is configured. Its results say ``provider="offline"``, so what
it produced is told apart from a model's work.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schemas import CONTENT_LENGTH, ChatMessage, FactProposals, SourceText, Summaries, Triples
from .facts import extract_facts
from .profile import NOTHING_KNOWN, describe_user
from .summaries import summarize
from .triples import extract_triples

PROVIDER_ID = "offline"


class OfflineProvider:
    """Summaries stating their facts, a profile of the user, rule-based fact extraction
    and pattern triples.

    Deterministic (the same input gives the same output) and never fails on text."""

    provider_id = PROVIDER_ID

    def summarize(
        self,
        sources: Sequence[SourceText],
        *,
        max_summaries: int = 5,
        max_characters: int = CONTENT_LENGTH,
    ) -> Summaries:
        """Groups of sources by topic (by their vectors when every one has one, else by
        their words), each stated as its subjects and what its sources say of them
        ("Ledgerd: written in Rust; owned by the payments team."). A summary cites the
        sources it states, no others; what does not fit in ``max_characters`` is cited
        by none."""
        return Summaries(
            provider=PROVIDER_ID,
            summaries=summarize(
                sources, max_summaries=max_summaries, max_characters=max_characters
            ),
        )

    def describe_user(
        self, sources: Sequence[SourceText], *, max_characters: int = CONTENT_LENGTH
    ) -> str:
        """A profile of the user from the facts ``sources``: what they say of the user's
        role, preferences, personality, habits and tools ("Prefers minimal UIs and
        structured logging; builds Rust backends."); ``NOTHING_KNOWN`` when none says
        anything about the user."""
        return describe_user(sources, max_characters=max_characters)

    def extract_facts(self, conversation: str | Sequence[ChatMessage]) -> FactProposals:
        """What the user asks to be remembered ("remember that ...": source explicit),
        states as a preference, habit, relationship, circumstance or personal detail, or
        states about a named thing (source extracted). Questions, and what the assistant
        says, propose nothing. Facts inferred from repeated behaviour (source observed)
        need a model; these rules propose none."""
        return FactProposals(provider=PROVIDER_ID, facts=extract_facts(conversation))

    def extract_triples(self, sources: str | Sequence[SourceText]) -> Triples:
        """Named things (capitalised names, identifiers, "I" as the user, or a phrase
        such as "the billing service") joined by a known verb phrase (works at, uses,
        depends on, runs on, is a, ...); negated statements give none."""
        return Triples(provider=PROVIDER_ID, triples=extract_triples(sources))


__all__ = ["NOTHING_KNOWN", "PROVIDER_ID", "OfflineProvider"]
