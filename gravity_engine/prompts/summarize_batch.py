"""Free-form summary of one batch: the +Sum baseline's content, in the same slot as anchors.

Called by ``query/summaries.py`` (``write_model_summaries``) once per batch of a store; the summaries
are kept beside the store and the replies in the LLM cache.
"""

from __future__ import annotations

from typing import Any

from .base import DATA_NOTE, Messages, PromptTemplate, extraction_user_message

NAME = "summarize_batch"
# 2: a length to aim for (+Sum fills the anchor slot up to the size the full variant would inject, so a
#    summary as long as the transcript would crowd out all but one batch) and no preamble.
VERSION = "2"


def render(context: dict[str, Any]) -> Messages:
    system = ("You summarize a part of a dialogue for a memory system. Write one paragraph of plain prose, at most "
              "about 80 words, that preserves every name, date, number and key fact; turn relative times into "
              "absolute dates using the session date. Start with the content itself: no preamble, no headings, "
              "no lists.\n\n" + DATA_NOTE)
    task = "Summarize this transcript."
    return [{"role": "system", "content": system}, {"role": "user", "content": extraction_user_message(context, task)}]


PROMPT = PromptTemplate(NAME, VERSION, render, None, "free-form batch summary (+Sum baseline)")
