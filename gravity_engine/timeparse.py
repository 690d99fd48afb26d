"""Time: parsing session timestamps, and finding and resolving temporal expressions in text.

Relative expressions ("yesterday", "last May", "two weeks ago") are resolved against a reference
time (the session's), so every event can carry an absolute date next to the words as said.
"""

from __future__ import annotations

import calendar
import bisect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

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


# --------------------------------------------------------------------------------------------------
# Temporal expressions in text.
#
# Span detection is our own: a small grammar of the forms people use in conversation, compiled once.
# Each rule resolves its own matches with date arithmetic, so the common forms never reach
# dateparser (slow, and its ``search_dates`` reads "We" as Wednesday and the verb "may" as May).
# dateparser is the fallback of ``resolve_time_expression`` for absolute forms the grammar lacks.
# --------------------------------------------------------------------------------------------------

GRANULARITIES = ("day", "week", "month", "season", "year", "range")


@dataclass(frozen=True)
class TimeSpan:
    """A temporal expression as written, resolved to the days it covers."""

    text: str  # the expression as written
    start: date  # first day covered
    end: date  # last day covered (== start for a single day)
    granularity: str  # "day" | "week" | "month" | "season" | "year" | "range"
    char_start: int = -1
    char_end: int = -1


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30,
}
# Vague counts become ranges: (fewest, most) units back.
_VAGUE_COUNTS = {"couple": (2, 3), "few": (2, 5), "several": (3, 7)}
_SEASON_MONTHS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}  # northern, meteorological

# Month names count only when capitalised ("may" the verb, "march" the verb, "august" the adjective);
# abbreviations only next to a day or year (elsewhere "Jan" is a name and "Mar" a word).
_MONTH_FULL = r"(?-i:January|February|March|April|May|June|July|August|September|October|November|December)"
_MONTH_ANY = r"(?-i:January|February|March|April|May|June|July|August|September|October|November|December" \
             r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?)"
_NUM = r"\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty" \
       r"|a\s+couple(?:\s+of)?|couple(?:\s+of)?|a\s+few|few|several"
_UNIT = r"day|week|month|year"
_SEASON = r"spring|summer|fall|autumn|winter"
_WEEKDAY = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_ORD = r"(?:st|nd|rd|th)?"
# Abbreviated weekdays only capitalised and after a modifier ("last Fri"); "We"/"Sat" alone are words.
_WEEKDAY_ABBR = r"(?-i:Mon|Tues|Tue|Wed|Thurs|Thur|Thu|Fri|Sat|Sun)"
_WEEKDAY_BY_ABBR = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5,
                    "sun": 6}
# Words that make an unanchored "on Saturday" or "in March" point forward instead of back.
_FUTURE_CUE = re.compile(
    r"\b(?:will|won't|gonna|going\s+to|plan(?:ning)?\s+(?:to|on)|can't\s+wait|looking\s+forward|hope\s+to|"
    r"intend|scheduled|upcoming|next|let'?s|let\s+us)\b|\w'll\b"  # "let's meet on Wednesday": a plan
    # the present tense of a fixed date is a plan: "the race is on September 29", "she arrives on June 7"
    r"|\b(?:is|are)\s+(?:on|in|due|set\s+for)\b|\b(?:starts?|begins?|arrives?|moves?|leaves?|opens?)\s+(?:on|in)\b",
    re.I)
# Past-tense cues: with neither cue, an unanchored date ("May 18", "in March") is taken as the
# occurrence nearest to the reference, since chat mentions plans as often as memories.
_PAST_CUE = re.compile(
    r"\b(?:was|were|went|did|had|got|made|took|came|saw|met|ago|last|yesterday|earlier|back\s+in|"
    r"already|used\s+to)\b|\b\w{3,}ed\b", re.I)


_SENTENCE_END = re.compile(r"[.!?]+\s+")


