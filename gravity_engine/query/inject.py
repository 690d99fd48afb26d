"""Step 3b: the injected context and the final answer prompt with or without it.

``InjectedContext`` holds the anchor blocks as they enter the prompt (``pack.py`` chooses and renders
the lines) or the +Sum summaries. ``answer_messages`` fills the shared answer prompt
(``prompts/answer.py``), which puts memories and anchors in tagged data sections and says memories
are the primary source of truth and anchors supplementary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from ..llm.tokens import count_tokens as _count
from ..prompts.answer import PROMPT

BLOCK_TITLES = {"topics": "Topic Summaries", "entities": "Entity Profiles", "events": "Event Records",
                "names": "Full Names"}
BLOCK_ORDER = ("topics", "entities", "events")


@lru_cache(maxsize=65536)
def count_tokens(text: str) -> int:
    """Token count via the engine's tokenizer (cached per text); a tokenizer that fails is an error."""
    if not text:
        return 0

    return _count(text)


@dataclass
class InjectedContext:
    """The anchor blocks as they enter the prompt; ``text`` is empty when nothing was selected."""

    blocks: dict[str, str] = field(default_factory=dict)  # module -> block text (title included)
    tokens: dict[str, int] = field(default_factory=dict)
    anchor_ids: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, list] = field(default_factory=dict)  # module -> the pack.ScoredLine objects shown

    @property
    def text(self) -> str:
        return "\n\n".join(self.blocks[m] for m in (*BLOCK_ORDER, "summaries", "names") if self.blocks.get(m))

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


def render_summaries(summaries: list[tuple[str, str]], count=count_tokens) -> InjectedContext:
    """+Sum: (id, text) summaries in the same slot, under one heading."""
    ctx = InjectedContext()
    if summaries:
        block = "## Conversation Summaries\n" + "\n".join(f"- {text}" for _, text in summaries)
        ctx.blocks["summaries"] = block
        ctx.tokens["summaries"] = count(block)
        ctx.anchor_ids["summaries"] = [sid for sid, _ in summaries]
    return ctx


def answer_messages(question: str, memory_lines: list[str], context: InjectedContext | None = None,
                    question_date: str | None = None) -> list[dict[str, str]]:
    """The answer prompt (``prompts/answer.py``): memories first, the anchor blocks only when there are any."""
    return PROMPT.render(answer_context(question, memory_lines, context, question_date))


def answer_context(question: str, memory_lines: list[str], context: InjectedContext | None = None,
                   question_date: str | None = None) -> dict:
    return {"question": question, "memories": memory_lines, "anchors": context.text if context else "",
            "question_date": question_date}


def prompt_text(messages: list[dict[str, str]]) -> str:
    """The messages as one readable text (for display, the trace and token counts)."""
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages)
