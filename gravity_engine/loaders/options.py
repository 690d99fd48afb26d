"""What a loader may accept (limits) and which columns it reads (column names and their synonyms)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class LoadLimits(BaseModel):
    """Bounds that keep a bad or hostile file from exhausting memory or time; each can be raised."""

    model_config = ConfigDict(frozen=True)

    max_file_bytes: int = Field(200 * 1024 * 1024, gt=0)
    max_utterance_chars: int = Field(20_000, gt=0)
    max_utterances: int = Field(200_000, gt=0)
    # Bracket nesting allowed in JSON; checked by a scan before parsing, so json never recurses deeply.
    max_depth: int = Field(64, gt=1, le=900)
    on_long_utterance: Literal["truncate", "error"] = "truncate"


def _names(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    return tuple(n.strip().lower() for n in names if n and n.strip())


class ColumnMap(BaseModel):
    """Field or column names for generic JSON/JSONL/CSV input, first match wins (case-insensitive).

    Pass a single name to pin a column, e.g. ``ColumnMap(speaker="who", text="said")``.
    """

    model_config = ConfigDict(frozen=True)

    speaker: tuple[str, ...] = ("speaker", "role", "author", "name", "sender")
    text: tuple[str, ...] = ("text", "content", "message", "utterance", "body")
    session: tuple[str, ...] = ("session", "session_id", "conversation")
    timestamp: tuple[str, ...] = ("timestamp", "time", "date", "created_at", "datetime", "date_time")
    id: tuple[str, ...] = ("id", "utterance_id", "dia_id", "turn_id", "message_id")
    conversation: tuple[str, ...] = ("conversation_id", "conv_id", "thread_id", "dialogue_id")

    @field_validator("*", mode="before")
    @classmethod
    def _as_names(cls, value):
        return _names(value)

    def pick(self, field: str, keys) -> str | None:
        """The first name of ``field`` present among ``keys`` (original spelling), or None."""
        lowered = {str(k).strip().lower(): k for k in keys}
        for name in getattr(self, field):
            if name in lowered:
                return lowered[name]
        return None
