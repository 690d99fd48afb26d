"""Prompts as data: one module per task (response model, render function, version); ``PROMPTS`` collects them."""

from . import answer, extract_entities, extract_events, extract_fused, extract_topics, judge, summarize_batch
from .base import DATA_NOTE, PromptLibrary, PromptTemplate, ReplyModel, conversation_block, strict_json_schema

PROMPTS = PromptLibrary([
    extract_entities.PROMPT, extract_events.PROMPT, extract_topics.PROMPT, extract_fused.PROMPT,
    summarize_batch.PROMPT, answer.PROMPT, judge.PROMPT,
])

__all__ = ["DATA_NOTE", "PROMPTS", "PromptLibrary", "PromptTemplate", "ReplyModel", "conversation_block",
           "strict_json_schema"]
