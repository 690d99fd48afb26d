"""The ``fullcontext`` host: the whole history in the prompt, truncated to a token budget (the ceiling reference).

When the history is longer than the budget, the most recent turns are kept (the usual choice of
long-context baselines: the oldest turns are the first to fall out of a context window).
"""

from __future__ import annotations

from ..conversation import Conversation
from .base import Memory
from .memories import conversation_memories, format_memory_list


class FullContextHost:
    """Every utterance, in order, within ``token_budget`` tokens; the query does not change what is returned."""

    name = "fullcontext"
    description = "The whole history in the prompt, truncated to a token budget (ceiling reference)"
    aliases = ("full-context", "full")
    query_independent = True  # expansion queries cannot change what it returns: Gravity runs none

    def __init__(self, token_budget: int = 100_000, count=None):
        self.token_budget = token_budget
        self._count = count
        self.memories: list[Memory] = []
        self.truncated = 0

    def ingest(self, conversation: Conversation) -> None:
        from ..llm.tokens import count_tokens  # lazy: the llm package brings the openai client

        count = self._count or count_tokens
        memories = conversation_memories(conversation, "utterance")
        kept: list[Memory] = []
        used = 0
        for m in reversed(memories):
            cost = count(m.text) + 12  # the timestamp and ids each line carries
            if used + cost > self.token_budget:
                break
            kept.append(m)
            used += cost
        self.memories = kept[::-1]
        self.truncated = len(memories) - len(kept)

    def search(self, query: str, k: int = 10) -> list[Memory]:
        return list(self.memories)

    def format_memories(self, memories: list[Memory]) -> str:
        return format_memory_list(memories)
