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


def test_guess_what_i_did_dates_every_event_of_the_answer():
    events = _events("Guess what I did this week? I finally quit my job - I signed up for a pottery course!")
    assert not any(e.what.lower().startswith("what") for e in events)  # the question is no event of its own
    dated = {e.what: (e.date_start, e.date_end) for e in events}
    assert dated and all(span == ("2022-10-03", "2022-10-09") for span in dated.values()), dated


def test_you_know_what_happened_dates_the_next_sentence():
    events = _events("You know what happened last week? My sister moved to Berlin.")
    assert [(e.date_start, e.date_end) for e in events if "Berlin" in e.what] == [("2022-09-26", "2022-10-02")]


@pytest.mark.parametrize("text, words, start, end", [
    ("Big news - I just got accepted for a design internship!", "internship", "2022-10-03", "2022-10-09"),
    ("We got married in June.", "married", "2022-06-01", "2022-06-30"),
    ("I've been busy with the shop and just teamed up with a local printer.", "printer", "2022-10-03", "2022-10-09"),
    # the subject dropped and the past form tagged a name: "Kayaks" is no verb in the present
    ("Runs the whole show now. Bought Ashdown Bay Kayaks off his old boss in January.", "Kayaks", "2022-01-01",
     "2022-01-31"),
], ids=["got-accepted", "got-married-past-june", "bare-participle", "dropped-subject-past"])
def test_passive_and_misread_past_clauses_are_past_events(text, words, start, end):
    event = next(e for e in _events(text) if words in e.what)
    assert (event.date_start, event.date_end) == (start, end)


def _dialogue(turns: list[tuple[str, str]], when: str = "2024-08-05T21:00"):
    utts = [Utterance(id=f"D1:{k + 1}", speaker=who, text=text, session_id="s1") for k, (who, text) in enumerate(turns)]
    batch = Batch(index=0, session_id="s1", session_time=when, utterances=utts, speakers=["Ana", "Ben"])
    return extract_events(batch, parse([u.text for u in utts]))


@pytest.mark.parametrize("question, answer, what, start, end", [
    ("Wonderful news! When do you get the keys?", "On the 16th of August. The removal van is booked too.",
     "Ben gets the keys", "2024-08-16", "2024-08-16"),
    ("Brilliant! When did you ask her?", "Saturday, over coffee.", "Ben asked her", "2024-08-03", "2024-08-03"),
    ("So when will you start the new job?", "Next Monday!", "Ben will start the new job", "2024-08-12", "2024-08-12"),
    ("When did Caroline adopt her dog?", "Last June, I think.", "Caroline adopted her dog", "2024-06-01",
     "2024-06-30"),
], ids=["do-you-plan", "did-you-past", "will-you", "did-a-third-person"])
def test_an_answer_that_opens_with_a_date_dates_the_question(question, answer, what, start, end):
    events = _dialogue([("Ana", question), ("Ben", answer)])
    event = next(e for e in events if e.what == what)
    assert (event.date_start, event.date_end) == (start, end)
    assert event.source_ids == ["D1:1", "D1:2"]  # the question says what, the answer when


@pytest.mark.parametrize("turns", [
    [("Ana", "When does it launch?"), ("Ben", "In October, if all goes well.")],  # "it": nobody to name
    [("Ana", "When you get there, will you call me?"), ("Ben", "Tomorrow, yes.")],  # asks something else
    [("Ana", "When did you go to the lake?"), ("Ben", "I loved the lake. We went last weekend.")],  # no date first
    [("Ana", "When did you ask her?"), ("Ana", "Saturday, I guess.")],  # the asker goes on talking
], ids=["it", "when-clause", "date-not-first", "same-speaker"])
def test_no_question_event_without_a_named_doer_a_when_question_and_a_date_first(turns):
    assert not any(len(e.source_ids) == 2 for e in _dialogue(turns))


def test_an_answer_that_dates_its_own_clause_adds_no_copy_of_the_question():
    events = _dialogue([("Ana", "When did you go to the lake?"), ("Ben", "Last weekend I went to the lake with my kids.")])
    assert [e.source_ids for e in events] == [["D1:2"]]


@pytest.mark.parametrize("turns, what, people", [
    ([("Ana", "How did the pitch go with Lena Ortiz?"), ("Ben", "Great! She signed off on it last Friday.")],
     "Lena Ortiz signed off on it last Friday", ["Lena Ortiz"]),  # named a turn before
    ([("Ana", "My sister Anna called. She moved to Chicago last year.")], "Anna moved to Chicago last year",
     ["Anna"]),  # named before it in the same turn
], ids=["turn-before", "same-turn"])
def test_she_as_an_events_doer_is_the_person_named_before(turns, what, people):
    event = next(e for e in _dialogue(turns) if e.what == what)
    assert event.participants == people


