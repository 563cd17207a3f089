"""Chat-model providers: a model behind any OpenAI-compatible endpoint, or offline rules.

Callers ask for jobs (``summarize``, ``extract_facts``, ``extract_triples``) and get
pydantic objects labelled with the provider that made them. Nothing here imports Django
except ``configured``, which builds the provider the instance settings name
(``llm_provider_get``).
"""

from .base import (
    ChatModelBusy,
    ChatModelConfigError,
    ChatModelError,
    ChatModelOutputError,
    ChatModelUnavailable,
    ChatProvider,
    ErrorKind,
    ErrorRecorder,
    ErrorReport,
)
from .client import ChatClient
from .factory import get_chat_provider
from .model import ModelProvider
from .offline import OfflineProvider
from .schemas import (
    ChatMessage,
    FactProposal,
    FactProposals,
    SourceText,
    Summaries,
    Summary,
    Triple,
    Triples,
)

__all__ = [
    "ChatClient",
    "ChatMessage",
    "ChatModelBusy",
    "ChatModelConfigError",
    "ChatModelError",
    "ChatModelOutputError",
    "ChatModelUnavailable",
    "ChatProvider",
    "ErrorKind",
    "ErrorRecorder",
    "ErrorReport",
    "FactProposal",
    "FactProposals",
    "ModelProvider",
    "OfflineProvider",
    "SourceText",
    "Summaries",
    "Summary",
    "Triple",
    "Triples",
    "get_chat_provider",
]