def _tense(text: str) -> bool | None:
    """True when the text speaks of the future, False of the past, None when it does not say."""
    if _FUTURE_CUE.search(text):
        return True
    if _PAST_CUE.search(text):
        return False
    return None


def _as_date(reference: datetime | date | None) -> date | None:
    if reference is None:
        return None
    return reference.date() if isinstance(reference, datetime) else reference


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _week_span(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _season_span(year: int, season: str) -> tuple[date, date]:
    first = _SEASON_MONTHS[season]
    start = date(year, first, 1)
    end_year, end_month = _add_months(year, first, 2)
    return start, _month_span(end_year, end_month)[1]


def _shift(day: date, unit: str, amount: int) -> date:
    """``day`` moved by ``amount`` units (negative = back); months clamp to the month's last day."""
    if unit == "day":
        return day + timedelta(days=amount)
    if unit == "week":
        return day + timedelta(weeks=amount)
    months = amount * (12 if unit == "year" else 1)
    y, m = _add_months(day.year, day.month, months)
    return date(y, m, min(day.day, calendar.monthrange(y, m)[1]))


def _unit_span(day: date, unit: str) -> tuple[date, date, str]:
    if unit == "day":
        return day, day, "day"
    if unit == "week":
        return (*_week_span(day), "week")
    if unit == "month":
        return (*_month_span(day.year, day.month), "month")
    return date(day.year, 1, 1), date(day.year, 12, 31), "year"


def _count(word: str) -> int | tuple[int, int] | None:
    word = re.sub(r"\s+", " ", word.lower()).removesuffix(" of").removeprefix("a ").strip()
    if word.isdigit():
        return int(word)
    if word in _VAGUE_COUNTS:
        return _VAGUE_COUNTS[word]
    return _NUMBERS.get(word)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _year_of_month(month: int, ref: date, future: bool, direction: str = "") -> int:
    """The year of an unanchored month name: the latest one not after ``ref`` (the next one if future)."""
    if direction == "last":
        return ref.year if month < ref.month else ref.year - 1
    if direction == "next":
        return ref.year if month > ref.month else ref.year + 1
    if direction == "this":
        return ref.year
    if future:
        return ref.year if month >= ref.month else ref.year + 1
    if future is None:  # nearest: a month up to five months ahead is this year's, else the past one
        ahead = (month - ref.month) % 12
        return ref.year + (ref.month + ahead > 12) if 0 < ahead <= 5 else (
            ref.year if month <= ref.month else ref.year - 1)
    return ref.year if month <= ref.month else ref.year - 1


def _latest_season(season: str, ref: date, *, ended: bool) -> tuple[date, date]:
    """The latest ``season`` that has ended before ``ref`` (or, if not ``ended``, started by ``ref``)."""
    for year in range(ref.year, ref.year - 3, -1):
        start, end = _season_span(year, season)
        if (end < ref) if ended else (start <= ref):
            return start, end
    return _season_span(ref.year - 1, season)  # pragma: no cover - the loop always finds one


def _next_season(season: str, ref: date) -> tuple[date, date]:
    for year in range(ref.year - 1, ref.year + 3):
        start, end = _season_span(year, season)
        if start > ref:
            return start, end
    return _season_span(ref.year + 1, season)  # pragma: no cover


# A rule's resolver gets the match, the reference day (None when unknown) and whether the sentence
# speaks of the future; it returns (start, end, granularity) or None to reject the match.
Resolved = tuple[date, date, str] | None
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date | None, bool], Resolved]]
_RULES: list[_Rule] = []


def _rule(pattern: str):
    def register(fn):
        _RULES.append((re.compile(pattern, re.I), fn))
        return fn
    return register


@_rule(r"\b(?P<e>(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2}))\b")
def _iso_date(m, ref, future):
    day = _safe_date(int(m["y"]), int(m["m"]), int(m["d"]))
    return (day, day, "day") if day else None


