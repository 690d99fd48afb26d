"""Question-answer pairs: a short answer states what its question asked, in the answerer's voice, and what
the entity patterns read from that statement cites both turns. Invented sentences in the style of the DEV
conversations (``sample_data/gold/dev/``), never the held-out TEST ones."""

from __future__ import annotations

import pytest

from test_classic_extractor import _facts, _one_batch, _rels

from gravity_engine.conversation import Utterance
from gravity_engine.extract.classic.answers import answered_statements
from gravity_engine.extract.classic.nlp import parse


def _statement(question: str, answer: str, asker: str = "Tomas", answerer: str = "Nadia") -> str | None:
    utts = [Utterance(id="q", speaker=asker, text=question, session_id="s1"),
            Utterance(id="a", speaker=answerer, text=answer, session_id="s1")]
    found = answered_statements(utts, parse([question, answer]))
    assert len(found) <= 1
    if not found:
        return None
    assert (found[0].question_id, found[0].answer_id, found[0].speaker, found[0].index) == ("q", "a", answerer, 1)
    return found[0].text


@pytest.mark.parametrize("question, answer, statement", [
    ("Of course she was. Does she still live in Salthill?", "Yes, in the same house.", "she still lives in Salthill"),
    ("Which school will Maya attend?", "Bruntsfield Primary. She starts in P3.", "Maya will attend Bruntsfield Primary"),
    ("Where does Raj work?", "At Nordfield Games.", "Raj works at Nordfield Games"),
    ("Are you still at Acme?", "Yes!", "I am still at Acme"),
    ("Do you still work at Brightwater?", "Yeah, for now.", "I still work at Brightwater"),
    ("Which team does Lukas play for?", "The Red Kites.", "Lukas plays for The Red Kites"),
    ("What's your dog called?", "Pepper.", "my dog is called Pepper"),
    ("Have you joined the Harbor Striders yet?", "Yes, last week.", "I have joined the Harbor Striders"),
    ("Did your brother move to Cork?", "Yep, in June.", "my brother moved to Cork"),
    ("So did I tell you about Oslo?", "Yes.", "you told me about Oslo"),
    # a yes says the question is right whatever follows it, unless it is taken back
    ("Does your brother live in Exeter?", "Yes, Danny's been in Heavitree for years.", "my brother lives in Exeter"),
    # a name after the yes answers "that <noun>"
    ("Is she still at that surgery in Roath?", "Yeah, Lanfair Vets.", "she is still at Lanfair Vets in Roath"),
])
def test_a_short_answer_states_what_was_asked_in_the_answerers_voice(question, answer, statement):
    assert _statement(question, answer) == statement


@pytest.mark.parametrize("question, answer", [
    ("Does she still live in Salthill?", "No, she moved last year."),  # a no
    ("Does she still live in Salthill?", "Yes, but not for long."),  # a yes taken back
    ("Does she still live in Salthill?", "She does, by the promenade."),  # a full answer: read on its own
    ("What did you think?", "Great film."),  # an opinion: no name, no number
    ("Where does Raj work?", "He works remotely for Nordfield Games."),  # a sentence, not a fragment
    ("Why did Raj leave?", "Money."),  # why/how/when: nothing a fragment can fill
    ("When do you get the keys?", "On the 16th of August."),  # dated by the events module
    ("Nice, isn't it?", "Yes."),  # no subject to state anything of
])
def test_no_statement_without_a_plain_yes_or_a_named_fragment(question, answer):
    assert _statement(question, answer) is None


def test_a_turn_answers_only_the_other_speakers_question():
    utts = [Utterance(id="q", speaker="Nadia", text="Does Raj work at Nordfield Games?", session_id="s1"),
            Utterance(id="a", speaker="Nadia", text="Yes.", session_id="s1")]
    assert answered_statements(utts, parse([u.text for u in utts])) == []


@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Tomas", "My mum Orla is tougher than all of us."), ("Tomas", "Does she still live in Salthill?"),
      ("Nadia", "Yes, in the same house by the promenade.")], "Orla", "lives_in", "Salthill"),
    ([("Tomas", "Which school will Maya attend?"), ("Nadia", "Bruntsfield Primary.")], "Maya", "studies_at",
     "Bruntsfield Primary"),
    ([("Tomas", "Where does Priya work these days?"), ("Nadia", "At Nordfield Games.")], "Priya", "works_at",
     "Nordfield Games"),
    ([("Tomas", "Do you still live in Galway?"), ("Nadia", "Yeah, same flat.")], "Nadia", "lives_in", "Galway"),
    ([("Tomas", "Have you joined the Harbour Rowing Club yet?"), ("Nadia", "Yes!")], "Nadia", "member_of",
     "Harbour Rowing Club"),
])
def test_relations_said_across_a_question_and_its_answer_cite_both_turns(lines, subject, predicate, target):
    profiles = _one_batch([*lines, ("Tomas", "Nice.")])
    ids = _rels(profiles[subject]).get((predicate, target))
    assert ids is not None, {n: _rels(p) for n, p in profiles.items()}
    assert ids[-2:] == [f"u{len(lines) - 2}", f"u{len(lines) - 1}"]


