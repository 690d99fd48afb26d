"""The extractor protocol: utterance batches in, partial anchors out.

The build (``gravity_engine.build``) cuts a conversation into batches, asks an extractor for each
batch's anchors, checkpoints every batch result (so a failed or interrupted build resumes), merges
them across batches (``consolidate``), and finally lets the extractor run its whole-conversation
pass (``finalize``: e.g. topic clustering for the classic backend).
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ..anchors import AnchorSet, Entity, Event, Topic
from ..conversation import Conversation, Utterance

DEFAULT_BATCH_SIZE = 20


class Batch(BaseModel):
    """Consecutive utterances of one session (a batch never spans two sessions, so each has one date)."""

    index: int
    session_id: str
    session_time: str | None = None  # ISO of the session: the reference for relative dates
    session_time_text: str | None = None
    speakers: list[str] = Field(default_factory=list)  # all speakers of the conversation
    utterances: list[Utterance]

    def key(self) -> str:
        """Content hash: a checkpoint or cache entry stays valid only while the batch text is the same."""
        h = hashlib.sha256()
        h.update((self.session_id + "\x00" + (self.session_time or "")).encode())
        for u in self.utterances:
            h.update(("\x1e" + u.id + "\x1f" + u.speaker + "\x1f" + u.display_text()).encode())
        return h.hexdigest()[:24]


class BatchAnchors(BaseModel):
    """Anchors found in one batch. Ids are local to the batch; consolidation assigns global ones."""

    entities: list[Entity] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    topics: list[Topic] = Field(default_factory=list)
    # Counters the build report sums up: e.g. {"invented_source_ids": 2, "llm_calls": 1}.
    stats: dict[str, int] = Field(default_factory=dict)


@runtime_checkable
class Extractor(Protocol):
    name: str  # "classic" | "llm"

    def extract_batch(self, batch: Batch) -> BatchAnchors:
        """Extract the anchors of one batch. Raise an exception to mark the batch failed (it is retried on rerun)."""
        ...

    def finalize(self, conversation: Conversation, anchors: AnchorSet, new_session_ids: list[str]) -> AnchorSet:
        """Whole-conversation pass after consolidation (topic arcs, event links). ``new_session_ids`` are the
        sessions extracted in this run (all of them unless the build is incremental)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the build info records: "version" (bumped when the extractor's output changes), model,
        prompt versions, options. Checkpoints are keyed by it, so any change here re-extracts."""
        ...


def make_batches(conversation: Conversation, batch_size: int = DEFAULT_BATCH_SIZE,
                 session_ids: list[str] | None = None) -> list[Batch]:
    """Cut sessions (all, or only ``session_ids``) into batches of at most ``batch_size`` utterances."""
    if batch_size < 1:
        raise ValueError("batch size must be at least 1")
    wanted = set(session_ids) if session_ids is not None else None
    batches: list[Batch] = []
    for session in conversation.sessions:
        if wanted is not None and session.id not in wanted:
            continue
        utts = session.utterances
        for start in range(0, len(utts), batch_size):
            batches.append(Batch(
                index=len(batches), session_id=session.id, session_time=session.timestamp,
                session_time_text=session.timestamp_text, speakers=conversation.speakers,
                utterances=utts[start:start + batch_size],
            ))
    return batches
