"""Temporal grounding reads the gold period by meaning, and the diagnostic names the stage that lost a question."""

from __future__ import annotations

from datetime import date

from gravity_engine.anchors import Event
from gravity_engine.eval.grounding import (GROUNDED, NO_EVENT, NOT_PACKED, NOT_SELECTED, WRONG_DATE, grounded,
                                          temporal_stage)
from gravity_engine.eval.summary import MeasureRow, format_stages, stage_counts

REF = date(2023, 8, 1)


def _ev(i: int, start: str, end: str | None = None, granularity: str = "day", sources=("D9:9",)) -> Event:
    return Event(id=f"ev-{i}", what=f"event {i}", date_start=start, date_end=end or start, granularity=granularity,
                 source_ids=list(sources))


def test_a_relative_gold_names_the_days_it_means():
    before = _ev(1, "2023-06-05")
    on_the_day = _ev(2, "2023-06-09")
    assert grounded("The week before 9 June 2023", REF, [before]) is True
    assert grounded("The week before 9 June 2023", REF, [on_the_day]) is False
    assert grounded("The Friday before 15 July 2023", REF, [_ev(3, "2023-07-14")]) is True
    assert grounded("The weekend before 17 July 2023", REF, [_ev(4, "2023-07-15", "2023-07-16", "range")]) is True


def test_plain_golds_and_bounds():
    assert grounded("7 May 2023", REF, [_ev(1, "2023-05-07")]) is True
    assert grounded("7 May 2023", REF, [_ev(1, "2023-01-01", "2023-12-31", "year")]) is False  # far too wide
    assert grounded("7 May 2023", REF, [_ev(1, "2023-05-07", granularity="before")]) is False  # a bound
    assert grounded("2022", REF, [_ev(1, "2022-03-01", "2022-03-31", "month")]) is True
    assert grounded("Caroline's birthday", REF, [_ev(1, "2023-05-07")]) is None


def test_each_stage_is_the_first_that_fails():
    good, wrong = _ev(1, "2023-05-07"), _ev(2, "2023-05-20", sources=("D1:3",))
    gold, ev = "7 May 2023", ["D1:3"]
    assert temporal_stage(gold, REF, ev, [good, wrong], [good], [good]) == GROUNDED
    assert temporal_stage(gold, REF, ev, [good, wrong], [good, wrong], [wrong]) == NOT_PACKED
    assert temporal_stage(gold, REF, ev, [good, wrong], [wrong], [wrong]) == NOT_SELECTED
    assert temporal_stage(gold, REF, ev, [wrong], [wrong], [wrong]) == WRONG_DATE
    assert temporal_stage(gold, REF, ["D4:4"], [wrong], [], []) == NO_EVENT
    assert temporal_stage("her sister", REF, ev, [good], [good], [good]) is None


def test_stage_counts_and_line():
    base = dict(conversation="c", question_id="q", category="2", category_label="2 temporal", question="When?",
                gold="7 May 2023", n_evidence=1, recall_host=None, recall_expanded=None, covered_host=False,
                covered_gravity=False, host_tokens=0, gravity_tokens=0, anchor_tokens=0, n_expansions=0)
    rows = [MeasureRow(**base, temporal_stage=s) for s in (GROUNDED, GROUNDED, NO_EVENT, None)]
    counts = stage_counts(rows)
    assert counts[GROUNDED] == 2 and counts[NO_EVENT] == 1 and sum(counts.values()) == 3
    assert "66.7%" in format_stages(counts, "all")


def test_counted_and_week_of_golds():
    assert grounded("two weekends before 17 July 2023", REF, [_ev(1, "2023-07-08", "2023-07-09", "range")]) is True
    assert grounded("two weekends before 17 July 2023", REF, [_ev(1, "2023-07-15", "2023-07-16", "range")]) is False
    assert grounded("Two weeks before 11 August 2023", REF, [_ev(1, "2023-07-28")]) is True
    assert grounded("The week of 23 August 2023", REF, [_ev(1, "2023-08-21", "2023-08-27", "week")]) is True
    assert grounded("The week of 23 August 2023", REF, [_ev(1, "2023-08-30")]) is False


def test_first_and_last_week_of_a_month():
    assert grounded("first week of May 2023", REF, [_ev(1, "2023-05-01", "2023-05-07", "week")]) is True
    assert grounded("first week of May 2023", REF, [_ev(1, "2023-05-15")]) is False
    assert grounded("last week of August 2023", REF, [_ev(1, "2023-08-21", "2023-08-27", "week")]) is True
