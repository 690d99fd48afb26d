"""The coverage rule reads dates by meaning: a gold date written one way is found written another way.

The rule is shared by ``measure``, ``evaluate`` and the playground's badges (``coverage.context_covers``).
"""

from __future__ import annotations

import pytest

from gravity_engine.eval.coverage import context_covers, gold_parts


@pytest.mark.parametrize("gold, context", [
    ("12 March", "- [2024-03-12] Ana: the exhibition opened"),
    ("7 May 2023", "Caroline went to the support group on May 7, 2023"),
    ("May 7, 2023", "- 7 May 2023: Caroline went to the support group"),
    ("August 15, 2023", "- 15 August 2023: Melanie ran a charity race"),
    ("15 August, 2023", "event on 2023-08-15"),
    ("The week before 9 June 2023", "- 2 June 2023 to 8 June 2023: Jon lost his job"),
    ("the week before 9 June 2023", "- 5 June 2023: Jon lost his job"),
    ("The weekend before 17 July 2023", "- 15 July 2023: Melanie camped by the lake"),
    ("The sunday before 25 May 2023", "- 21 May 2023: a picnic"),
    ("The day after 3 March 2023", "on 4 March 2023 she flew home"),
    ("May 2023", "- 20 May 2023: the adoption interview"),
    ("in 2022", "she painted it on 3 April 2022"),
    ("On 7th May 2023", "- 7 May 2023: support group"),
], ids=["day-month-vs-iso", "us-order", "us-order-gold", "us-order-comma", "comma-vs-iso", "week-before-range",
        "week-before-day", "weekend-before", "weekday-before", "day-after", "month-holds-day", "year-holds-day",
        "ordinal"])
def test_paraphrased_dates_are_covered(gold, context):
    assert context_covers(gold, context) is True


@pytest.mark.parametrize("gold, context", [
    ("12 March", "- [2024-03-13] Ana: the exhibition opened"),
    ("7 May 2023", "- 7 May 2022: a different year"),
    ("7 May 2023", "- May 2023: too coarse to give the day"),
    ("12 March 2024", "- 12 March: no year said"),
    ("The week before 9 June 2023", "- 9 June 2023: the day itself is not the week before"),
    ("The weekend before 17 July 2023", "- 13 July 2023: a Thursday"),
    ("7 May 2023", "- 7 May\n2023"),
    ("Paris on 7 May 2023", "- 7 May 2023: she flew to Rome"),
    ("The week before 3 July 2023", "- [27 June 2023, 10:37] Melanie: it was an awesome time"),
], ids=["wrong-day", "wrong-year", "coarser", "no-year-in-context", "week-before-excludes-day", "weekend-not-weekday",
        "split-lines", "words-beside-date-still-literal", "a-timestamp-is-not-an-answer"])
def test_other_dates_are_not_covered(gold, context):
    assert context_covers(gold, context) is False


def test_a_date_is_one_gold_part():
    assert gold_parts("August 15, 2023") == ["august 15 2023"]
    assert gold_parts("15 August, 2023") == ["15 august 2023"]
    assert gold_parts("February, 2023") == ["february 2023"]
    assert gold_parts("Psychology, counseling; art and music") == ["psychology", "counseling", "art", "music"]


def test_a_number_with_thousands_is_one_gold_part():
    assert gold_parts("30,000 vs 12,000") == ["30 000", "12 000"]
    assert gold_parts("1,5, or 7") == ["1", "5", "7"]
    assert gold_parts("$2,500, paid in May") == ["2 500", "paid in may"]
    assert context_covers("30,000 vs 12,000", "- 30,000 chest X-rays\n- about 12,000 labelled images") is True
    assert context_covers("30,000 vs 12,000", "- 30 people, 000 left\n- 12,000 images") is False


def test_several_dates_each_need_a_match():
    context = "- 7 May 2023: group\n- 2023-06-09: parade"
    assert context_covers("7 May 2023 and 9 June 2023", context) is True
    assert context_covers("7 May 2023 and 10 June 2023", context) is False
