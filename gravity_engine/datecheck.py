"""When a resolved event date deserves a second look: one rule for the Review queue and the timeline, so the
two never disagree on what a suspicious date is.

A date far from the session it was said in is usually a misread expression ("yesterday" read as last year),
unless the speaker placed it there: "three years ago", "back in 2019", "since 2015" say the distance
themselves, and such a date is flagged by neither page.
"""

from __future__ import annotations

import re
from datetime import date

# A year, or words by which the speaker measures a long distance ("three years ago", "since 2015", "back in '19"):
# the date is far because they said so. A bare "ago" is not one: "a while ago" read as four years back is a guess.
SAID_FAR = re.compile(r"\b(1[89]|20)\d{2}\b|'\d{2}\b|\bsince\b|\byears?\b|\bback in\b|\bdecades?\b", re.IGNORECASE)
# "last summer", "next spring": placed relative to now, so another calendar year is expected.
RELATIVE = re.compile(r"\b(last|next|ago|back|previous|past|coming|earlier|later)\b", re.IGNORECASE)
FAR_DAYS = 365
OTHER_YEAR_DAYS = 90


def _day(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text[:10]) if text else None
    except ValueError:
        return None


def far_date_reason(start: str | None, end: str | None, said_on: str | None, when_text: str | None,
                    far_days: int = FAR_DAYS) -> str:
    """Why an event's resolved range (``start``..``end``, ISO dates) looks wrong for the session day it was said
    on (``said_on``), or "": more than ``far_days`` from that day, or in another year more than three months
    away when nobody said a year or a relative time. Never when ``when_text`` states the distance itself."""
    first, said = _day(start), _day(said_on)
    if first is None or said is None or SAID_FAR.search(when_text or ""):
        return ""
    last = _day(end) or first
    gap = (first - said).days if said < first else (said - last).days if said > last else 0
    if gap > far_days:
        return f"{gap / 365.25:.1f} years from its session ({'after' if said < first else 'before'} it)"
    if gap > OTHER_YEAR_DAYS and first.year != said.year and not RELATIVE.search(when_text or ""):
        return f"in {first.year} though said in {said.year}, and no year was said"
    return ""
