"""The host protocol: the smallest interface a memory system needs to sit under Gravity.

A host ingests a conversation with its own machinery, searches its own memory, and owns the
prompt its answers are generated from. Gravity never looks inside: it adds expansion queries to
``search`` and anchor blocks to the answer prompt.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ..conversation import Conversation
from ..embed import Embedder


class Memory(BaseModel):
    """One retrieved memory, mapped back to the utterances it holds."""

    text: str
    utterance_ids: list[str] = Field(default_factory=list)
    score: float = 0.0
    timestamp: str | None = None  # ISO time of the memory (its session) when known
    session_id: str | None = None


@runtime_checkable
class Host(Protocol):
    name: str

    def ingest(self, conversation: Conversation) -> None:
        """Load a conversation into the host's memory (idempotent: ingesting it again changes nothing)."""
        ...

    def search(self, query: str, k: int = 10) -> list[Memory]:
        """The host's own retrieval: at most ``k`` memories, best first."""
        ...

    def format_memories(self, memories: list[Memory]) -> str:
        """The host's own rendering of retrieved memories inside its answer prompt."""
        ...


class UsesEmbedder:
    """For hosts that embed with the engine's model: it is the one given, else the default, loaded on first use."""

    _embedder: Embedder | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from ..embed import get_embedder

            self._embedder = get_embedder()
        return self._embedder
