"""The triple extraction: entities, events and topics of one batch in a single call."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from . import _rules
from .base import DATA_NOTE, Messages, PromptTemplate, ReplyModel, extraction_user_message
from .extract_entities import ExtractedEntity
from .extract_events import ExtractedEvent
from .extract_topics import ExtractedTopic

NAME = "extract_fused"
VERSION = "1"


class FusedReply(ReplyModel):
    entities: list[ExtractedEntity] = Field(default_factory=list, description="entities of the transcript")
    events: list[ExtractedEvent] = Field(default_factory=list, description="events of the transcript, in time order")
    topics: list[ExtractedTopic] = Field(default_factory=list, description="themes of the transcript")


def render(context: dict[str, Any]) -> Messages:
    system = f"{_rules.COMMON}\n\n{_rules.ENTITIES}\n\n{_rules.EVENTS}\n\n{_rules.TOPICS}\n\n{DATA_NOTE}"
    task = "Extract entities, events and topics of this transcript as JSON with the keys entities, events, topics."
    return [{"role": "system", "content": system}, {"role": "user", "content": extraction_user_message(context, task)}]


PROMPT = PromptTemplate(NAME, VERSION, render, FusedReply, "entities, events and topics of one batch in one call")
