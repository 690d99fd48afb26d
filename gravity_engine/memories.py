"""A conversation as memories, the unit a host stores and returns: one per utterance or one per window of turns.

Below the hosts because the build embeds the dense host's memories into the store (``store.embed_utterances``);
the host API names them from ``hosts.memories``."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field

from .conversation import Conversation
from .timeparse import parse_datetime


class Memory(BaseModel):
    """One retrieved memory, mapped back to the utterances it holds."""

    text: str
    utterance_ids: list[str] = Field(default_factory=list)
    score: float = 0.0
    timestamp: str | None = None  # ISO time of the memory (its session) when known
    session_id: str | None = None


def _stamp(timestamp: str | None, fallback: str | None) -> str:
    if timestamp:
        dt = parse_datetime(timestamp)
        if dt is not None:
            return dt.strftime("%-d %B %Y, %H:%M") if (dt.hour or dt.minute) else dt.strftime("%-d %B %Y")
    return fallback or ""


def conversation_memories(conversation: Conversation, unit: str = "utterance", window: int = 3) -> list[Memory]:
    """Memories in conversation order; a window never crosses a session and windows overlap by one turn."""
    out: list[Memory] = []
    for session in conversation.sessions:
        utts = session.utterances
        if unit == "utterance":
            groups = [[u] for u in utts]
        else:
            step = max(1, window - 1)
            groups = [utts[i:i + window] for i in range(0, max(1, len(utts) - 1), step)] if utts else []
        for group in groups:
            if not group:
                continue
            ts = group[0].timestamp or session.timestamp
            text = "\n".join(f"{u.speaker}: {u.display_text()}" for u in group)
            out.append(Memory(text=text, utterance_ids=[u.id for u in group], timestamp=ts, session_id=session.id))
    return out


def memory_line(m: Memory) -> str:
    """The usual rendering of a memory in an answer prompt: time, speaker and words, then its ids."""
    stamp = _stamp(m.timestamp, None)
    prefix = f"[{stamp}] " if stamp else ""
    return f"{prefix}{m.text} ({', '.join(m.utterance_ids)})"


def format_memory_list(memories: list[Memory]) -> str:
    return "\n".join(f"- {memory_line(m)}" for m in memories)


def memories_fingerprint(memories: list[Memory]) -> str:
    h = hashlib.sha256()
    for m in memories:
        h.update(("\x1e" + ",".join(m.utterance_ids) + "\x1f" + m.text).encode())
    return h.hexdigest()[:20]
