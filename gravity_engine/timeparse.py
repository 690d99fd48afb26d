"""Time: parsing session timestamps, and finding and resolving temporal expressions in text.

Relative expressions ("yesterday", "last May", "two weeks ago") are resolved against a reference
time (the session's), so every event can carry an absolute date next to the words as said.
"""

from __future__ import annotations

import re
import warnings
from datetime import date, datetime

_DATEPARSER_SETTINGS = {"PREFER_DAY_OF_MONTH": "first", "RETURN_AS_TIMEZONE_AWARE": False}
# LongMemEval writes "2023/04/10 (Mon) 17:50"; the weekday in brackets confuses dateparser.
_WEEKDAY_IN_BRACKETS = re.compile(r"\s*\((mon|tue|wed|thu|fri|sat|sun)[a-z]*\)\s*", re.I)
_KNOWN_FORMATS = (
    "%I:%M %p on %d %B, %Y",  # LoCoMo: "1:56 pm on 8 May, 2023"
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
    "%d %B, %Y",
    "%d %B %Y",
    "%B %d, %Y",
)


def parse_datetime(text: str | None) -> datetime | None:
    """A timestamp as written in a source file -> naive datetime, or None when it cannot be read.

    Known layouts are tried exactly first (fast, no guessing); dateparser handles the rest. A bare
    time or weekday with no date is rejected rather than silently anchored to today.
    """
    if text is None:
        return None
    if isinstance(text, (int, float)):
        try:
            return datetime.fromtimestamp(float(text))
        except (OverflowError, OSError, ValueError):
            return None
    raw = str(text).strip()
    if not raw or len(raw) > 100:
        return None
    cleaned = _WEEKDAY_IN_BRACKETS.sub(" ", raw).strip()
    try:
        parsed = datetime.fromisoformat(cleaned.replace("Z", "+00:00"))
        return parsed.replace(tzinfo=None)
    except ValueError:
        pass
    for fmt in _KNOWN_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    if not re.search(r"\d{4}", cleaned):
        return None  # no year: refuse to guess one
    import dateparser

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = dateparser.parse(cleaned, settings=_DATEPARSER_SETTINGS)
    return parsed.replace(tzinfo=None) if parsed else None


def iso(value: datetime | date | None) -> str | None:
    if value is None:
        return None
    return value.isoformat(timespec="minutes") if isinstance(value, datetime) else value.isoformat()
