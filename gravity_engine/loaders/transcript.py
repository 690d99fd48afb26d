"""Plain-text transcripts: ``Name: text`` lines, grouped into sessions.

Session breaks are Markdown headings (``## Session 2 — 2024-03-05``) or ``[date]`` lines when the
file has any; otherwise blank lines. Lines that do not start with ``Name:`` continue the previous
utterance. A line may start with its own time: ``[2024-03-05 10:31] Alice: hi``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from datetime import datetime

from ..conversation import Conversation
from ..timeparse import iso, parse_datetime
from .builder import ConversationBuilder, FileContext, short
from .source import SourceText, iter_lines

_HEADING = re.compile(r"\s{0,3}#{1,6}\s+(.*?)\s*#*\s*")
_DATE_LINE = re.compile(r"\s*\[([^\[\]{}\"]{1,80})\]\s*")
# Optional [time], optional **bold**, a name of 1-40 characters starting with a letter, a colon, a space.
_TURN = re.compile(
    r"\s*(?:\[(?P<ts>[^\[\]{}\"]{1,60})\]\s*)?(?:\*\*|__)?(?P<name>[^\W\d_][\w .'’()-]{0,39}?)(?:\*\*|__)?\s*:"
    r"(?:\*\*|__)?(?:[ \t]+(?P<text>.*)|[ \t]*)"
)
_MARKER = re.compile(r"(?m)^(?:[ \t]{0,3}#{1,6}[ \t]+\S|[ \t]*\[[^\[\]{}\"\n]{1,80}\][ \t]*\r?$)")
_SESSION_HEADING = re.compile(r"(?i)session\b\s*(?P<label>[\w.-]*)\s*(?P<rest>.*)")
_CLOCK = re.compile(r"(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?", re.I)
_SEPARATORS = " \t—–-:,|()[]"


def match_turn(line: str) -> re.Match | None:
    m = _TURN.fullmatch(line)
    if m and len(m.group("name").split()) <= 4:
        return m
    return None


def is_date_line(line: str) -> bool:
    return _DATE_LINE.fullmatch(line) is not None


def looks_like_transcript(text: str) -> bool:
    """True when the first line that is not a heading or a [date] line is a ``Name: text`` turn."""
    for line in itertools.islice(iter_lines(text), 200):
        if not line.strip() or _HEADING.fullmatch(line) or _DATE_LINE.fullmatch(line):
            continue
        return match_turn(line) is not None
    return False


@dataclass
class _Block:
    line: int
    heading: str | None = None
    date_text: str | None = None
    label: str | None = None
    turns: list[list] = field(default_factory=list)  # [line, time text, name, [text lines]]


def _blocks(src: SourceText, ctx: FileContext) -> tuple[list[_Block], bool]:
    # One C-speed search instead of two regex calls per line.
    marked = _MARKER.search(src.text) is not None
    blocks = [_Block(line=1)]
    blank_before = False
    n_turns = 0
    for n, line in enumerate(iter_lines(src.text), start=1):
        if not line.strip():
            blank_before = True
            continue
        lead = line.lstrip()[:1]
        heading = _HEADING.fullmatch(line) if lead == "#" else None
        date_line = _DATE_LINE.fullmatch(line) if lead == "[" else None
        if heading or date_line:
            block = _Block(line=n)
            if heading:
                block.heading = heading.group(1)
                m = _SESSION_HEADING.fullmatch(heading.group(1))
                if m:
                    block.label = m.group("label") or None
                    block.date_text = m.group("rest").strip(_SEPARATORS) or None
                elif parse_datetime(heading.group(1).strip(_SEPARATORS)):
                    block.date_text = heading.group(1).strip(_SEPARATORS)
            else:
                block.date_text = date_line.group(1).strip()
            blocks.append(block)
            blank_before = False
            continue
        turn = match_turn(line)
        if turn:
            n_turns += 1
            if n_turns > ctx.limits.max_utterances:
                raise ctx.error(f"more than {ctx.limits.max_utterances:,} turns (LoadLimits.max_utterances); raise "
                                "the limit or split the file", f"line {n}")
            if blank_before and not marked and blocks[-1].turns:
                blocks.append(_Block(line=n))
            blocks[-1].turns.append([n, turn.group("ts"), turn.group("name").strip(), [turn.group("text") or ""]])
        elif blocks[-1].turns:
            # A paragraph break inside a message, not a session break.
            blocks[-1].turns[-1][3].append("\n" + line if blank_before else line)
        else:
            raise ctx.error(
                f"{short(line)!r} is not a turn; expected 'Name: text' (continuation lines must follow a turn)",
                f"line {n}",
            )
        blank_before = False
    return [b for b in blocks if b.turns or b.heading or b.date_text], marked


def _turn_time(ts: str, session_iso: str | None, where: str, ctx: FileContext, b: ConversationBuilder):
    """A turn's own time; a bare clock time ("10:31", "3:05 pm") takes its date from the session."""
    clock = _CLOCK.fullmatch(ts.strip())
    if clock and session_iso:
        hour, minute = int(clock["h"]), int(clock["m"])
        if clock["ampm"]:
            hour = hour % 12 + (12 if clock["ampm"].lower().startswith("p") else 0)
        if hour < 24 and minute < 60:
            day = datetime.fromisoformat(session_iso).replace(hour=hour, minute=minute, second=int(clock["s"] or 0))
            return iso(day), ts.strip()
    return ctx.read_time(ts, where, b.log)


def read_transcript(src: SourceText, ctx: FileContext, default_id: str):
    yield default_id, (), (lambda: _build(src, ctx, default_id))


def _build(src: SourceText, ctx: FileContext, cid: str) -> Conversation:
    blocks, marked = _blocks(src, ctx)
    b = ConversationBuilder(ctx, cid, "transcript")
    if not marked and len(blocks) > 1 and all(len(bl.turns) == 1 for bl in blocks):
        # Blank lines between every single turn are spacing, not sessions.
        merged = _Block(line=1, turns=[t for bl in blocks for t in bl.turns])
        blocks = [merged]
        b.log.add("spacing", "blank lines separate every turn; read them as spacing and made one session")
    titles = {}
    for block in blocks:
        if not block.turns and (block.label or block.date_text):
            b.log.add("empty-session", f"session heading at line {block.line} has no turns; dropped")
    # Headings without turns are titles (e.g. a document's "# ..." line), not sessions.
    blocks = [bl for bl in blocks if bl.turns]
    for k, block in enumerate(blocks, start=1):
        sid = f"session_{block.label}" if block.label else f"session_{k}"
        when = ctx.read_time(block.date_text, f"line {block.line}", b.log) if block.date_text else (None, None)
        session = b.new_session(sid, when=when, where=f"line {block.line}")
        if block.heading:
            titles[session.id] = block.heading
        for line, ts, name, parts in block.turns:
            stamp = _turn_time(ts, session.timestamp, f"line {line}", ctx, b) if ts else (None, None)
            b.add(session, speaker=name, text="\n".join(parts) if len(parts) > 1 else parts[0], where=f"line {line}",
                  timestamp=stamp)
    return b.finish(metadata={"session_titles": titles} if titles else {})
