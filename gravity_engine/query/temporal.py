"""Temporal expressions in a question, resolved to date ranges, and the events whose dates match them.

Detection covers what ``timeparse.find_time_expressions`` finds (absolute dates, months, years,
"last year", "two weeks ago", ...) plus cues specific to questions: "recently"/"lately" (the last
``recent_days`` before the reference), "before X"/"after X"/"since X"/"until X" (open ranges), and
"when ..." / "what year ..." questions, which ask for a date without naming one (``asks_when``).
The reference time is the question date when given, else the conversation's last session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import numpy as np
from ..timeparse import find_time_expressions, parse_datetime

_RECENT = re.compile(r"\b(recently|lately|these days|nowadays|the other day|of late|most recent(?:ly)?|latest)\b", re.I)
_WHEN = re.compile(
    r"(?:^\s*|[,;]\s*|\b(?:and|or)\s+)(when|how long ago|how long has|how long did|since when)\b"
    r"|\b(what|which)\s+(date|day|year|month|week|time|season)\b"
    r"|\bhow many (days|weeks|months|years)\b", re.I)
# "before/after/since <something that happened>": the phrase names an event, not a date.
_EVENT_REF = re.compile(r"\b(before|after|since|prior to|following)\s+((?:the|her|his|their|my|a|an)\s+[^?.,;!]{3,60})",
                        re.I)
_OPEN = re.compile(r"\b(before|prior to|after|since|until|till|by)\s+$", re.I)

@dataclass
class QuerySpan:
    """One resolved range the question refers to (inclusive dates; None = open end)."""

    text: str
    start: date | None
    end: date | None
    kind: str  # "expression", "recent", "before", "after"

    def as_dict(self) -> dict:
        return {"text": self.text, "start": self.start.isoformat() if self.start else None,
                "end": self.end.isoformat() if self.end else None, "kind": self.kind}


@dataclass
class QueryTime:
    reference: date | None
    spans: list[QuerySpan] = field(default_factory=list)
    asks_when: bool = False
    unresolved: list[str] = field(default_factory=list)  # expressions seen but not resolvable (no reference)
    # "after the conference": (word, phrase) pairs whose boundary is an event, resolved against the anchors
    event_refs: list[tuple[str, str]] = field(default_factory=list)

    @property
    def has_expression(self) -> bool:
        return bool(self.spans)

    def as_dict(self) -> dict:
        return {"reference": self.reference.isoformat() if self.reference else None,
                "spans": [s.as_dict() for s in self.spans], "asks_when": self.asks_when,
                "unresolved": self.unresolved, "event_refs": [list(r) for r in self.event_refs]}


def _as_date(value: datetime | date | str | None) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value

    parsed = parse_datetime(value)
    return parsed.date() if parsed else None


def _find_expressions(text: str, reference: date | None) -> list[tuple[str, date, date, int]]:
    """(text, start, end, char_start) of every time expression in the question."""
    out = []
    for span in find_time_expressions(text, reference):
        start_char = span.char_start if span.char_start >= 0 else text.lower().find(span.text.lower())
        out.append((span.text, span.start, span.end, start_char))
    return out


def detect(question: str, reference: datetime | date | str | None, recent_days: int = 60) -> QueryTime:
    """Find and resolve the question's temporal expressions against ``reference``."""
    ref = _as_date(reference)
    result = QueryTime(reference=ref, asks_when=bool(_WHEN.search(question)))
    for text, start, end, char_start in _find_expressions(question, ref):
        before = question[:char_start] if char_start >= 0 else ""
        opener = _OPEN.search(before)
        if opener:
            word = " ".join(opener.group(1).lower().split())
            label = f"{opener.group(0)}{text}"
            if word in ("before", "prior to"):
                result.spans.append(QuerySpan(label, None, start - timedelta(days=1), "before"))
            elif word in ("until", "till", "by"):
                result.spans.append(QuerySpan(label, None, end, "before"))
            elif word == "after":
                result.spans.append(QuerySpan(label, end + timedelta(days=1), None, "after"))
            else:  # since
                result.spans.append(QuerySpan(label, start, None, "after"))
        else:
            result.spans.append(QuerySpan(text, start, end, "expression"))
    for ref_match in _EVENT_REF.finditer(question):
        word, phrase = " ".join(ref_match.group(1).lower().split()), ref_match.group(2).strip()
        if not any(span.text.lower().endswith(phrase.lower()) or phrase.lower() in span.text.lower()
                   for span in result.spans):
            result.event_refs.append((word, phrase))
    m = _RECENT.search(question)
    if m and any(span.text.lower() in m.group(0).lower() or m.group(0).lower() in span.text.lower()
                 for span in result.spans):
        m = None  # the time grammar already resolved it
    if m:
        if ref is not None:
            result.spans.append(QuerySpan(m.group(0), ref - timedelta(days=recent_days), ref, "recent"))
        else:
            result.unresolved.append(m.group(0))
    return result


def event_bounded_span(word: str, phrase: str, event) -> QuerySpan | None:
    """The range before or after a matched event's resolved dates (None when the event has no date)."""
    if not event.date_start:
        return None
    start = date.fromisoformat(event.date_start)
    end = date.fromisoformat(event.date_end or event.date_start)
    label = f"{word} {phrase} ({event.id}, {event.date_label()})"
    if word in ("before", "prior to"):
        return QuerySpan(label, None, start - timedelta(days=1), "before")
    return QuerySpan(label, end + timedelta(days=1) if word in ("after", "following") else start, None, "after")


def matching_events(spans: list[QuerySpan], event_start: np.ndarray, event_end: np.ndarray) -> np.ndarray:
    """Boolean mask over events: a dated event whose [start, end] overlaps any of the spans."""
    mask = np.zeros(len(event_start), dtype=bool)
    dated = event_start >= 0
    for span in spans:
        lo = span.start.toordinal() if span.start else -(1 << 62)
        hi = span.end.toordinal() if span.end else (1 << 62)
        mask |= dated & (event_start <= hi) & (event_end >= lo)
    return mask
