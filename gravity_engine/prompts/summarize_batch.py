"""Free-form summary of one batch: the +Sum baseline's content, in the same slot as anchors."""

from __future__ import annotations

from typing import Any

from .base import DATA_NOTE, Messages, PromptTemplate, extraction_user_message

NAME = "summarize_batch"
VERSION = "1"


def render(context: dict[str, Any]) -> Messages:
    system = ("You summarize a part of a dialogue for a memory system. Write one paragraph of plain prose "
              "that preserves every name, date, number and key fact; turn relative times into absolute dates "
              "using the session date. No headings, no lists.\n\n" + DATA_NOTE)
    task = "Summarize this transcript."
    return [{"role": "system", "content": system}, {"role": "user", "content": extraction_user_message(context, task)}]


PROMPT = PromptTemplate(NAME, VERSION, render, None, "free-form batch summary (+Sum baseline)")
