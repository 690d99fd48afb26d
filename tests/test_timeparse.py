"""Temporal expressions: finding them in text and resolving them against a session date."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from gravity_engine.timeparse import TimeSpan, find_time_expressions, resolve_time_expression

MON_8_MAY = datetime(2023, 5, 8, 13, 56)  # LoCoMo conv-26 session 1, a Monday

# expression, expected (start, end, granularity); all resolved against Monday 8 May 2023.
CASES = [
    ("yesterday", "2023-05-07", "2023-05-07", "day"),
    ("today", "2023-05-08", "2023-05-08", "day"),
    ("tonight", "2023-05-08", "2023-05-08", "day"),
    ("this morning", "2023-05-08", "2023-05-08", "day"),
    ("last night", "2023-05-07", "2023-05-07", "day"),
    ("the day before yesterday", "2023-05-06", "2023-05-06", "day"),
    ("tomorrow", "2023-05-09", "2023-05-09", "day"),
    ("8 May 2023", "2023-05-08", "2023-05-08", "day"),
    ("the 3rd of March, 2021", "2021-03-03", "2021-03-03", "day"),
    ("May 8th", "2023-05-08", "2023-05-08", "day"),
    ("April 20", "2023-04-20", "2023-04-20", "day"),
    ("2023-05-08", "2023-05-08", "2023-05-08", "day"),
    ("Mar 3, 2021", "2021-03-03", "2021-03-03", "day"),
    ("May 2023", "2023-05-01", "2023-05-31", "month"),
    ("2022", "2022-01-01", "2022-12-31", "year"),
    ("summer 2021", "2021-06-01", "2021-08-31", "season"),
    ("last Friday", "2023-05-05", "2023-05-05", "day"),
    ("on Saturday", "2023-05-06", "2023-05-06", "day"),
    ("next Friday", "2023-05-12", "2023-05-12", "day"),
    ("last week", "2023-05-01", "2023-05-07", "week"),
    ("this week", "2023-05-08", "2023-05-14", "week"),
    ("next month", "2023-06-01", "2023-06-30", "month"),
    ("last month", "2023-04-01", "2023-04-30", "month"),
    ("two weeks ago", "2023-04-24", "2023-04-24", "day"),  # a day: the session day minus fourteen
    ("5 days ago", "2023-05-03", "2023-05-03", "day"),
    ("a few days ago", "2023-05-03", "2023-05-06", "range"),
    ("3 years ago", "2020-01-01", "2020-12-31", "year"),
    ("last year", "2022-01-01", "2022-12-31", "year"),
    ("this year", "2023-01-01", "2023-12-31", "year"),
    ("last summer", "2022-06-01", "2022-08-31", "season"),
    ("next weekend", "2023-05-20", "2023-05-21", "range"),
    ("this weekend", "2023-05-13", "2023-05-14", "range"),
    ("last weekend", "2023-05-06", "2023-05-07", "range"),
    ("over the weekend", "2023-05-06", "2023-05-07", "range"),
    ("in March", "2023-03-01", "2023-03-31", "month"),
    ("last May", "2022-05-01", "2022-05-31", "month"),
    # no tense given: the nearest early June (a month ahead of 8 May), not the one eleven months back
    ("early June", "2023-06-01", "2023-06-10", "range"),
    ("in two weeks", "2023-05-22", "2023-05-22", "day"),
    ("the past three months", "2023-02-08", "2023-05-08", "range"),
    ("earlier this year", "2023-01-01", "2023-05-08", "range"),
    ("recently", "2023-04-08", "2023-05-08", "range"),
    ("lately", "2023-04-08", "2023-05-08", "range"),
    ("the other day", "2023-05-01", "2023-05-07", "range"),
    ("a while ago", "2022-11-09", "2023-04-08", "range"),
]


@pytest.mark.parametrize(("expr", "start", "end", "granularity"), CASES, ids=[c[0] for c in CASES])
def test_resolves_against_session_date(expr, start, end, granularity):
    span = resolve_time_expression(expr, MON_8_MAY)
    assert span is not None, expr
    assert (span.start.isoformat(), span.end.isoformat(), span.granularity) == (start, end, granularity)


def test_yesterday_in_a_sentence_keeps_text_and_position():
    text = "I went to a LGBTQ support group yesterday and it was so powerful."
    [span] = find_time_expressions(text, date(2023, 5, 8))
    assert span == TimeSpan("yesterday", date(2023, 5, 7), date(2023, 5, 7), "day", 32, 41)
    assert text[span.char_start:span.char_end] == "yesterday"


@pytest.mark.parametrize("text", [
    "We went to the beach together.",
    "you may come over whenever you like",
    "May I ask what you painted?",
    "I march to my own drum.",
    "I have 2000 followers now",
    "We love Fridays",  # habitual, not one date
    "Jan said hi",
], ids=["We-is-not-Wednesday", "may-the-verb", "May-I", "march-the-verb", "a-count", "plural-weekday", "Jan-a-name"])
def test_words_that_are_not_dates(text):
    assert find_time_expressions(text, MON_8_MAY) == []


def test_longest_match_wins_and_several_are_found_in_order():
    spans = find_time_expressions("On 8 May 2023 I said that last week was busy, and next month too.", MON_8_MAY)
    assert [s.text for s in spans] == ["8 May 2023", "last week", "next month"]


def test_future_cue_points_weekdays_and_months_forward():
    [saturday] = find_time_expressions("I will see her on Saturday", MON_8_MAY)
    assert saturday.start == date(2023, 5, 13)
    [june] = find_time_expressions("We're going to Rome in June", MON_8_MAY)
    assert (june.start, june.end) == (date(2023, 6, 1), date(2023, 6, 30))


def test_without_reference_only_absolute_forms_resolve():
    spans = find_time_expressions("Yesterday, on 8 May 2023, in summer 2021", None)
    assert [s.text for s in spans] == ["8 May 2023", "summer 2021"]
    assert resolve_time_expression("yesterday", None) is None


def test_dateparser_fallback_for_other_absolute_forms_and_rejects_noise():
    span = resolve_time_expression("03.05.2021", MON_8_MAY)
    assert span is not None and span.granularity == "day" and span.start.year == 2021
    assert resolve_time_expression("We", MON_8_MAY) is None
    assert resolve_time_expression("you may come", MON_8_MAY) is None
    assert resolve_time_expression("", MON_8_MAY) is None


def test_winter_spans_the_new_year():
    span = resolve_time_expression("last winter", date(2023, 5, 8))
    assert (span.start, span.end) == (date(2022, 12, 1), date(2023, 2, 28))


def test_an_expression_given_alone_may_be_a_bare_or_lowercase_month():
    # when_text "March" (from "in March") and a typed query "in may" must re-resolve the same way.
    assert resolve_time_expression("March", MON_8_MAY).start == date(2023, 3, 1)
    span = resolve_time_expression("what happened in may", MON_8_MAY)
    assert (span.text, span.start, span.granularity) == ("may", date(2023, 5, 1), "month")


@pytest.mark.parametrize(("text", "expected"), [
    ("The deadline is May 3.", "2024-05-03"),
    ("I move on May 18.", "2024-05-18"),
    ("I went there on March 30.", "2024-03-30"),
    ("On December 20 I met her.", "2023-12-20"),
    ("We visited in May.", "2023-05-01"),
    ("See you in May!", "2024-05-01"),
], ids=["plan-no-tense", "present-for-future", "past-verb", "far-month-is-past", "past-month", "future-month"])
def test_unanchored_dates_follow_tense_or_nearest(text, expected):
    [span] = find_time_expressions(text, datetime(2024, 4, 20, 10))
    assert span.start.isoformat() == expected


def test_tense_is_read_per_sentence():
    [span] = find_time_expressions("Sent. Also, I signed a lease in Ballard! I move on May 18.", datetime(2024, 4, 24, 19))
    assert span.start.isoformat() == "2024-05-18"


@pytest.mark.parametrize("text", ["The race is on September 29.", "She arrives on September 29 and stays."])
def test_present_tense_of_a_fixed_date_is_a_plan(text):
    [span] = find_time_expressions(text, datetime(2024, 3, 12, 9))
    assert span.start.isoformat() == "2024-09-29"


@pytest.mark.parametrize(("text", "start", "end"), [
    ("The open days run from the 4th to the 6th of October.", "2024-10-04", "2024-10-06"),
    ("We were away 12-14 March.", "2024-03-12", "2024-03-14"),
    ("The fair is on between June 2 and 5.", "2024-06-02", "2024-06-05"),
    ("Bring the cake to the June picnic.", "2024-06-01", "2024-06-30"),
    ("She booked a table for the 9th of May.", "2024-05-09", "2024-05-09"),
], ids=["from-to-of", "dash-range", "month-first-range", "month-as-modifier", "booked-for-is-ahead"])
def test_day_ranges_month_modifiers_and_bookings(text, start, end):
    [span] = find_time_expressions(text, datetime(2024, 4, 20, 10))
    assert (span.start.isoformat(), span.end.isoformat()) == (start, end)


@pytest.mark.parametrize(("text", "start"), [
    ("Hollins Mill put their flour price up again, 8% from March.", "2025-03-01"),
    ("They offered her a place in the lab, starting in October.", "2025-10-01"),
    ("The new rota was agreed, effective from the 3rd of March.", "2025-03-03"),
    ("I worked there from March to May.", "2024-03-01"),  # a range said in the past stays past
    ("I went to Spain in March.", "2024-03-01"),
], ids=["from-month", "starting-in", "effective-from", "from-to-past", "plain-past"])
def test_a_start_with_no_end_lies_ahead_whatever_the_verb(text, start):
    spans = find_time_expressions(text, datetime(2025, 2, 10, 7))
    assert spans[0].start.isoformat() == start


def test_a_tense_reader_decides_per_clause():
    text = "I fly out on 14 May and we came back on 21 May."
    cut = text.index(" and ")
    spans = find_time_expressions(text, datetime(2024, 9, 10), tense_at=lambda at: at < cut)
    assert [s.start.isoformat() for s in spans] == ["2025-05-14", "2024-05-21"]


def test_weekends_counted_from_the_session_and_lets_plans_ahead():
    from datetime import date

    from gravity_engine.timeparse import find_time_expressions as spans

    monday = date(2023, 7, 17)
    (ago,) = spans("we went camping two weekends ago", monday)
    assert (ago.start, ago.end) == (date(2023, 7, 8), date(2023, 7, 9))
    (later,) = spans("a party two weekends later", date(2022, 6, 3))
    assert (later.start, later.end) == (date(2022, 6, 11), date(2022, 6, 12))
    (plan,) = spans("Let's meet them on Wednesday", date(2025, 3, 14))
    assert plan.start == date(2025, 3, 19)
    (past,) = spans("I met them on Wednesday", date(2025, 3, 14))
    assert past.start == date(2025, 3, 12)


@pytest.mark.parametrize("text, start, end", [
    ("I've had them for 3 years now", "2019-01-01", "2019-12-31"),
    ("She has been painting for two years.", "2020-01-01", "2020-12-31"),
    ("We've been together for a year", "2021-01-01", "2021-12-31"),
    ("He's been with us for six months", "2022-04-01", "2022-04-30"),
], ids=["have-had", "has-been-ing", "a-year", "months"])
def test_a_perfect_with_a_duration_dates_its_beginning(text, start, end):
    spans = find_time_expressions(text, date(2022, 10, 9))
    assert [(s.start.isoformat(), s.end.isoformat()) for s in spans] == [(start, end)]


@pytest.mark.parametrize("text", ["I lived there for 3 years.", "I'll be away for two years", "a meeting for 2 hours"])
def test_a_duration_without_the_perfect_dates_nothing(text):
    assert find_time_expressions(text, date(2022, 10, 9)) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Where were you at six both mornings this weekend?", "2024-05-18"),  # said in the past: the weekend just gone
    ("Are you free this weekend?", "2024-05-25"),  # no past: the coming one
])
def test_this_weekend_said_in_the_past_is_the_one_just_gone(text, expected):
    [span] = find_time_expressions(text, datetime(2024, 5, 21, 9))  # a Tuesday
    assert span.start.isoformat() == expected
