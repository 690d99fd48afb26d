"""Shared by every format: JSON-path places, type checks, limits, dates, and building a Conversation.

A format reader only walks its own layout and calls ``ConversationBuilder``; checks that apply to
all formats (string speakers and texts, length and count limits, duplicate ids, unreadable dates,
empty conversations) live here once, so every format fails the same way.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any, Callable, Union

from ..conversation import Conversation, Question, Session, Utterance
from ..errors import InputError
from ..timeparse import iso, parse_datetime
from .options import LoadLimits

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A place in the input, or a function that spells it: paths are only built when a message needs them.
Place = Union[str, Callable[[], str], None]


def place(where: Place) -> str | None:
    return where() if callable(where) else where


def jpath(base: str, key: str | int) -> str:
    """Extend a JSON path: ``$`` + 3 -> ``$[3]``, + "text" -> ``$.text``, + "a b" -> ``$["a b"]``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if _IDENT.fullmatch(key):
        return f"{base}.{key}"
    return f"{base}[{json.dumps(key, ensure_ascii=False)}]"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # a field that is absent, told apart from an explicit null


class EmptyConversation(InputError):
    """A conversation with no utterance: fatal alone, skipped with a warning among others."""


def type_name(value: Any) -> str:
    if value is MISSING:
        return "nothing (the field is missing)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})" if len(repr(value)) < 30 else "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def one_line(message: str) -> str:
    """Control characters from the input escaped, so an error stays one printable line."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], message)


def short(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


class WarningLog:
    """Warnings grouped by kind: a file with 5,000 unreadable dates gives one line, not 5,000."""

    def __init__(self) -> None:
        self._first: dict[str, str] = {}
        self._count: dict[str, int] = {}

    def add(self, kind: str, message: str) -> None:
        self._first.setdefault(kind, message)
        self._count[kind] = self._count.get(kind, 0) + 1

    def messages(self) -> list[str]:
        out = []
        for kind, msg in self._first.items():
            more = self._count[kind] - 1
            out.append(msg if not more else f"{msg} (and {more} more like it)")
        return out


class FileContext:
    """What one load call shares across conversations: the file's name, the limits, running counts."""

    def __init__(self, name: str, limits: LoadLimits):
        self.name = name
        self.limits = limits
        self.n_utterances = 0
        self.warnings = WarningLog()  # about the file as a whole; copied into every conversation

    def error(self, message: str, where: Place = None) -> InputError:
        return InputError(one_line(message), source=self.name, where=place(where))

    def expect(self, value: Any, kind: type | tuple, where: Place, what: str) -> Any:
        """``value`` if it has the expected type, else an InputError naming the place and the type found."""
        if isinstance(value, kind) and not (isinstance(value, bool) and kind in (int, (int, float))):
            return value
        raise self.error(f"expected {what}, found {type_name(value)}", where)

    def text_field(self, value: Any, where: Place, what: str) -> str:
        if not isinstance(value, str):
            raise self.error(f"expected {what} as a string, found {type_name(value)}", where)
        return value

    def id_field(self, value: Any, where: Place, what: str) -> str:
        """Ids may be written as strings or integers; anything else is an error."""
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise self.error(f"expected {what} as a non-empty string or integer, found {type_name(value)}", where)

    def read_time(self, value: Any, where: Place, log: WarningLog) -> tuple[str | None, str | None]:
        """(ISO, text as written) of a timestamp; unreadable ones keep their text and add a warning."""
        if value is None or value is MISSING or (isinstance(value, str) and not value.strip()):
            return None, None
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.error(f"expected a date as text or a number, found {type_name(value)}", where)
        if isinstance(value, (int, float)):
            parsed = epoch_to_datetime(value)
            text = str(value)
        else:
            text = value.strip()
            parsed = parse_datetime(text)
        if parsed is None:
            log.add("date", f"date {short(text, 40)!r} at {place(where)} could not be read; kept as text, no timestamp")
            return None, text
        return iso(parsed), text


def epoch_to_datetime(value: float) -> datetime | None:
    """Unix seconds (or milliseconds) -> naive UTC datetime; implausible numbers -> None."""
    seconds = float(value)
    if 1e11 <= seconds < 1e14:
        seconds /= 1000.0
    if not (0 < seconds < 1e11):
        return None
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        return None


