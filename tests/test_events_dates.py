"""Event dates of the classic extractor: a clause that says when but not what dates the next sentence's event."""

from __future__ import annotations

import pytest

from gravity_engine.conversation import Utterance
from gravity_engine.extract.base import Batch
from gravity_engine.extract.classic.events import extract_events
from gravity_engine.extract.classic.nlp import parse


def _events(text: str, when: str = "2022-10-09T10:58"):
    utt = Utterance(id="D1:1", speaker="Nate", text=text, session_id="s1")
    batch = Batch(index=0, session_id="s1", session_time=when, utterances=[utt], speakers=["Nate", "Joanna"])
    return extract_events(batch, parse([text]))


@pytest.mark.parametrize("text, words, start, end", [
    ("Something exciting happened last Friday. I went to a game convention and met new people.", "game convention",
     "2022-10-07", "2022-10-07"),
    ("Last night was amazing! We celebrated my daughter's birthday with a concert.", "birthday", "2022-10-08",
     "2022-10-08"),
    ("I had a quiet weekend after we went camping with my fam two weekends ago.", "camping", "2022-10-01",
     "2022-10-02"),
], ids=["something-happened", "last-night-was", "two-weekends-ago"])
def test_the_event_that_says_what_happened_carries_the_date(text, words, start, end):
    event = next(e for e in _events(text) if words in e.what)
    assert (event.date_start, event.date_end) == (start, end)


def test_a_placeholder_clause_with_nothing_after_it_stays_an_event():
    events = _events("It was a great day yesterday.")
    assert [(e.date_start, e.when_text) for e in events] == [("2022-10-08", "yesterday")]