@_rule(r"(?<![\d/])(?P<e>(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4}|\d{2}))(?![\d/])")
def _slash_date(m, ref, future):
    year = int(m["y"]) + (2000 if len(m["y"]) == 2 else 0)
    day = _safe_date(year, int(m["m"]), int(m["d"]))  # US order, as in English chat
    return (day, day, "day") if day else None


@_rule(rf"\b(?P<e>(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}(?:\s+of)?\s+(?P<mon>{_MONTH_ANY}),?\s+(?P<y>\d{{4}}))\b")
@_rule(rf"\b(?P<e>(?P<mon>{_MONTH_ANY})\s+(?:the\s+)?(?P<d>\d{{1,2}}){_ORD},?\s+(?P<y>\d{{4}}))\b")
def _full_date(m, ref, future):
    day = _safe_date(int(m["y"]), _MONTHS[m["mon"].lower().rstrip(".")], int(m["d"]))
    return (day, day, "day") if day else None


@_rule(rf"\b(?P<e>(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}(?:\s+of)?\s+(?P<mon>{_MONTH_ANY}))(?!\w)")
@_rule(rf"\b(?P<e>(?P<mon>{_MONTH_ANY})\s+(?:the\s+)?(?P<d>\d{{1,2}}){_ORD})\b(?![,:.]?\s*\d)")
def _day_month(m, ref, future):
    if ref is None:
        return None
    day = _resolve_day(ref, _MONTHS[m["mon"].lower().rstrip(".")], int(m["d"]), future)
    return (day, day, "day") if day else None


def _resolve_day(ref: date, month: int, day: int, future: bool | None) -> date | None:
    """A day of a month said without a year: the next one for a plan, the last one for a memory,
    the nearest one when the tense does not say."""
    if future is None:
        options = [d for y in (ref.year - 1, ref.year, ref.year + 1) if (d := _safe_date(y, month, day))]
        return min(options, key=lambda d: abs((d - ref).days)) if options else None
    year = _year_of_month(month, ref, future)
    found = _safe_date(year, month, day)
    if found and not future and found > ref:
        found = _safe_date(year - 1, month, day)
    elif found and future and found < ref:
        found = _safe_date(year + 1, month, day)
    return found


# "from the 19th to the 21st of April", "19-21 April", "between the 3rd and the 5th of May", "April 19-21"
@_rule(rf"\b(?P<e>(?:from\s+|between\s+)?(?:the\s+)?(?P<d1>\d{{1,2}}){_ORD}\s*(?:-|–|to|until|till|and)\s*"
       rf"(?:the\s+)?(?P<d2>\d{{1,2}}){_ORD}(?:\s+of)?\s+(?P<mon>{_MONTH_ANY})(?:,?\s+(?P<y>\d{{4}}))?)(?!\w)")
@_rule(rf"\b(?P<e>(?:from\s+|between\s+)?(?P<mon>{_MONTH_ANY})\s+(?:the\s+)?(?P<d1>\d{{1,2}}){_ORD}\s*"
       rf"(?:-|–|to|until|till|and)\s*(?:the\s+)?(?P<d2>\d{{1,2}}){_ORD}(?:,?\s+(?P<y>\d{{4}}))?)(?!\w)")
def _day_range(m, ref, future):
    month = _MONTHS[m["mon"].lower().rstrip(".")]
    d1, d2 = int(m["d1"]), int(m["d2"])
    if d2 <= d1:
        return None
    if m["y"]:
        start = _safe_date(int(m["y"]), month, d1)
    elif ref is None:
        return None
    else:
        start = _resolve_day(ref, month, d1, future)
    end = _safe_date(start.year, month, d2) if start else None
    return (start, end, "range") if start and end else None


# "at the April meeting", "the May deadline": a month name as the modifier of a noun
@_rule(rf"\bthe\s+(?P<e>(?P<mon>{_MONTH_FULL}))\s+(?=[a-z]{{3,}}\b)(?!of\b)")
def _month_modifier(m, ref, future):
    if ref is None:
        return None
    month = _MONTHS[m["mon"].lower()]
    return (*_month_span(_year_of_month(month, ref, future), month), "month")


