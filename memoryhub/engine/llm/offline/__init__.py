"""The offline provider: the chat-model jobs done by rules and statistics, no model.

Used when no chat model is configured. Its results say ``provider="offline"``, so what
it produced is told apart from a model's work.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..schemas import ChatMessage, FactProposals, SourceText, Summaries, Triples
from .facts import extract_facts
from .summaries import summarize
from .triples import extract_triples

PROVIDER_ID = "offline"


class OfflineProvider:
    """Extractive summaries, rule-based fact extraction and pattern triples.

    Deterministic (the same input gives the same output) and never fails on text."""

    provider_id = PROVIDER_ID

    def summarize(self, sources: Sequence[SourceText], *, max_summaries: int = 5) -> Summaries:
        """Groups of related sources, each summarised by its most central sentences;
        every source is cited by exactly one summary."""
        return Summaries(
            provider=PROVIDER_ID, summaries=summarize(sources, max_summaries=max_summaries)
        )

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


__all__ = ["PROVIDER_ID", "OfflineProvider"]