def test_an_answered_statement_is_a_fact_of_its_subject_and_counts_no_extra_mention():
    profiles = _one_batch([("Tomas", "Which school will Maya attend?"), ("Nadia", "Bruntsfield Primary."),
                           ("Tomas", "Nice.")])
    assert _facts(profiles["Maya"]).get("Maya will attend Bruntsfield Primary") == ["u0", "u1"]
    assert profiles["Bruntsfield Primary"].mentions == 1


def test_a_no_states_nothing():
    profiles = _one_batch([("Tomas", "Do you still live in Galway?"), ("Nadia", "No, we moved."), ("Tomas", "Oh.")])
    assert ("lives_in", "Galway") not in _rels(profiles["Nadia"])


@pytest.mark.parametrize("question, answer", [
    ("Do you have any goals you're working towards?", "Yeah, I'm hoping to get into Harvard."),  # open question
    ("Is it a martial arts place or a yoga studio?", "Yup, a yoga studio."),  # a choice
    ("Could you tell me more about Oslo?", "Yeah, sure."),  # a request
    ("Can I see a picture of Rufus?", "Sure!"),  # a request
    ("Do you use that computer for gaming?", "Yep!"),  # nothing named: small talk
    ("Did you make it in Oslo?", "Yeah, no, I made it at home."),  # a yes taken back
    ("What's your favourite game?", "Thanks, Tomas! I love Catan."),  # thanks to the asker, not the answer
    ("What's the story behind that sign?", "Oh, that one?"),  # no name, no number
    ("What are their names? And where do they live?", "Luna and Oliver."),  # which question does it answer?
])
def test_no_statement_from_small_talk_requests_or_replies_to_the_asker(question, answer):
    assert _statement(question, answer) is None


@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Tomas", "Priya left."), ("Nadia", "Priya who moved to Plymouth?")], "Priya", "lives_in", "Plymouth"),
    ([("Tomas", "Callum's coming on Saturday."), ("Nadia", "Is he still up in Leeds?"), ("Tomas", "Yep.")],
     "Callum", "lives_in", "Leeds"),
    ([("Tomas", "Priya is at Drakeshead Marine Lab now.")], "Priya", "works_at", "Drakeshead Marine Lab"),
    ([("Tomas", "Is Orla still at Kirkgate Uni?"), ("Nadia", "Yes, second year.")], "Orla", "studies_at",
     "Kirkgate Uni"),
    ([("Tomas", "He's got an interview here in Bristol.")], "Tomas", "lives_in", "Bristol"),
])
def test_states_said_with_still_now_here_or_inside_a_question(lines, subject, predicate, target):
    profiles = _one_batch([*lines, ("Nadia", "Nice.")])
    assert (predicate, target) in _rels(profiles[subject]), {n: _rels(p) for n, p in profiles.items()}


@pytest.mark.parametrize("said", [
    "I'm in Lisbon now.",  # "now" in a town may be a trip
    "Is Orla still in Leeds?",  # asked, not answered
    "Orla isn't at Drakeshead Marine Lab any more.",  # negated
])
def test_no_lasting_place_from_trips_questions_or_negations(said):
    profiles = _one_batch([("Tomas", "Orla called."), ("Tomas", said), ("Nadia", "Oh.")])
    assert profiles["Orla"].type == "person"  # so the rule was asked: "Orla is still in Leeds." gives lives_in
    assert not any(p in ("lives_in", "works_at") for p, _ in _rels(profiles["Orla"]))
    assert not any(p == "lives_in" for p, _ in _rels(profiles["Tomas"]))


def test_an_answer_that_dates_a_named_thing_is_an_event_citing_both_turns():
    from gravity_engine.extract.base import Batch
    from gravity_engine.extract.classic.events import extract_events

    utts = [Utterance(id="q", speaker="Tomas", text="Where's the workshop?", session_id="s1"),
            Utterance(id="a", speaker="Nadia", text="In Toronto, on June 21. I'm nervous.", session_id="s1")]
    batch = Batch(index=0, session_id="s1", session_time="2024-04-24T19:07", utterances=utts,
                  speakers=["Nadia", "Tomas"])
    events = {e.what: e for e in extract_events(batch, parse([u.text for u in utts]))}
    event = events["The workshop is in Toronto on June 21"]
    assert (event.date_start, event.source_ids) == ("2024-06-21", ["q", "a"])