class ConversationBuilder:
    """Collects sessions and utterances for one conversation, enforcing the shared rules."""

    def __init__(self, ctx: FileContext, conv_id: str, fmt: str, *, where: str | None = None):
        self.ctx = ctx
        self.id = conv_id
        self.fmt = fmt
        self.where = where
        self.log = WarningLog()
        self.sessions: list[Session] = []
        self._session_ids: set[str] = set()
        self._utterance_ids: set[str] = set()
        self._speakers: dict[str, None] = {}

    def new_session(
        self, session_id: str, *, when: tuple[str | None, str | None] = (None, None),
        where: Place = None,
    ) -> Session:
        sid = self._unique(session_id, self._session_ids, "session id", where)
        session = Session(id=sid, index=len(self.sessions), timestamp=when[0], timestamp_text=when[1])
        self.sessions.append(session)
        return session

    def add(
        self, session: Session, *, speaker: Any, text: Any, where: Place, speaker_where: Place = None,
        text_where: Place = None, uid: str | None = None,
        timestamp: tuple[str | None, str | None] = (None, None), metadata: dict | None = None,
    ) -> Utterance | None:
        """Check and append one utterance; returns None when it is skipped (no text and no image)."""
        ctx, limits = self.ctx, self.ctx.limits
        speaker = ctx.text_field(speaker, speaker_where or where, "the speaker").strip()
        if not speaker:
            raise ctx.error("the speaker is empty; expected a name or role", speaker_where or where)
        text = ctx.text_field(text, text_where or where, "the text").strip()
        metadata = metadata or {}
        if not text and not metadata.get("image_caption"):
            self.log.add("empty", f"utterance at {place(where)} has no text and was skipped")
            return None
        if len(text) > limits.max_utterance_chars:
            if limits.on_long_utterance == "error":
                raise ctx.error(
                    f"utterance of {len(text):,} characters is over the limit of {limits.max_utterance_chars:,} "
                    "(LoadLimits.max_utterance_chars); raise it or set on_long_utterance='truncate'",
                    text_where or where,
                )
            metadata = {**metadata, "truncated_from_chars": len(text)}
            text = text[: limits.max_utterance_chars]
            self.log.add("long", f"utterance at {place(text_where or where)} truncated to "
                         f"{limits.max_utterance_chars:,} characters (LoadLimits.max_utterance_chars)")
        ctx.n_utterances += 1
        if ctx.n_utterances > limits.max_utterances:
            raise ctx.error(
                f"more than {limits.max_utterances:,} utterances (LoadLimits.max_utterances); raise the limit or "
                "split the file", where,
            )
        uid = self._unique(uid or f"{session.id}:{len(session.utterances) + 1}", self._utterance_ids,
                           "utterance id", where)
        self._speakers.setdefault(speaker, None)
        if timestamp[1] is None:  # no time of its own: the session's
            timestamp = (session.timestamp, session.timestamp_text)
        utt = Utterance(id=uid, speaker=speaker, text=text, session_id=session.id, timestamp=timestamp[0],
                        timestamp_text=timestamp[1], metadata=metadata)
        session.utterances.append(utt)
        return utt

    def _unique(self, wanted: str, taken: set[str], what: str, where: Place) -> str:
        # Duplicates are renamed, not refused: ids are often incidental in user files, and the rename
        # is deterministic (first kept, then "#2", "#3", ...) and reported.
        new, k = wanted, 1
        while new in taken:
            k += 1
            new = f"{wanted}#{k}"
        if new != wanted:
            at = place(where) or "a later place"
            self.log.add(f"dup-{what}", f"{what} {wanted!r} repeated at {at}; renamed {new!r}")
        taken.add(new)
        return new

    def finish(
        self, *, speakers: list[str] | None = None, questions: list[Question] | None = None,
        metadata: dict | None = None,
    ) -> Conversation:
        """The Conversation, or an InputError when it holds no utterance at all."""
        kept = []
        for s in self.sessions:
            if not s.utterances:
                self.log.add("empty-session", f"session {s.id!r} has no utterances and was dropped")
                continue
            if s.timestamp is None and s.timestamp_text is None:
                first = s.utterances[0]
                s.timestamp, s.timestamp_text = first.timestamp, first.timestamp_text
                for u in s.utterances:
                    if u.timestamp_text is None:
                        u.timestamp, u.timestamp_text = s.timestamp, s.timestamp_text
            s.index = len(kept)
            kept.append(s)
        if not kept:
            where = f" ({self.where})" if self.where else ""
            raise EmptyConversation(f"conversation {self.id!r}{where} has no utterances; expected at least one "
                                    "turn with a speaker and text", source=self.ctx.name)
        return Conversation(
            id=self.id, sessions=kept, speakers=list(dict.fromkeys([*(speakers or []), *self._speakers])),
            source=self.ctx.name, format=self.fmt, questions=questions or [],
            warnings=self.log.messages(),
            metadata={**(metadata or {}), "load_limits": self.ctx.limits.model_dump()},
        )
