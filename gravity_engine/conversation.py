"""The conversation data model: utterances grouped into sessions, plus benchmark questions if any.

Every loader returns these objects; everything downstream (extractors, hosts, the app) reads only
them, never a source file's own layout.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class Utterance(BaseModel):
    """One turn. ``id`` is stable and unique within its conversation (LoCoMo's ``dia_id`` when present)."""

    id: str
    speaker: str
    text: str
    session_id: str
    # ISO 8601 of the session (or turn) time when it could be parsed; the raw text is kept beside it.
    timestamp: str | None = None
    timestamp_text: str | None = None
    # Source metadata: image captions, LongMemEval's has_answer, original field values, ...
    metadata: dict[str, Any] = Field(default_factory=dict)

    def display_text(self) -> str:
        """The text an extractor or a host sees: the words plus an image caption if the turn had one."""
        caption = self.metadata.get("image_caption")
        if caption:
            return f"{self.text} [shares an image: {caption}]" if self.text else f"[shares an image: {caption}]"
        return self.text


class Session(BaseModel):
    id: str
    index: int
    timestamp: str | None = None  # ISO 8601, None when unknown or unparseable
    timestamp_text: str | None = None  # as written in the source
    utterances: list[Utterance] = Field(default_factory=list)

    def when(self) -> datetime | None:
        return datetime.fromisoformat(self.timestamp) if self.timestamp else None


class Question(BaseModel):
    """A benchmark question attached to the conversation it is about (LoCoMo QA, LongMemEval)."""

    id: str
    question: str
    answer: str | None = None
    category: str = ""  # LoCoMo: "1".."5"; LongMemEval: the question_type
    evidence: list[str] = Field(default_factory=list)  # utterance ids that support the answer
    question_date: str | None = None  # ISO 8601 when known
    metadata: dict[str, Any] = Field(default_factory=dict)


class Conversation(BaseModel):
    id: str
    sessions: list[Session] = Field(default_factory=list)
    speakers: list[str] = Field(default_factory=list)
    source: str = ""  # file the conversation was read from
    format: str = ""  # loader that read it: locomo, longmemeval, jsonl, csv, transcript, chatgpt, ...
    questions: list[Question] = Field(default_factory=list)
    # What a loader noticed but did not treat as fatal: unparseable dates kept as text, truncated turns.
    warnings: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def utterances(self) -> list[Utterance]:
        return [u for s in self.sessions for u in s.utterances]

    def utterance_index(self) -> dict[str, Utterance]:
        return {u.id: u for s in self.sessions for u in s.utterances}

    def session(self, session_id: str) -> Session | None:
        return next((s for s in self.sessions if s.id == session_id), None)

    def listeners(self) -> dict[str, str]:
        """Who each utterance is said to, by id: the other speaker of a two-person chat, else the last one who spoke
        before it in its session (the first turn of a group session has none)."""
        out = {}
        for s in self.sessions:
            last: list[str] = []
            for u in s.utterances:
                others = [o for o in self.speakers if o != u.speaker]
                who = others[0] if len(self.speakers) == 2 and len(others) == 1 else next(
                    (x for x in reversed(last) if x != u.speaker), None)
                if who:
                    out[u.id] = who
                last.append(u.speaker)
        return out

    def last_time(self) -> datetime | None:
        """The latest known session time: the default reference for 'recently', 'last year', ..."""
        times = [s.when() for s in self.sessions if s.timestamp]
        return max(times) if times else None

    def n_utterances(self) -> int:
        return sum(len(s.utterances) for s in self.sessions)