@_rule(rf"\b(?P<e>(?:(?P<part>early|mid|late)[\s-]+)?(?P<mon>{_MONTH_ANY}),?\s+(?:of\s+)?(?P<y>\d{{4}}))\b")
def _month_year(m, ref, future):
    start, end = _month_span(int(m["y"]), _MONTHS[m["mon"].lower().rstrip(".")])
    return _month_part(start, end, m["part"])


def _month_part(start: date, end: date, part: str | None) -> Resolved:
    part = (part or "").lower()
    if part in ("early", "beginning of", "the beginning of", "start of", "the start of"):
        return start, start.replace(day=10), "range"
    if part == "mid":
        return start.replace(day=11), start.replace(day=20), "range"
    if part in ("late", "end of", "the end of"):
        return start.replace(day=21), end, "range"
    return start, end, "month"


@_rule(rf"(?:\b(?:in|on|since|until|till|by|during|from|through|throughout|of|around)\s+)"
       rf"(?P<e>(?:(?P<part>early|mid|late|the\s+beginning\s+of|the\s+start\s+of|the\s+end\s+of)[\s-]+)?"
       rf"(?P<mon>{_MONTH_FULL}))\b(?![,.]?\s*\d)")
@_rule(rf"\b(?P<e>(?:(?P<dir>last|next|this|this\s+past|past|early|mid|late|the\s+beginning\s+of|the\s+start\s+of"
       rf"|the\s+end\s+of|beginning\s+of|end\s+of)[\s-]+)(?P<mon>{_MONTH_FULL}))\b(?![,.]?\s*\d)")
def _month_name(m, ref, future):
    if ref is None:
        return None
    month = _MONTHS[m["mon"].lower()]
    words = (m.groupdict().get("dir") or "").lower().split()
    if words[-1:] == ["past"] or words[:1] == ["last"]:
        direction = "last"
    else:
        direction = words[0] if words[:1] in (["next"], ["this"]) else ""
    part = m.groupdict().get("part") or (" ".join(words) if words and direction == "" else None)
    start, end = _month_span(_year_of_month(month, ref, future, direction), month)
    return _month_part(start, end, part)


@_rule(rf"\b(?P<e>(?:the\s+)?(?P<season>{_SEASON})\s+(?:of\s+)?(?P<y>\d{{4}}))\b")
def _season_year(m, ref, future):
    return (*_season_span(int(m["y"]), m["season"].lower()), "season")


@_rule(rf"\b(?P<e>(?P<dir>last|this|next|this\s+past|past|(?:in|over|during)\s+the)\s+(?P<season>{_SEASON}))\b")
def _season_rel(m, ref, future):
    if ref is None:
        return None
    season = m["season"].lower()
    direction = re.sub(r"\s+", " ", m["dir"].lower())
    if direction == "next" or (direction.endswith(" the") and future):
        return (*_next_season(season, ref), "season")
    if direction in ("last", "this past", "past"):
        return (*_latest_season(season, ref, ended=True), "season")
    return (*_latest_season(season, ref, ended=False), "season")


@_rule(r"(?:\b(?P<prep>in|since|during|by|until|till|of|from|through|around|back\s+in|year)\s+)?"
       r"(?<![$£€\d,.])(?P<e>(?:(?P<part>early|mid|late)[\s-]+)?(?P<y>(?:19[5-9]|20[0-3])\d))\b(?![\d%:/.,-]\d)"
       r"(?(prep)|(?!\s+[a-z]))")  # a bare year before a lowercase word is a count: "2000 followers"
