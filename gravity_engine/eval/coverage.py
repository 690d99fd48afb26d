"""The coverage rule: is a gold answer in a context? Shared by ``measure``, ``evaluate`` and the playground.

A question is covered when every part of its gold answer occurs in the context. The gold is split into parts on
commas (not one between digits, "30,000"), semicolons, "and", "or", "vs"; gold and context are normalized the same
way (lowercase, split on anything that is not a letter or digit, drop the articles a/an/the, drop a possessive or
plain plural "s"); a part is present when its tokens occur as one contiguous run inside one context line (memory or
anchor line). So "7 May 2023" is covered by "(7 May 2023)" but not by "17 May" plus a "2023" elsewhere. A part that
is only a date ("7 May 2023", "August 15, 2023", "12 March", "in 2022", "the week before 9 June 2023") is also
present when one line names a date inside it, written any way ("2023-05-07", "May 7, 2023", "2 June 2023 to 8 June
2023"); a gold without a year matches any year, a line without a year never gives one; "on or before 8 May 2023" is
a bound and "[8 May 2023, 13:56]" a memory's timestamp, neither a date by meaning (both still count word for word).

The gold's date forms are read here, strictly and without a reference time, rather than by the time grammar of
``timeparse`` (which resolves what a speaker said against when they said it): a measure must read "the week before
9 June 2023" the same way in every run, whatever the extractor's grammar becomes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from ..text import normalize_token

_SPLIT = re.compile(r"[^a-z0-9]+")

_ARTICLES = {"a", "an", "the"}

def answer_tokens(text: str) -> list[str]:
    """The coverage rule's tokens (see the module docstring)."""
    return [normalize_token(t) for t in _SPLIT.split(str(text).lower()) if t and t not in _ARTICLES]

_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december"]

_MONTHS = {**{m: i for i, m in enumerate(_MONTH_NAMES, 1)}, **{m[:3]: i for i, m in enumerate(_MONTH_NAMES, 1)},
           "sept": 9}

_MON = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + ")"

# A comma inside a written date ("August 15, 2023", "15 August, 2023", "February, 2023") does not split the gold.
_DATE_COMMA = re.compile(rf"\b({_MON}\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?|\d{{1,2}}(?:st|nd|rd|th)?\s*{_MON}),\s*(\d{{4}})\b",
                         re.I)

# Parts are joined by these; a comma between digits groups thousands ("30,000") and joins nothing.
_PART_SPLIT = re.compile(r"(?<!\d),|,(?!\d{3}(?!\d))|;|\band\b|\bor\b|\bvs\b\.?|\bversus\b", re.I)

def gold_parts(gold: str) -> list[str]:
    """The gold answer split on commas, semicolons, 'and', 'or' and 'vs', each part as normalized tokens."""
    parts = _PART_SPLIT.split(_DATE_COMMA.sub(r"\1 \2", str(gold)))
    return [" ".join(toks) for toks in (answer_tokens(p) for p in parts) if toks]

# Dates are read on the normalized token stream, so gold and context pass through the same normalizer.
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"

_DATE_FORMS = re.compile("|".join([
    r"\b(?P<iy>\d{4}) (?P<im>\d{1,2}) (?P<id>\d{1,2})\b",  # 2023-05-07
    rf"\b{_DAY.format('dd')} ?(?P<dm>{_MON})\b(?: (?P<dy>\d{{4}})\b)?",  # 7 May 2023, 12 March, 15June
    rf"\b(?P<md>{_MON}) {_DAY.format('mdd')}\b(?: (?P<mdy>\d{{4}})\b)?",  # May 7, 2023
    rf"\b(?P<mm>{_MON}) (?P<my>\d{{4}})\b",  # May 2023
    r"\b(?P<y>(?:19|20)\d\d)\b",  # 2023
]))

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

_RELATIVE = re.compile(rf"^(?:on )?(?:(?:the|a) )?(?:(?P<n>two|three|2|3) )?(?P<unit>day|week|weekend|{'|'.join(_WEEKDAYS)}) "
                       r"(?P<dir>before|after|of) (?P<date>.+)$")

_COUNTS = {"two": 2, "three": 3, "2": 2, "3": 3}

_WEEK_OF_MONTH = re.compile(r"^(?:in |during )?(?P<which>first|last) week of (?P<month>.+)$")

_FILLER = {"on", "in", "of", "around", "about", "circa", "during", "by"}

_CLOCK = re.compile(r" \d{1,2} \d{2}\b")

_ANY_YEAR = 2000  # a leap year: "29 February" without a year still reads

@dataclass(frozen=True)
class DateSpan:
    start: date
    end: date
    has_year: bool
    bound: bool = False  # "on or before 8 May 2023": a limit, not the date itself

