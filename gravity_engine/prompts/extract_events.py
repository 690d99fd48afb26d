"""Event records of one batch: what happened, who, when (as said and as absolute dates), where."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from . import _rules
from .base import DATA_NOTE, Messages, PromptTemplate, ReplyModel, extraction_user_message

NAME = "extract_events"
VERSION = "1"


class ExtractedEvent(ReplyModel):
    what: str = Field(description="what happened, one specific sentence")
    participants: list[str] = Field(default_factory=list, description="names of who took part")
    when_text: str = Field("", description="the time expression exactly as said, or empty")
    date_start: str | None = Field(None, description="ISO date YYYY-MM-DD resolved against the session date, or null")
    date_end: str | None = Field(None, description="ISO date of the end for a period, or null")
    granularity: Literal["day", "week", "month", "season", "year", "range", "unknown"] = Field(
        "unknown", description="precision of the date")
    where: str = Field("", description="place, if said")
    source_ids: list[str] = Field(default_factory=list, description="ids of the utterances that state it")
    follows: list[int] = Field(default_factory=list, description="indexes of events in this list it comes after")
    causes: list[int] = Field(default_factory=list, description="indexes of events in this list it leads to")


class EventsReply(ReplyModel):
    events: list[ExtractedEvent] = Field(default_factory=list, description="events of the transcript, in time order")


def render(context: dict[str, Any]) -> Messages:
    system = f"{_rules.COMMON}\n\n{_rules.EVENTS}\n\n{DATA_NOTE}"
    task = "Extract the events of this transcript as JSON with the key events."
    return [{"role": "system", "content": system}, {"role": "user", "content": extraction_user_message(context, task)}]


PROMPT = PromptTemplate(NAME, VERSION, render, EventsReply, "event records of one batch")