def _year(m, ref, future):
    year = int(m["y"])
    part = (m["part"] or "").lower()
    if part == "early":
        return date(year, 1, 1), date(year, 4, 30), "range"
    if part == "mid":
        return date(year, 5, 1), date(year, 8, 31), "range"
    if part == "late":
        return date(year, 9, 1), date(year, 12, 31), "range"
    return date(year, 1, 1), date(year, 12, 31), "year"


@_rule(r"\b(?P<e>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow"
       r"|(?:earlier\s+|later\s+)?today|tonight|this\s+(?:morning|afternoon|evening)"
       r"|yesterday(?:\s+(?:morning|afternoon|evening|night))?|last\s+night"
       r"|tomorrow(?:\s+(?:morning|afternoon|evening|night))?)\b")
def _relative_day(m, ref, future):
    if ref is None:
        return None
    text = m["e"].lower()
    offset = -2 if "before yesterday" in text else 2 if "after tomorrow" in text else \
        -1 if ("yesterday" in text or text.startswith("last")) else 1 if "tomorrow" in text else 0
    day = ref + timedelta(days=offset)
    return day, day, "day"


@_rule(rf"\b(?P<e>(?:(?P<dir>last|this\s+past|past|this|next|this\s+coming|coming)\s+)?(?P<wd>{_WEEKDAY})"
       rf"(?:\s+(?:morning|afternoon|evening|night))?)\b(?!s)")
@_rule(rf"(?:\bon\s+|\b(?=(?:last|this|next)\s))"
       rf"(?P<e>(?:(?P<dir>last|this\s+past|this|next)\s+)?(?P<wd>{_WEEKDAY_ABBR}))(?!\w)")
def _weekday(m, ref, future):
    if ref is None:
        return None
    wd = m["wd"].lower()
    target = _WEEKDAYS[wd] if wd in _WEEKDAYS else _WEEKDAY_BY_ABBR[wd]
    direction = re.sub(r"\s+", " ", (m["dir"] or "").lower())
    forward = direction in ("next", "this", "coming", "this coming") or (not direction and future)
    if forward:
        days = (target - ref.weekday()) % 7 or (0 if direction == "this" else 7)
        day = ref + timedelta(days=days)
    else:
        day = ref - timedelta(days=(ref.weekday() - target) % 7 or 7)
    return day, day, "day"


@_rule(r"\b(?P<e>(?P<dir>last|this|next|this\s+past|this\s+coming|coming|upcoming|the\s+past|past|the\s+last"
       r"|(?:over|during|on)\s+the)\s+(?P<unit>weekend|week|month|year))\b")
def _relative_period(m, ref, future):
    if ref is None:
        return None
    unit = m["unit"].lower()
    direction = re.sub(r"\s+", " ", m["dir"].lower())
    if unit == "weekend":
        saturday = ref + timedelta(days=5 - ref.weekday())  # this week's (Mon..Sun) Saturday
        # "Where were you both mornings this weekend?": said in the past, the weekend just gone
        if direction in ("last", "this past", "the past", "past", "the last") or (
                direction in ("over the", "during the", "on the") and not future) or (
                direction == "this" and future is False):
            saturday = saturday if saturday <= ref else saturday - timedelta(days=7)
            if direction == "last" and ref.weekday() >= 5:
                saturday -= timedelta(days=7)  # said during a weekend: the one before
        elif direction == "next":
            saturday += timedelta(days=7)
        return saturday, saturday + timedelta(days=1), "range"
    if direction in ("the past", "past", "the last"):
        return _shift(ref, unit, -1), ref, "range"
    if direction in ("over the", "during the", "on the"):
        return None  # "over the week" / "on the month" are not dates
    forward = direction in ("next", "this coming", "coming", "upcoming")
    offset = -1 if direction in ("last", "this past") else 1 if forward else 0
    return _unit_span(_shift(ref, unit, offset), unit)


@_rule(r"\b(?P<e>(?P<when>earlier|later)\s+this\s+(?P<unit>week|month|year))\b")
def _earlier_later(m, ref, future):
    if ref is None:
        return None
    start, end, _ = _unit_span(ref, m["unit"].lower())
    return (start, ref, "range") if m["when"].lower() == "earlier" else (ref, end, "range")