@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Tomas", "Is it ok if my sister stays the weekend after?"), ("Nadia", "Elif? Always! Say hi to Elif from me.")],
     "Elif", "sister_of", "Tomas"),
    ([("Tomas", "Oh, your cat threw up on the rug."), ("Nadia", "Ugh, Pilchard! He's been chewing plants.")], "Nadia",
     "owns_pet", "Pilchard"),
])
def test_a_bare_name_in_reply_names_the_unnamed_kin_or_pet_of_the_turn_before(lines, subject, predicate, target):
    profiles = _one_batch([*lines, ("Tomas", "Ha.")])
    assert _rels(profiles[subject]).get((predicate, target)) == ["u0", "u1"], {n: _rels(p) for n, p in profiles.items()}


@pytest.mark.parametrize("reply", ["Awww, thanks!", "Oops! Sorry.", "Pizza? Cool, I love pizza too!"])
def test_an_interjection_or_a_word_in_reply_names_nothing(reply):
    profiles = _one_batch([("Tomas", "Your dog is so cute!"), ("Nadia", reply), ("Tomas", "Ha.")])
    assert not any(p == "owns_pet" for p, _ in _rels(profiles["Nadia"])), {n: _rels(p) for n, p in profiles.items()}


def test_a_bare_name_names_nothing_when_the_turn_before_has_two_candidates():
    profiles = _one_batch([("Tomas", "My sister and your dog are outside."), ("Nadia", "Elif? Really?"), ("Tomas", "Ha.")])
    assert not _rels(profiles.get("Elif", profiles["Nadia"])) and not _rels(profiles["Nadia"])


def test_a_question_about_a_named_person_answered_about_my_kin_names_the_kin():
    profiles = _one_batch([("Tomas", "Did Maren make it over from Cardiff in the end?"),
                           ("Nadia", "No, my poor girlfriend got called in."), ("Tomas", "Ha.")])
    assert _rels(profiles["Maren"]).get(("partner_of", "Nadia")) == ["u0", "u1"]
    profiles = _one_batch([("Tomas", "Did you see Maren at the match?"), ("Nadia", "No, my sister saw her."),
                           ("Tomas", "Ha.")])
    assert not _rels(profiles["Maren"])


def test_a_relative_clause_in_a_question_counts_only_on_a_name():
    profiles = _one_batch([("Tomas", "Do you have any special spots you like to go to?"), ("Nadia", "Hmm.")])
    assert not _rels(profiles["Tomas"]) and not _rels(profiles["Nadia"])


def test_a_name_echoed_as_the_subject_of_a_short_exclamation_names_the_kin_of_the_turn_before():
    profiles = _one_batch([("Tomas", "Oh, and my dad's flying in from Porto on Friday!"),
                           ("Nadia", "Teodor's coming?!"),
                           ("Tomas", "Yes, for a week. I'll take Teodor to the coast.")])
    assert _rels(profiles["Teodor"]).get(("parent_of", "Tomas")) == ["u0", "u1"]
    # a whole sentence about the name says who did what, not who the kin is
    profiles = _one_batch([("Tomas", "My dad's flying in on Friday!"),
                           ("Nadia", "Teodor told me he's coming to stay with you for the whole summer!"),
                           ("Tomas", "Yes, I'll take Teodor to the coast.")])
    assert ("parent_of", "Tomas") not in _rels(profiles["Teodor"])


def test_a_name_written_alone_inside_a_sentence_next_to_i_or_an_opening_function_word():
    from gravity_engine.extract.classic.profiles import capitalised_inside

    assert "teodor" in capitalised_inside(["For Teodor I'll pretend."])
    assert "york" not in capitalised_inside(["New York is big."])  # one name of two words
    assert "fingers" not in capitalised_inside(["Fingers crossed."])  # a sentence's first word


def test_a_named_place_answers_the_last_of_several_questions_when_it_asks_where():
    assert _statement("Congratulations! Will you look for work in Exeter too? Where are you working now?",
                      "Fernhollow Insurance. I'm fully remote.") == "I am working at Fernhollow Insurance now"
    # names answer "what are their names?" as well as "what are your plans?": which one is not known
    assert _statement("What are their names? And what are your plans for the app?", "Max and Daisy.") is None


def test_the_subject_of_a_yes_to_a_question_about_unnamed_kin_is_that_kin():
    profiles = _one_batch([("Tomas", "That helps a lot. Does your sister live in Galway?"),
                           ("Nadia", "Yes, Orla's been in Salthill for about eight years."), ("Tomas", "Lovely.")])
    assert _rels(profiles["Orla"]).get(("sister_of", "Nadia")) == ["u0", "u1"]
    # the kin only mentioned, not asked about: the name may be anyone
    profiles = _one_batch([("Tomas", "Did you see your sister at the match?"), ("Nadia", "Yes, Orla scored twice."),
                           ("Tomas", "Lovely.")])
    assert ("sister_of", "Nadia") not in _rels(profiles["Orla"])