def _spans(text: str) -> list[tuple[DateSpan, int, int]]:
    """Calendar dates written in a normalized token stream, with their character offsets."""
    out = []
    for m in _DATE_FORMS.finditer(text):
        g = m.groupdict()
        try:
            if g["iy"]:
                d = date(int(g["iy"]), int(g["im"]), int(g["id"]))
                start, end, has_year = d, d, True
            elif g["dm"] or g["md"]:
                year = g["dy"] or g["mdy"]
                d = date(int(year) if year else _ANY_YEAR, _MONTHS[g["dm"] or g["md"]], int(g["dd"] or g["mdd"]))
                start, end, has_year = d, d, bool(year)
            elif g["mm"]:
                y, mo = int(g["my"]), _MONTHS[g["mm"]]
                start, end, has_year = date(y, mo, 1), date(y + mo // 12, mo % 12 + 1, 1) - timedelta(days=1), True
            else:
                start, end, has_year = date(int(g["y"]), 1, 1), date(int(g["y"]), 12, 31), True
        except ValueError:  # "31 February", month 13 of an ISO-looking triple
            continue
        bound = text[max(0, m.start() - 10):m.start()].endswith(("before ", "after "))
        # A date followed by a clock time is a memory's timestamp (when it was said), not an answer.
        bound = bound or bool(_CLOCK.match(text, m.end()))
        out.append((DateSpan(start, end, has_year, bound), m.start(), m.end()))
    return out

def _relative(unit: str, direction: str, d: date, n: int = 1) -> tuple[date, date] | None:
    """'the week before 9 June' -> 2..8 June; 'the weekend before', 'the sunday after', 'the day before';
    'two weekends before' the one before that; 'the week of 23 August' the Monday..Sunday holding it."""
    if direction == "of":
        if unit != "week" or n != 1:
            return None
        monday = d - timedelta(days=d.weekday())
        return monday, monday + timedelta(days=6)
    if n > 1:  # each further unit is one more week (or day) away
        start, end = _relative(unit, direction, d)
        shift = timedelta(days=(n - 1) * (1 if unit == "day" else 7) * (-1 if direction == "before" else 1))
        return start + shift, end + shift
    step = -1 if direction == "before" else 1
    if unit == "day":
        day = d + timedelta(days=step)
        return day, day
    if unit == "week":
        a, b = d + timedelta(days=step), d + timedelta(days=7 * step)
        return min(a, b), max(a, b)
    targets = {5, 6} if unit == "weekend" else {_WEEKDAYS.index(unit)}
    day = d + timedelta(days=step)
    while day.weekday() not in targets:
        day += timedelta(days=step)
    other = day + timedelta(days=step)  # a weekend is two days
    if unit == "weekend" and other.weekday() in targets:
        return min(day, other), max(day, other)
    return day, day

def gold_date(part: str) -> DateSpan | None:
    """The period a gold part names when the part is nothing but a date (fillers aside), else None."""
    week = _WEEK_OF_MONTH.match(part)
    if week:  # "first week of May 2023": the month's first (last) seven days
        month = gold_date(week.group("month"))
        if month is None or month.end.day < 28 or month.start.day != 1:
            return None
        if week.group("which") == "first":
            return DateSpan(month.start, month.start + timedelta(days=6), month.has_year)
        return DateSpan(month.end - timedelta(days=6), month.end, month.has_year)
    rel = _RELATIVE.match(part)
    inner = rel.group("date") if rel else part
    found = _spans(inner)
    if len(found) != 1:
        return None
    span, a, b = found[0]
    if any(t not in _FILLER for t in (inner[:a] + " " + inner[b:]).split()):
        return None
    if not rel:
        return span
    if span.start != span.end:
        return None
    period = _relative(rel.group("unit"), rel.group("dir"), span.start, _COUNTS.get(rel.group("n") or "", 1))
    return None if period is None else DateSpan(*period, span.has_year)

@lru_cache(maxsize=100_000)
def _line_spans(line: str) -> tuple[DateSpan, ...]:
    return tuple(s for s, _, _ in _spans(line) if not s.bound)

def _date_inside(gold: DateSpan, line: str) -> bool:
    """True when ``line`` (normalized) names a date or period that lies inside the gold's period."""
    for s in _line_spans(line):
        if gold.has_year and not s.has_year:
            continue
        start, end = s.start, s.end
        if not gold.has_year:
            if start.year != end.year:
                continue
            try:
                start, end = start.replace(year=_ANY_YEAR), end.replace(year=_ANY_YEAR)
            except ValueError:
                continue
        if gold.start <= start and end <= gold.end:
            return True
    return False

@lru_cache(maxsize=100_000)
def normalized_line(line: str) -> str:
    """One context line as the coverage rule reads it (memory lines recur across questions: cached)."""
    return " " + " ".join(answer_tokens(line)) + " "

def normalized_text(lines: list[str]) -> str:
    """The context as one normalized token stream; lines are kept apart so no part spans two of them."""
    return "\n".join(normalized_line(line) for line in lines)

def context_covers(gold: str, text: str) -> bool | None:
    """``covers`` on raw text (a prompt, a context): each line is one place a gold part must fit in."""
    return covers(gold, normalized_text(text.splitlines()))

def covers(gold: str, context: str) -> bool | None:
    """True when every gold part occurs as a contiguous token run in the normalized context (``normalized_text``);
    None when the gold answer has no tokens."""
    parts = gold_parts(gold)
    if not parts:
        return None
    lines = None
    for p in parts:
        if f" {p} " in context:
            continue
        period = gold_date(p)
        if period is None:
            return False
        lines = lines if lines is not None else context.split("\n")
        if not any(_date_inside(period, line) for line in lines):
            return False
    return True