@_rule(rf"\b(?P<e>(?P<n>{_NUM})\s+(?P<unit>{_UNIT})s?\s+(?:ago|back|earlier))\b")
def _ago(m, ref, future):
    if ref is None:
        return None
    count, unit = _count(m["n"]), m["unit"].lower()
    if count is None:
        return None
    if isinstance(count, tuple):
        return _shift(ref, unit, -count[1]), _shift(ref, unit, -count[0]), "range"
    # "two weeks ago" names a day (the session day minus fourteen), not a calendar week
    return _unit_span(_shift(ref, unit, -count), "day" if unit == "week" else unit)


@_rule(rf"(?:\b(?:have|has)|'ve|'s\s+been)\s+[^.!?]{{0,60}}?\b(?P<e>for\s+(?:the\s+(?:past|last)\s+)?(?P<n>{_NUM})"
       r"\s+(?P<unit>month|year)s?)\b")
def _perfect_for(m, ref, future):
    """'I've had them for 3 years', 'she has been painting for two years': the perfect says it began that
    long ago, so the expression dates the beginning (the year or the month it began), as "N years ago" would."""
    return _ago(m, ref, future)


@_rule(rf"\b(?P<e>(?P<n>{_NUM})\s+weekends?\s+(?P<dir>ago|back|earlier|later|from\s+now)|in\s+(?P<n2>{_NUM})\s+weekends)\b")
def _weekends_away(m, ref, future):
    """'two weekends ago': the weekend before last; 'two weekends later' / 'in two weekends': the one after next."""
    if ref is None:
        return None
    count = _count(m["n"] or m["n2"])
    if not isinstance(count, int) or count < 1:
        return None
    saturday = ref + timedelta(days=5 - ref.weekday())  # this week's (Mon..Sun) Saturday
    if (m["dir"] or "").lower() in ("ago", "back", "earlier"):
        last = saturday if saturday < ref else saturday - timedelta(days=7)  # the last weekend ended before ref
        saturday = last - timedelta(days=7 * (count - 1))
    else:
        first = saturday if saturday > ref else saturday + timedelta(days=7)
        saturday = first + timedelta(days=7 * (count - 1))
    return saturday, saturday + timedelta(days=1), "range"


@_rule(rf"\b(?P<e>in\s+(?P<n>{_NUM})\s+(?P<unit>{_UNIT})s?|(?P<n2>{_NUM})\s+(?P<unit2>{_UNIT})s?\s+from\s+now)\b")
def _from_now(m, ref, future):
    if ref is None:
        return None
    count, unit = _count(m["n"] or m["n2"]), (m["unit"] or m["unit2"]).lower()
    if count is None:
        return None
    if isinstance(count, tuple):
        return _shift(ref, unit, count[0]), _shift(ref, unit, count[1]), "range"
    return _unit_span(_shift(ref, unit, count), "day" if unit == "week" else unit)


@_rule(rf"\b(?P<e>(?:the\s+)?(?:past|last)\s+(?P<n>{_NUM})\s+(?P<unit>{_UNIT})s)\b")
def _past_n(m, ref, future):
    if ref is None:
        return None
    count = _count(m["n"])
    if count is None:
        return None
    most = count[1] if isinstance(count, tuple) else count
    return _shift(ref, m["unit"].lower(), -most), ref, "range"


@_rule(r"\b(?P<e>recently|lately|these\s+days|not\s+(?:too\s+|so\s+)?long\s+ago|the\s+other\s+day"
       r"|a\s+(?:little\s+)?while\s+(?:ago|back)|(?:a\s+few\s+|many\s+|several\s+)?years\s+ago)\b")
