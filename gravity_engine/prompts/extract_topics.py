"""Topic arcs of one batch: the themes discussed, their key facts and where each theme stands."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from . import _rules
from .base import DATA_NOTE, Messages, PromptTemplate, ReplyModel, extraction_user_message

NAME = "extract_topics"
VERSION = "1"


class ExtractedKeyFact(ReplyModel):
    text: str = Field(description="one specific fact")
    source_ids: list[str] = Field(default_factory=list, description="ids of the utterances that state it")


class ExtractedTopic(ReplyModel):
    label: str = Field(description="short specific title of the theme")
    keywords: list[str] = Field(default_factory=list, description="distinctive words of the theme")
    summary: str = Field("", description="one or two sentences keeping names and dates")
    key_facts: list[ExtractedKeyFact] = Field(default_factory=list, description="specific facts of the theme")
    participants: list[str] = Field(default_factory=list, description="who discusses it")
    state: str = Field("", description="where the theme stands at the end of this part")
    source_ids: list[str] = Field(default_factory=list, description="ids of the utterances about it")


class TopicsReply(ReplyModel):
    topics: list[ExtractedTopic] = Field(default_factory=list, description="themes of the transcript")


def render(context: dict[str, Any]) -> Messages:
    system = f"{_rules.COMMON}\n\n{_rules.TOPICS}\n\n{DATA_NOTE}"
    task = "Extract the topics of this transcript as JSON with the key topics."
    return [{"role": "system", "content": system}, {"role": "user", "content": extraction_user_message(context, task)}]


PROMPT = PromptTemplate(NAME, VERSION, render, TopicsReply, "topic arcs of one batch")