@pytest.mark.parametrize("turns", [
    [("Ana", "She told me she quit her job yesterday.")],  # nobody named: stays as said
    [("Ana", "Ben, do you remember Caroline?"), ("Ben", "Sure."), ("Ana", "Yes."), ("Ben", "Okay."),
     ("Ana", "Well. She moved to Paris last week.")],  # named too long ago
    [("Ana", "I met Ben for lunch. He got a new job last week.")],  # a speaker is "you", never "he"
], ids=["nobody-named", "too-long-ago", "speaker"])
def test_she_stays_she_without_a_recent_third_person(turns):
    events = _dialogue(turns)
    assert events and all(e.what.split()[0] in ("She", "He") for e in events if e.when_text), [e.what for e in events]


def test_a_name_after_the_person_leaves_he_unresolved():
    turns = [("Ana", "Marco added the tables. How's Biscuit doing, by the way?"),
             ("Ben", "Fully back to his old self. He ran four miles with me this morning.")]
    assert all(not e.what.startswith("Marco") for e in _dialogue(turns))


def test_a_capitalised_word_opening_a_sentence_is_no_person_to_point_at():
    turns = [("Ana", "Beginner's luck runs in the family, apparently."), ("Ben", "She flew back to Chicago this morning.")]
    assert [e.what for e in _dialogue(turns)] == ["She flew back to Chicago this morning"]


def test_she_and_i_keeps_the_speaker_among_the_participants():
    turns = [("Ana", "Have you met Lena Ortiz?"), ("Ben", "Yes! She and I went climbing last Saturday.")]
    event = next(e for e in _dialogue(turns) if "climbing" in e.what)
    assert (event.what, event.participants) == ("Lena Ortiz and Ben went climbing last Saturday", ["Lena Ortiz", "Ben"])


def test_a_name_with_its_role_in_apposition_is_the_doer_when_the_verb_hangs_on_the_role():
    events = _events("The new encoder beats the old one. Dr. Aisha Bello, our clinical advisor, signed off on it on "
                     "Friday.", when="2024-06-04T20:08")
    event = next(e for e in events if "signed off" in e.what)
    assert (event.what, event.date_start) == ("Dr. Aisha Bello signed off on the new encoder on Friday", "2024-05-31")


@pytest.mark.parametrize("text, what, start, end", [
    ("Let's paint the fence next Saturday!", "Nate and Joanna will paint the fence next Saturday", "2022-10-15",
     "2022-10-15"),
    ("Let's do it next month when the weather is nicer.", "Nate and Joanna will do it next month when the weather is "
     "nicer", "2022-11-01", "2022-11-30"),
])
def test_lets_is_a_plan_of_both_speakers(text, what, start, end):
    events = {e.what: e for e in _events(text)}
    assert what in events, list(events)
    event = events[what]
    assert (event.date_start, event.date_end, event.participants) == (start, end, ["Nate", "Joanna"])


@pytest.mark.parametrize("text, what", [
    ("The retrained encoder finished last week and it beats the old one. Dr. Aisha Bello signed off on it on Friday.",
     "Dr. Aisha Bello signed off on the retrained encoder on Friday"),
    ("My old bike broke down on Monday. I fixed it yesterday.", "Nate fixed Nate's old bike yesterday"),
    ("Caroline painted a sunset last week. She sold it on Saturday.", "She sold it on Saturday"),  # no thing before
])
def test_an_object_it_names_the_thing_it_stands_for(text, what):
    assert what in [e.what for e in _events(text)]


@pytest.mark.parametrize("text, words", [
    ("The retrained encoder finished last week. Aisha signed off on it on Friday.", "The retrained encoder"),
    ("My old bike broke down. I fixed it yesterday.", "My old bike"),
    ("It was raining all day. I loved it.", None),  # a subject "it" is no thing
    ("This is my latest painting. I finished it yesterday.", None),  # "this" names nothing
    ("My sister called. I missed it.", None),  # a person is never "it"
    ("The cake was great. My brother liked the frosting. We ate it.", None),  # two sentences back is too far
])
def test_what_an_object_it_stands_for(text, words):
    from gravity_engine.extract.classic.grammar import it_antecedent

    doc = parse([text])[0]
    it = [t for t in doc if t.lower_ == "it"][-1]
    found = it_antecedent(it)
    assert (None if found is None else " ".join(t.text for t in found)) == words


def test_a_question_event_carries_its_reply_or_is_no_event():
    asked = "Notifications come out on May 24. Now tell me, how did the half marathon go on Sunday?"
    events = _dialogue([("Ana", asked), ("Ben", "1:31:40, a personal best by almost two minutes! It poured.")],
                       when="2024-05-07T21:12")
    run = next(e for e in events if "half marathon" in e.what)
    assert run.what == "How did the half marathon go on Sunday? Ben: 1:31:40, a personal best by almost two minutes!"
    assert (run.source_ids, run.date_start) == (["D1:1", "D1:2"], "2024-05-05")
    alone = _dialogue([("Ana", asked)], when="2024-05-07T21:12")  # nobody answered: a question says nothing
    assert [e.what for e in alone] == ["Notifications come out on May 24"]