def _vague(m, ref, future):
    if ref is None:
        return None
    text = re.sub(r"\s+", " ", m["e"].lower())
    if text == "the other day":
        return ref - timedelta(days=7), ref - timedelta(days=1), "range"
    if "while" in text:
        return ref - timedelta(days=180), ref - timedelta(days=30), "range"
    if "years" in text:
        return _shift(ref, "year", -10), _shift(ref, "year", -2), "range"
    return ref - timedelta(days=30), ref, "range"  # recently, lately, these days, not long ago


_FOR_BEFORE = re.compile(r"\bfor\s+$", re.I)
# A start with no end said ("8% from March", "a PhD place starting in October") lies ahead of the talk,
# whatever the tense of the sentence's verb ("they put the price up ... from March").
_START_BEFORE = re.compile(r"\b(?:from|starting|beginning|effective|as of)\s+(?:in\s+|on\s+|from\s+)?$", re.I)
_RANGE_AFTER = re.compile(r"^\s*(?:to|until|till|through|thru|and)\b|^\s*[-–]", re.I)


def find_time_expressions(text: str, reference: datetime | date | None,
                          tense_at: Callable[[int], bool | None] | None = None) -> list[TimeSpan]:
    """Every temporal expression in ``text``, resolved against ``reference`` and ordered by position.

    Without a reference only self-contained forms ("8 May 2023", "summer 2021") are returned.
    Overlapping matches keep the longest ("8 May 2023", not "May 2023").

    ``tense_at(char_offset)`` (optional) says whether the clause around an expression speaks of the
    future (True), the past (False) or does not say (None): a parser reads "I fly out on 14 May and
    came back on 21 May" clause by clause. Without it, or when it says None, the sentence's tense
    words decide. A date booked "for" ("a table for Friday", "for the 15th of November") lies ahead.
    """
    if not text:
        return []
    ref = _as_date(reference)
    # Tense is read per sentence: "I signed a lease! I move on May 18." plans a move, it does not recall one.
    bounds = [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text) + 1]
    tenses = [_tense(text[a:b]) for a, b in zip(bounds, bounds[1:])]
    found: list[TimeSpan] = []
    for pattern, resolve in _RULES:
        for match in pattern.finditer(text):
            s0 = match.start("e")
            future = tense_at(s0) if tense_at is not None else None
            if future is None:
                future = tenses[bisect.bisect_right(bounds, match.start()) - 1]
            if _FOR_BEFORE.search(text[max(0, s0 - 5):s0]) or (
                    _START_BEFORE.search(text[max(0, s0 - 20):s0]) and not _RANGE_AFTER.search(text[match.end():])):
                future = True
            resolved = resolve(match, ref, future)
            if resolved is None or resolved[0] is None:
                continue
            start, end, granularity = resolved
            s, e = match.span("e")
            found.append(TimeSpan(text[s:e], start, end, granularity, s, e))
    found.sort(key=lambda t: (t.char_start, -(t.char_end - t.char_start)))
    kept: list[TimeSpan] = []
    for span in sorted(found, key=lambda t: -(t.char_end - t.char_start)):
        if all(span.char_end <= k.char_start or span.char_start >= k.char_end for k in kept):
            kept.append(span)
    return sorted(kept, key=lambda t: t.char_start)


_LOWER_MONTH = re.compile(r"\b(?:" + _MONTH_FULL[5:-1].lower() + r")\b", re.I)
_WEEKDAY_WORD = re.compile(r"^\s*(mon|tue|tues|wed|we|thu|thur|thurs|fri|sat|sun)\.?\s*$", re.I)
_DATEPARSER_PERIODS = {"day": "day", "week": "week", "month": "month", "year": "year"}


def resolve_time_expression(expr: str, reference: datetime | date | None) -> TimeSpan | None:
    """One expression (e.g. an event's ``when_text`` or a query's phrase) -> its span, or None.

    The grammar of ``find_time_expressions`` first; dateparser only for other absolute forms.
    """
    if not expr or not expr.strip() or len(expr) > 200:
        return None
    spans = find_time_expressions(expr, reference)
    if not spans:
        # An expression given on its own is temporal by assumption: a bare or lowercase month or
        # weekday ("march", "Saturday" taken from "on Saturday") is read as one.
        titled = _LOWER_MONTH.sub(lambda m: m[0].capitalize(), expr)
        prefix = "in " if _LOWER_MONTH.fullmatch(expr.strip()) else ""
        spans = [replace(s, char_start=s.char_start - len(prefix), char_end=s.char_end - len(prefix))
                 for s in find_time_expressions(prefix + titled, reference) if s.char_start >= len(prefix)]
        spans = [replace(s, text=expr[s.char_start:s.char_end]) for s in spans]
    if spans:
        return max(spans, key=lambda t: t.char_end - t.char_start)
    # dateparser would read a bare "we"/"sat" as a weekday and any lowercase "may" as the month.
    if _WEEKDAY_WORD.match(expr) or not re.search(r"\d", expr):
        return None
    from dateparser.date import DateDataParser

    settings = dict(_DATEPARSER_SETTINGS, PREFER_DATES_FROM="past")
    ref = _as_date(reference)
    if ref is not None:
        settings["RELATIVE_BASE"] = datetime(ref.year, ref.month, ref.day)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = DateDataParser(languages=["en"], settings=settings).get_date_data(expr.strip())
    if data is None or data.date_obj is None:
        return None
    day = data.date_obj.date()
    period = _DATEPARSER_PERIODS.get(data.period or "day", "day")
    start, end, granularity = _unit_span(day, period) if period != "day" else (day, day, "day")
    stripped = expr.strip()
    offset = expr.find(stripped)
    return TimeSpan(stripped, start, end, granularity, offset, offset + len(stripped))


def with_offset(span: TimeSpan, offset: int) -> TimeSpan:
    """The same span with character positions shifted by ``offset`` (a sentence inside a longer text)."""
    return replace(span, char_start=span.char_start + offset, char_end=span.char_end + offset)


def spell_span(span: TimeSpan) -> str:
    """A resolved span in words, for a sentence: "on 7 May 2023", "in May 2023", "in 2022",
    "between 1 and 7 May 2023". ``SPELLED_DATE`` finds these phrases again (verification skips them)."""
    def day(d: date, year: bool = True) -> str:
        return f"{d.day} {calendar.month_name[d.month]}" + (f" {d.year}" if year else "")

    if span.granularity == "day" or span.start == span.end:
        return f"on {day(span.start)}"
    if span.granularity == "month":
        return f"in {calendar.month_name[span.start.month]} {span.start.year}"
    if span.granularity == "year":
        return f"in {span.start.year}"
    if span.start.year == span.end.year and span.start.month == span.end.month:
        return f"between {span.start.day} and {day(span.end)}"
    if span.start.year == span.end.year:
        return f"between {day(span.start, False)} and {day(span.end)}"
    return f"between {day(span.start)} and {day(span.end)}"


_MONTH_WORD = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
SPELLED_DATE = re.compile(
    rf"\b(?:on \d{{1,2}} {_MONTH_WORD} \d{{4}}|in {_MONTH_WORD} \d{{4}}|in \d{{4}}"
    rf"|between \d{{1,2}}(?: {_MONTH_WORD}(?: \d{{4}})?)? and \d{{1,2}} {_MONTH_WORD} \d{{4}})\b")

def human_date(iso_date: str | None, granularity: str = "day") -> str:
    """'2023-05-07' -> '7 May 2023' (month -> 'May 2023', year -> '2023'); the input back when unparseable."""
    if not iso_date:
        return ""
    try:
        d = date.fromisoformat(iso_date[:10])
    except ValueError:
        return iso_date
    if granularity == "year":
        return str(d.year)
    if granularity in ("month", "season"):
        return d.strftime("%B %Y")
    return f"{d.day} {d.strftime('%B %Y')}"
