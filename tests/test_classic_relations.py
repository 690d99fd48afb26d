"""Classic relations, types and junk, round 3: the DependencyMatcher patterns, pronouns across sentences,
person and pet nouns, business head words, and the DEV gold set the rules were tuned on. Invented sentences
in the style of the DEV conversations (``sample_data/gold/dev/``), never the held-out TEST ones."""

from __future__ import annotations

import pytest

from test_classic_extractor import _one_batch, _rels

from gravity_engine.anchors import AnchorSet, Entity
from gravity_engine.conversation import Conversation, Session, Utterance


@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Nadia", "Yep, I've been at Marchetti Architects for two years now.")], "Nadia", "works_at",
     "Marchetti Architects"),
    ([("Nadia", "Before that I was at Copperleaf Digital for five years.")], "Nadia", "works_at", "Copperleaf Digital"),
    ([("Nadia", "Cian moved to Cork two weeks ago. He got a job at Lir Robotics as a test engineer.")],
     "Cian", "works_at", "Lir Robotics"),
    ([("Nadia", "Cian moved to Cork two weeks ago.")], "Cian", "lives_in", "Cork"),
    ([("Nadia", "Fiona introduced me to the team, and I'm pairing with a designer called Wojtek.")],
     "Wojtek", "colleague_of", "Nadia"),
    ([("Nadia", "Maya loves her school."), ("Omar", "Good."), ("Nadia", "She's already made a friend, Isla.")],
     "Isla", "friend_of", "Maya"),
    ([("Nadia", "I also need to cancel my membership at Northern Edge climbing wall.")], "Nadia", "member_of",
     "Northern Edge"),
    ([("Nadia", "I've accepted a job in Edinburgh, so we're leaving soon.")], "Nadia", "lives_in", "Edinburgh"),
    ([("Nadia", "Ha! My spaniel Bramble sends her love.")], "Nadia", "owns_pet", "Bramble"),
    ([("Nadia", "My sister Ana came, with her husband Dario.")], "Dario", "partner_of", "Ana"),
    ([("Nadia", "And your brother? Is Cian still in Dublin?")], "Cian", "brother_of", "Omar"),
    ([("Nadia", "Good luck, little sis.")], "Omar", "sister_of", "Nadia"),
    ([("Nadia", "I'll be working on the Larkspur app from day one.")], "Nadia", "works_on", "Larkspur"),
    ([("Nadia", "The Harbour Rowing Club had a waiting list, so now I'm a member.")], "Nadia", "member_of",
      "Harbour Rowing Club"),
])
def test_relation_patterns_round_three(lines, subject, predicate, target):
    profiles = _one_batch([*lines, ("Omar", "Nice.")])
    assert (predicate, target) in _rels(profiles[subject]), {n: _rels(p) for n, p in profiles.items()}


@pytest.mark.parametrize("said", [
    "Your friendship means a lot to me.", "I appreciate our friendship too, Omar.", "You're a true friend!",
    "I'm lucky to have a friend like you on these trips.", "That's why we are friends, to look out for each other!",
    "Thanks for being such a great friend.", "We've been best friends since school.", "Friends like you are rare.",
])
def test_what_the_speaker_and_the_listener_are_to_each_other_said_to_them(said):
    profiles = _one_batch([("Nadia", said), ("Omar", "Aw.")])
    assert ("friend_of", "Nadia") in _rels(profiles["Omar"]), {n: _rels(p) for n, p in profiles.items()}


@pytest.mark.parametrize("said", [
    "We're friends with the Okafors next door.", "Are we friends?", "You're a great mom.",
    "You're such a good friend to Sarah.", "We're not friends anymore.", "Maybe we could be friends.",
    "I'm off to have dinner with some friends from the gym.", "Your friendship with Tom is sweet.",
    "My friend Jun Wei. We've been friends since my first week.", "We were teammates for four years in school.",
    "My teammates gave me this when we met. It's a sign of our friendship.",
    "Mum and Dad told everyone about our marriage.", "I bet they were thrilled to hear about your marriage!",
    "We're just gonna be friends.", "We will be friends forever.", "Priya's so lucky. She has a friend like you.",
])
def test_a_tie_to_someone_else_asked_denied_or_past_relates_neither(said):
    profiles = _one_batch([("Nadia", said), ("Omar", "Aw.")])
    ties = {p for n in ("Nadia", "Omar") if n in profiles for p, t in _rels(profiles[n]) if t in ("Nadia", "Omar")}
    assert not ties, {n: _rels(p) for n, p in profiles.items()}


def test_the_listener_is_the_subject_of_likes_and_dislikes_stated_about_them():
    profiles = _one_batch([("Omar", "I can't stand boats."), ("Nadia", "You hate flying too 😂")])
    assert ("dislikes", "flying") in _rels(profiles["Omar"]) and ("dislikes", "boats") in _rels(profiles["Omar"])


@pytest.mark.parametrize("said", [
    "I've been at my sister's since Friday.",  # a visit, not an employer
    "Were you at Marchetti Architects for long?",  # a question states nothing
    "I didn't get the job at Lir Robotics.",  # negated
    "I might get a job at Lir Robotics.",  # hedged
])
def test_no_employer_from_visits_questions_negations_or_hedges(said):
    profiles = _one_batch([("Nadia", said), ("Omar", "Nice.")])
    assert not any(p == "works_at" for p, _ in _rels(profiles["Nadia"]))


def test_he_and_she_point_only_at_a_person_named_recently():
    lines = [("Nadia", "Cian called."), ("Omar", "Nice."), ("Nadia", "Ok."), ("Omar", "Sure."), ("Nadia", "Right."),
             ("Omar", "Yes."), ("Nadia", "He got a job at Lir Robotics.")]
    profiles = _one_batch(lines)
    assert not any(p == "works_at" for n in profiles for p, _ in _rels(profiles[n]))


@pytest.mark.parametrize("said, name, type_", [
    ("I'm pairing with a designer called Wojtek.", "Wojtek", "person"),
    ("The trainer, Mathilde, says he's enthusiastic.", "Mathilde", "person"),
    ("We adopted a beagle called Rufus on Saturday.", "Rufus", "pet"),
    ("Yep, I've been at Marchetti Architects for two years.", "Marchetti Architects", "organization"),
    ("Raj works remotely for Nordfield Games these days.", "Nordfield Games", "organization"),
    ("We raced at the Galway Regatta and came third!", "Galway Regatta", "event"),
    ("Euro Heart Nursing Congress. My manager is sending me.", "Euro Heart Nursing Congress", "event"),
    ("Greenway Dairy let us collect the butter ourselves.", "Greenway Dairy", "organization"),
])
def test_context_and_head_words_type_names(said, name, type_):
    profiles = _one_batch([("Nadia", said), ("Omar", "Nice.")])
    assert profiles[name].type == type_


@pytest.mark.parametrize("said, name, pet", [
    ("Took my furry friend Pepper to the lake today.", "Pepper", True),
    ("Meet my four-legged friend Rocco!", "Rocco", True),
    ("My feathered friend Kiwi learned a new word.", "Kiwi", True),
    ("Took my oldest friend Pepper to the lake today.", "Pepper", False),
    ("My friend Rocco knitted me a fluffy scarf.", "Rocco", False),
    ("Met my long-legged friend Rocco for a run.", "Rocco", False),
])
def test_a_furry_friend_is_a_pet(said, name, pet):
    profiles = _one_batch([("Nadia", said), ("Omar", "Aw.")])
    rels = _rels(profiles["Nadia"]) | _rels(profiles[name])
    assert (profiles[name].type == "pet") == pet, profiles[name].type
    assert (("owns_pet", name) in rels) == pet and (("friend_of", "Nadia") in rels or ("friend_of", name) in rels) \
        != pet, rels


@pytest.mark.parametrize("said, name", [
    ("I got a new pet - Biscuit, my guinea pig. She squeaks a lot.", "Biscuit"),
    ("My guinea pig Biscuit squeaks a lot.", "Biscuit"),
    ("Toffee, my gerbil, escaped again.", "Toffee"),
    ("Meet Rolo, my rabbit!", "Rolo"),
])
def test_small_pets_and_a_pet_introduced_by_meet(said, name):
    profiles = _one_batch([("Nadia", said), ("Omar", "Aw.")])
    assert profiles[name].type == "pet" and ("owns_pet", name) in _rels(profiles["Nadia"]), \
        {n: (p.type, _rels(p)) for n, p in profiles.items()}


@pytest.mark.parametrize("lines, name, kind, relation", [
    ([("Nadia", "We adopted a puppy last week! I named him Biscuit.")], "Biscuit", "pet", "owns_pet"),
    ([("Nadia", "We got a kitten on Saturday."), ("Omar", "No way! What's she called?"),
      ("Nadia", "We named her Pickle.")], "Pickle", "pet", "owns_pet"),
    ([("Nadia", "I built a little robot at the workshop and I named it Bolt.")], "Bolt", None, "works_on"),
    ([("Nadia", "My sister had her baby! They named her Sophie.")], "Sophie", None, None),
])
def test_what_is_named_after_a_pet_is_said_is_the_pet(lines, name, kind, relation):
    profiles = _one_batch([*lines, ("Omar", "Aw.")])
    rels = {p for p, target in _rels(profiles["Nadia"]) if target == name}
    assert (profiles[name].type == "pet") == (kind == "pet"), profiles[name].type
    assert rels == ({relation} if relation else set()), rels


@pytest.mark.parametrize("lines, names, kind", [
    ([("Nadia", "I've had my dogs for three years! Their names are Pepper, Biscuit and Panda.")],
     ["Pepper", "Biscuit", "Panda"], "pet"),
    ([("Nadia", "We got a kitten on Saturday."), ("Omar", "Aww what's her name?"), ("Nadia", "Her name is Luna.")],
     ["Luna"], "pet"),
    ([("Nadia", "My sister just had twins! Their names are Ada and Theo.")], ["Ada", "Theo"], "person"),
    ([("Nadia", "I met the new neighbours. Their names are Ada and Theo.")], ["Ada", "Theo"], "person"),
])
def test_names_given_just_after_a_pet_noun_are_pets(lines, names, kind):
    profiles = _one_batch([*lines, ("Omar", "Aw.")])
    assert [profiles[n].type for n in names] == [kind] * len(names)


def test_generic_acronyms_are_not_entities():
    profiles = _one_batch([("Nadia", "Have you told your GP? The VAT figures are due."), ("Omar", "Nice.")])
    assert not {"GP", "VAT"} & set(profiles)


def test_a_person_typed_name_needs_three_utterances_with_pet_words_to_become_a_pet():
    from gravity_engine.extract.classic import _pets_by_context

    turns = [("Tomas", "Ines's idea. My girlfriend has wanted a dog for years."), ("Nadia", "Aww."),
             ("Tomas", "He howls at the cat next door, but he sleeps on Ines's feet every night."), ("Nadia", "Ha!"),
             ("Tomas", "Ines laughed at him.")]
    utts = [Utterance(id=f"u{i}", speaker=s, text=t, session_id="s1") for i, (s, t) in enumerate(turns)]
    conversation = Conversation(id="c", sessions=[Session(id="s1", index=0, utterances=utts)],
                                speakers=["Tomas", "Nadia"])
    anchors = AnchorSet(entities=[Entity(id="t", name="Tomas", type="person"), Entity(id="n", name="Nadia", type="person"),
                                  Entity(id="i", name="Ines", type="person")])
    _pets_by_context(anchors, conversation)
    assert anchors.entities[2].type == "person" and not anchors.entities[0].relations


def test_names_after_a_comma_or_with_a_possessive_count_as_written_inside_a_sentence():
    from gravity_engine.extract.classic import standalone_capitalised

    utts = [Utterance(id="u0", speaker="A", text="Oh no. Again, Ben!", session_id="s1"),
            Utterance(id="u1", speaker="B", text="He sleeps on Ines's feet.", session_id="s1")]
    found = standalone_capitalised(Conversation(id="c", sessions=[Session(id="s1", index=0, utterances=utts)],
                                                speakers=["A", "B"]))
    assert {"ben", "ines"} <= found


def test_the_matcher_is_skipped_without_a_trigger_word_and_questions_state_nothing():
    from gravity_engine.extract.classic.nlp import parse
    from gravity_engine.extract.classic.patterns import relation_matches

    plain, question, stated = parse(["We had cake on the beach last Thursday.",
                                     "Are you still at Marchetti Architects for now?",
                                     "I've been at Marchetti Architects for two years."])
    assert list(relation_matches(plain)) == [] and list(relation_matches(question)) == []
    (label, tokens), = relation_matches(stated)
    assert label == "employed_at" and tokens["target"].text == "Architects"


@pytest.mark.parametrize("said, name", [
    ("Six years at the Rothay Hotel in Grasmere, running their pastry section.", "Grasmere"),
    ("Ines is away in Grenoble that weekend for a wedding.", "Grenoble"),
])
def test_where_a_business_or_a_person_is_is_a_place(said, name):
    profiles = _one_batch([("Nadia", said), ("Omar", "Nice.")])
    assert profiles[name].type == "place"


def test_what_only_people_have_or_do_makes_a_person_whatever_ner_says():
    profiles = _one_batch([("Nadia", "I was at Marit's leaving do in May."), ("Tomas", "Bryony who moved to Galway?"),
                           ("Nadia", "Yes, that's her.")])
    assert profiles["Marit"].type == "person"  # NER: a place
    assert profiles["Bryony"].type == "person"  # NER: nothing
    profiles = _one_batch([("Nadia", "Leeds's manager got sacked."), ("Tomas", "Bristol's best cafe closed.")])
    assert all(p.type != "person" for n, p in profiles.items() if n in ("Leeds", "Bristol"))


@pytest.mark.parametrize("span, name, j, expected", [
    ("Clevedon with Jonah", "Jonah", 1, "other"),  # a companion: NER's "place" is the first name's
    ("the Rothay Hotel in Grasmere", "Grasmere", 1, "place"),
    ("Ironwood Fitness on Albany Road", "Albany Road", 1, "place"),
    ("Moorish Castle and Pena Palace", "Pena Palace", 1, "place"),  # a list is of one kind
    ("Clevedon with Jonah", "Clevedon", 0, "place"),
])
def test_the_names_of_a_run_on_span_take_their_type_from_the_word_that_joins_them(span, name, j, expected):
    from gravity_engine.extract.classic.entities import _part_type

    assert _part_type(span, name, j, "place") == expected


def test_a_name_the_next_sentence_calls_she_is_a_person_and_what_she_does_is_hers():
    profiles = _one_batch([("Tomas", "Any news from Tamsin? Is she still in Galway?"),
                           ("Nadia", "She's teaching maths at Scoil Bhríde now.")])
    assert profiles["Tamsin"].type == "person"  # NER: a place
    assert ("works_at", "Scoil Bhríde") in _rels(profiles["Tamsin"])
    # where someone comes from is not who "she" is
    profiles = _one_batch([("Tomas", "My mum's flying back from Izmir. She can't wait to see you."), ("Nadia", "Yay!")])
    assert profiles["Izmir"].type == "place"


def test_a_relative_clause_in_a_question_counts_on_a_name_the_tagger_calls_a_noun():
    profiles = _one_batch([("Nadia", "Not since Carys left."), ("Tomas", "Carys who moved to Plymouth?"),
                           ("Nadia", "That's her.")])
    assert _rels(profiles["Carys"]).get(("lives_in", "Plymouth")) == ["u1"]


@pytest.mark.parametrize("said, relation", [
    ("Yes, Danny's been in Salthill for about eight years.", ("lives_in", "Salthill")),
    ("I've been at Brightwater Dental for six years.", ("works_at", "Brightwater Dental")),
])
def test_being_somewhere_for_years_is_a_lasting_state(said, relation):
    profiles = _one_batch([("Nadia", said), ("Tomas", "Nice.")])
    who = profiles.get("Danny", profiles["Nadia"])
    assert _rels(who).get(relation) == ["u0"], {n: _rels(p) for n, p in profiles.items()}


def test_being_somewhere_for_a_week_is_a_trip():
    profiles = _one_batch([("Nadia", "I've been in Lisbon for a week, it's lovely."), ("Tomas", "Nice.")])
    assert not _rels(profiles["Nadia"])


# Version 8: what a reply settles about the turn before (DEV: harbour_flatmates, assistant_relocation).

def test_a_yes_with_a_sentence_of_its_own_still_answers_and_my_kin_is_the_kin_named_before():
    profiles = _one_batch([("Tomas", "Does your brother live in Exeter?"),
                           ("Nadia", "Yes, Danny's been in Heavitree for years."), ("Tomas", "Lovely.")])
    assert _rels(profiles["Danny"]).get(("lives_in", "Exeter")) == ["u0", "u1"]


def test_a_bare_name_no_lexicon_holds_names_the_kin_even_if_never_written_inside_a_sentence():
    profiles = _one_batch([("Tomas", "Is it ok if my sister stays the weekend after?"),
                           ("Nadia", "Elif? Always! Is she still at Severnside Uni?"), ("Tomas", "Yep, final year.")])
    assert _rels(profiles["Elif"]).get(("sister_of", "Tomas")) == ["u0", "u1"]
    assert ("studies_at", "Severnside Uni") in _rels(profiles["Elif"])  # "she" is who was just named


@pytest.mark.parametrize("lines, subject, place", [
    ([("Tomas", "Did Maren make it over from Cardiff in the end?"), ("Nadia", "No, she got called in.")], "Maren",
     "Cardiff"),
    ([("Tomas", "Any news from Hattie? How long has she been in Lisbon now?"), ("Nadia", "Two weeks.")], "Hattie",
     "Lisbon"),
    ([("Tomas", "Oh, and my dad's flying in from Porto on Friday!"), ("Nadia", "Teodor's coming?!")], "Teodor",
     "Porto"),
])
def test_where_a_visitor_comes_over_from_is_where_they_live(lines, subject, place):
    profiles = _one_batch([*lines, ("Tomas", "Ha.")])
    assert ("lives_in", place) in _rels(profiles[subject]), {n: _rels(p) for n, p in profiles.items()}


@pytest.mark.parametrize("said", ["I just got back from Paris.", "My mum's flying back from Izmir on Friday.",
                                  "I'm flying in from Berlin on Tuesday."])
def test_a_way_back_or_the_speakers_own_trip_names_no_home(said):
    profiles = _one_batch([("Tomas", said), ("Nadia", "Nice.")])
    assert not any(p == "lives_in" for e in profiles.values() for p, _ in _rels(e))


def test_a_kin_word_asked_back_names_the_one_person_of_the_turn_before():
    profiles = _one_batch([("Nadia", "Callum's coming to stay on Saturday night, hope that's ok."),
                           ("Tomas", "Your little brother? Course."), ("Nadia", "Thanks.")])
    assert _rels(profiles["Callum"]).get(("brother_of", "Nadia")) == ["u0", "u1"]
    profiles = _one_batch([("Nadia", "Callum and Priya are coming on Saturday."),
                           ("Tomas", "Your brother? Course."), ("Nadia", "Thanks.")])
    assert not _rels(profiles["Callum"]) and not _rels(profiles["Priya"])  # which of the two?


def test_an_organisation_named_in_reply_to_a_question_about_the_new_job_is_the_employer():
    profiles = _one_batch([("Nadia", "How's the new job going, by the way?"),
                           ("Tomas", "Honestly good. A month in and Brackwater Studios still feels like a dream."),
                           ("Nadia", "Great.")])
    assert _rels(profiles["Tomas"]).get(("works_at", "Brackwater Studios")) == ["u0", "u1"]
    profiles = _one_batch([("Nadia", "How was the weekend?"),
                           ("Tomas", "Honestly good. Brackwater Studios threw a party."), ("Nadia", "Great.")])
    assert not _rels(profiles["Tomas"])


def test_a_named_groups_training_in_the_speakers_plans_is_their_group():
    profiles = _one_batch([("Nadia", "I'll ring him after Kingsholm Kestrels training."), ("Tomas", "Good luck.")])
    assert _rels(profiles["Nadia"]).get(("member_of", "Kingsholm Kestrels")) == ["u0"]
    assert profiles["Kingsholm Kestrels"].type == "organization"
    profiles = _one_batch([("Nadia", "Did you watch Kingsholm Kestrels training?"), ("Tomas", "No.")])
    assert not _rels(profiles["Nadia"]) and not _rels(profiles["Tomas"])  # asked, not said


def test_staying_with_someone_somewhere_is_where_they_live():
    profiles = _one_batch([("Nadia", "My cousin Orla is visiting."), ("Tomas", "For how long?"),
                           ("Nadia", "Two weeks with Orla in Galway and a few days with us."), ("Tomas", "Nice.")])
    assert _rels(profiles["Orla"]).get(("lives_in", "Galway")) == ["u2"]
    profiles = _one_batch([("Nadia", "Two weeks with Brightwater Dental in Galway, then back."), ("Tomas", "Nice.")])
    assert not any(p == "lives_in" for e in profiles.values() for p, _ in _rels(e))  # a business by its name


def test_a_named_thing_coming_along_is_the_repliers_project():
    profiles = _one_batch([("Tomas", "How's Skylark coming along?"), ("Nadia", "Slowly! I sanded the hull on Sunday."),
                           ("Tomas", "Ha.")])
    assert _rels(profiles["Nadia"]).get(("works_on", "Skylark")) == ["u0", "u1"]
    assert profiles["Skylark"].type == "project"
    for asked in ("How's Skylark going?", "How's Priya coming along?"):  # maybe a place; a person ("Priya said")
        profiles = _one_batch([("Tomas", "Priya said hi. " + asked), ("Nadia", "Good, I love it."), ("Tomas", "Ha.")])
        assert not any(p == "works_on" for p, _ in _rels(profiles["Nadia"])), asked


@pytest.mark.parametrize("reply", ["Sames, can't wait to meet them.", "That`s awesome!"])
def test_chat_words_no_lexicon_holds_name_nothing_unless_asked_back_alone(reply):
    profiles = _one_batch([("Tomas", "My dogs love meeting new people."), ("Nadia", reply), ("Tomas", "Ha.")])
    assert not any(r for p in profiles.values() for r in _rels(p)), {n: _rels(p) for n, p in profiles.items()}


def _pet_context(turns: list[tuple[str, str]], name: str, type_: str,
                 speakers: tuple[str, str]) -> tuple[str, list[tuple[str, str]]]:
    """``_pets_by_context`` over one session of two speakers and one more name: (its type, the first speaker's
    relations)."""
    from gravity_engine.extract.classic import _pets_by_context

    utts = [Utterance(id=f"u{i}", speaker=s, text=t, session_id="s1") for i, (s, t) in enumerate(turns)]
    conversation = Conversation(id="c", sessions=[Session(id="s1", index=0, utterances=utts)],
                                speakers=list(speakers))
    anchors = AnchorSet(entities=[*(Entity(id=f"s{k}", name=s, type="person") for k, s in enumerate(speakers)),
                                  Entity(id="x", name=name, type=type_)])
    _pets_by_context(anchors, conversation)
    first = next(e for e in anchors.entities if e.name == speakers[0])
    return anchors.entities[-1].type, [(r.predicate, r.target) for r in first.relations]


def test_what_only_an_animal_has_makes_a_person_typed_name_a_pet_with_one_pet_word():
    def pets(turns):
        return _pet_context(turns, "Pickle", "person", ("Tomas", "Nadia"))

    assert pets([("Nadia", "How's Pickle's paw?"), ("Tomas", "Healing. The vet says no long walks till Friday."),
                 ("Nadia", "Aw."), ("Tomas", "Pickle sends his love.")]) == ("pet", [("owns_pet", "Pickle")])
    # asked after by one speaker, talked of by the other: the other's (a statement each would be a tie)
    assert pets([("Nadia", "Morning! How's Pickle's paw?"), ("Tomas", "Healing, the vet's pleased."),
                 ("Nadia", "Saw Pickle on the plot, he looked happy."), ("Tomas", "Pickle sends his love."),
                 ("Nadia", "Anyway how's Pickle? Not seen him for a bit.")]) == ("pet", [("owns_pet", "Pickle")])
    # what an animal has is not enough alone: "Pickle's lead role" with no pet word said about Pickle is a person's
    assert pets([("Nadia", "How's Pickle's lead role going?"), ("Tomas", "Pickle loves it.")])[0] == "person"
    # a word also written in lowercase is no name, however many dogs are around it
    assert pets([("Nadia", "Pickle loves the dog park."), ("Tomas", "My dogs too. Out in pickle fields all day."),
                 ("Nadia", "Pickle's paw is better, the vet says."), ("Tomas", "Good dog.")])[0] == "person"


# --- version 9: tenure, tag questions, roles in a group, workmates, dropped subjects, inference -------------------

@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Nadia", "My brother Luca rang. He's been at Harwick Cider nearly three years and still can't drink it.")],
     "Luca", "works_at", "Harwick Cider"),
    ([("Nadia", "I'm a paralegal. Nine years at Brough & Penn next month, can you believe it.")], "Nadia", "works_at",
     "Brough & Penn"),
    ([("Omar", "Ilse's your cousin, right?"), ("Nadia", "Second cousin, but yes.")], "Ilse", "cousin_of", "Nadia"),
    ([("Nadia", "Teodor is treasurer of the Millbrook Rowing Club now.")], "Teodor", "member_of",
     "Millbrook Rowing Club"),
    ([("Omar", "Saw Renske at the market."), ("Nadia", "Renske from your work?"), ("Omar", "Yep, same floor.")],
     "Renske", "colleague_of", "Omar"),
    ([("Nadia", "Bram has been on my team since March, he's great.")], "Bram", "colleague_of", "Nadia"),
    ([("Nadia", "Who's Keir?"), ("Omar", "Old friend from college. Lives up in Dundee with his boys.")], "Keir",
     "lives_in", "Dundee"),
    ([("Nadia", "I'm covering at Ashdown Pharmacy till six.")], "Nadia", "works_at", "Ashdown Pharmacy"),
    ([("Nadia", "Tamsin rang. She's chosen the marine modules at Penrose College.")], "Tamsin", "studies_at",
     "Penrose College"),
])
def test_relation_patterns_version_nine(lines, subject, predicate, target):
    profiles = _one_batch([*lines, ("Omar", "Nice.")] if lines[-1][0] == "Nadia" else lines)
    assert (predicate, target) in _rels(profiles[subject]), {n: _rels(p) for n, p in profiles.items()}


def test_a_tag_question_answered_no_states_nothing():
    profiles = _one_batch([("Omar", "Ilse's your cousin, right?"), ("Nadia", "No, she's Dana's cousin.")])
    assert ("cousin_of", "Nadia") not in _rels(profiles["Ilse"])
    profiles = _one_batch([("Omar", "Renske from your work?"), ("Nadia", "Nope, from choir.")])
    assert not _rels(profiles.get("Renske", Entity(id="x", name="x")))


@pytest.mark.parametrize("said", [
    "Two weeks at Harwick Cider's tasting room was plenty.",  # weeks: a stay, not a job
    "Luca spent three years at Leeds.",  # a place is no employer
    "Lives in Dundee?",  # a question states nothing
    "Sounds good, works for me.",  # a dropped "it", not a person
])
def test_no_employer_or_home_from_stays_places_questions_or_idioms(said):
    profiles = _one_batch([("Nadia", "Keir called."), ("Omar", said), ("Nadia", "Ok.")])
    assert not [r for p in profiles.values() for r in _rels(p) if r[0] in ("works_at", "lives_in")], \
        {n: _rels(p) for n, p in profiles.items()}


def test_next_to_someone_is_no_place():
    profiles = _one_batch([("Nadia", "The conductor moved me next to Saoirse."), ("Omar", "Ha.")])
    assert not any(a.key == "why" and "place" in a.value for a in profiles["Saoirse"].attributes)


def test_a_workmate_of_someone_with_one_employer_works_there_too():
    from gravity_engine.anchors import Relation
    from gravity_engine.extract.classic.inference import infer_relations

    anchors = AnchorSet(entities=[
        Entity(id="n", name="Nadia", type="person", relations=[
            Relation(predicate="works_at", target="Brough & Penn", source_ids=["u1"])]),
        Entity(id="b", name="Bram", type="person", relations=[
            Relation(predicate="colleague_of", target="Nadia", source_ids=["u7"])]),
        Entity(id="m", name="Mira", type="person", relations=[
            Relation(predicate="manager_of", target="Nadia", source_ids=["u9"]),
            Relation(predicate="works_at", target="Kestrel Bank", source_ids=["u9"])]),
        Entity(id="o", name="Brough & Penn", type="organization"),
        Entity(id="k", name="Kestrel Bank", type="organization")])
    assert infer_relations(anchors) == 1
    bram = anchors.entities[1]
    assert [(r.predicate, r.target, r.target_id, r.source_ids) for r in bram.relations][-1] == \
        ("works_at", "Brough & Penn", "o", ["u7", "u1"])
    # an employer of one's own stays the only one; a second run adds nothing
    assert [r.target for r in anchors.entities[2].relations if r.predicate == "works_at"] == ["Kestrel Bank"]
    assert infer_relations(anchors) == 0


def test_tools_ner_takes_for_people_are_products_and_no_colleagues():
    profiles = _one_batch([("Nadia", "I've worked with Python and C++ for years."), ("Omar", "Cool."),
                           ("Nadia", "I work with Dana on the audit.")])
    assert profiles["Python"].type == "product" and not _rels(profiles["Python"])
    assert ("colleague_of", "Nadia") in _rels(profiles["Dana"])


@pytest.mark.parametrize("said", ["So cute! I love your turtles so much!", "That's what I like to hear!",
                                  "I love the thought Omar!", "Nature's awesome, I'm a huge fan of it."])
def test_compliments_and_idioms_are_no_tastes(said):
    profiles = _one_batch([("Nadia", said), ("Omar", "Ha, thanks.")])
    assert not _rels(profiles["Nadia"]), _rels(profiles["Nadia"])


def test_lists_bare_words_and_breeds_make_no_kin_or_pets():
    profiles = _one_batch([("Nadia", "My girlfriend, Toby and I are going camping."), ("Omar", "Fun!"),
                           ("Nadia", "Definitely! Our families taught us a lot, like my mom always said.")])
    assert not [r for p in profiles.values() for r in _rels(p) if r[0] in ("partner_of", "parent_of")], \
        {n: _rels(p) for n, p in profiles.items()}
    turns = [("Omar", "German Shepherds are loyal, your pup will love the trails."), ("Nadia", "My dog agrees!"),
             ("Omar", "A German Shepherd needs long walks and the vet twice a year."), ("Nadia", "Dogs, eh.")]
    assert _pet_context(turns, "German", "other", ("Omar", "Nadia")) == ("other", [])


def test_her_is_the_unnamed_subject_not_the_last_name_said():
    profiles = _one_batch([("Nadia", "Grandad Ken promised to teach the kids dovetails."), ("Omar", "Lovely."),
                           ("Nadia", "And my little sister is flying over in July with her girlfriend Sigrid.")])
    assert profiles["Sigrid"].type == "person"
    assert not _rels(profiles["Sigrid"]), _rels(profiles["Sigrid"])


def test_he_after_a_question_about_your_dad_is_the_dad_not_the_last_name():
    profiles = _one_batch([("Nadia", "Jonas made a spreadsheet, of course."), ("Omar", "Has your dad come round?"),
                           ("Nadia", "Slowly. He's coming down from Scarborough for Easter.")])
    assert not _rels(profiles["Jonas"]), _rels(profiles["Jonas"])
    profiles = _one_batch([("Omar", "How's Jonas?"), ("Nadia", "Good. He lives in Scarborough now.")])
    assert ("lives_in", "Scarborough") in _rels(profiles["Jonas"])


@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Omar", "Where was Bettina before?"), ("Nadia", "Four years at the Carrick Hotel, running the kitchen.")],
     "Bettina", "works_at", "Carrick Hotel"),
    ([("Omar", "Does Idris need an office?"), ("Nadia", "No, Idris works remotely for Saltmarsh Labs.")], "Idris",
     "works_at", "Saltmarsh Labs"),
    ([("Omar", "Still earlies at St Columba's?"), ("Nadia", "Yep. I'm a porter on the surgical floor there.")],
     "Nadia", "works_at", "St Columba"),
])
def test_answers_about_someone_asked_and_names_the_parser_misplaces(lines, subject, predicate, target):
    profiles = _one_batch(lines)
    assert (predicate, target) in _rels(profiles[subject]), {n: _rels(p) for n, p in profiles.items()}
    assert not [r for r in _rels(profiles["Nadia"]) if r[0] == "works_at"] or subject == "Nadia"


@pytest.mark.timeout(30)
def test_a_possessive_in_a_sentence_without_a_verb_is_read_and_ends():
    """"Her girlfriend Sigrid, lovely." has no verb: finding the clause's subject climbs to the root and stops there
    (a climb that compared tokens by identity never stopped: spaCy makes a new Token per access)."""
    profiles = _one_batch([("Nadia", "My sister came over."), ("Omar", "Her girlfriend Sigrid, lovely."),
                           ("Nadia", "Yes!")])
    assert profiles["Sigrid"].type == "person"


def test_come_visit_me_in_a_place_is_where_the_speaker_lives():
    profiles = _one_batch([("Nadia", "We'll do video calls. And you have to come visit me in Lisbon."),
                           ("Omar", "Deal. I visited my aunt in Porto last year."),
                           ("Nadia", "Come and see us in Braga too!")])
    assert {("lives_in", "Lisbon"), ("lives_in", "Braga")} <= set(_rels(profiles["Nadia"]))
    assert not [r for r in _rels(profiles["Omar"]) if r[0] == "lives_in"]


@pytest.mark.parametrize("lines, subject, predicate, target", [
    ([("Priya", "Marco Silva, a data engineer on my team, is building the ingestion pipeline.")],
     "Marco Silva", "colleague_of", "Priya"),
    ([("Priya", "Rachel Kim from our legal team reviewed the agreement yesterday.")], "Rachel Kim", "colleague_of",
     "Priya"),
    ([("Priya", "Sent. Also, I signed a lease in Ballard! I move on May 18.")], "Priya", "lives_in", "Ballard"),
])
def test_relation_patterns_round_nine(lines, subject, predicate, target):
    profiles = _one_batch(lines)
    assert (predicate, target) in _rels(profiles[subject])


@pytest.mark.parametrize("lines, name", [
    ([("Tom", "We might sign a lease in Leeds next year.")], "Tom"),  # a maybe is no home
    ([("Priya", "Rachel Kim from Legal called.")], "Rachel Kim"),  # no "my/our" team: whose colleague?
])
def test_no_relation_from_a_maybe_or_an_unowned_team(lines, name):
    profiles = _one_batch(lines)
    assert not profiles[name].relations


def test_a_name_along_the_river_is_a_place():
    profiles = _one_batch([("Tom", "I did 18 miles on Saturday along the Charles with my running club.")])
    assert profiles["Charles"].type == "place"


# Ways of saying where one lives, works and belongs that no earlier rule read (written for this round, not
# taken from any gold conversation)
@pytest.mark.parametrize("said, predicate, target", [
    ("I'd be commuting from Bristol to London three days a week.", "lives_in", "Bristol"),
    ("The commute from Reading is killing me.", "lives_in", "Reading"),
    ("We just bought a house in Harrogate!", "lives_in", "Harrogate"),
    ("We're renting a flat in Porto until the summer.", "lives_in", "Porto"),
    ("My neighbours in Didsbury are lovely.", "lives_in", "Didsbury"),
    ("Leeds is home now.", "lives_in", "Leeds"),
    ("Been in Cardiff three years now and I love it.", "lives_in", "Cardiff"),
    ("We live just outside Bath.", "lives_in", "Bath"),
    ("Been at Lidl six months now.", "works_at", "Lidl"),
    ("I got promoted at Deloitte last week!", "works_at", "Deloitte"),
    ("I joined Northwind as a data analyst in May.", "works_at", "Northwind"),
    ("I'm a nurse at St Mary's Hospital.", "works_at", "St Mary's Hospital"),
    ("I run a small bakery called Crumb & Co.", "works_at", "Crumb & Co"),
    ("We started a podcast called Low Tide.", "works_on", "Low Tide"),
    ("I'm flat out finishing Harbourlight before the demo.", "works_on", "Harbourlight"),
    ("I'm in my second year at Kirkgate Uni.", "studies_at", "Kirkgate Uni"),
    ("I've signed up with the Yare Valley Harriers.", "member_of", "Yare Valley Harriers"),
])
def test_homes_jobs_and_clubs_said_in_passing(said, predicate, target):
    profiles = _one_batch([("Ana", said), ("Ben", "Nice.")])
    assert (predicate, target) in _rels(profiles["Ana"])


@pytest.mark.parametrize("said", [
    "I'd live in Paris if I could.", "We might buy a house in Harrogate.", "We're going to rent a flat in Porto.",
    "We didn't buy the house in Harrogate in the end.", "Do you rent a flat in Porto?",
    "My commute from Reading used to be awful.", "Tom's commute from Reading is long.",
    "Been in Paris a week, flying home Sunday.", "Been at Glastonbury for three days!", "Leeds isn't home any more.",
    "Big news: I signed with Eden Valley Flour on Friday.",
])
def test_no_home_job_or_club_from_plans_the_past_trips_or_deals(said):
    profiles = _one_batch([("Ana", said), ("Ben", "Nice.")])
    assert not [r for r in profiles["Ana"].relations if r.predicate in ("lives_in", "works_at", "member_of")]


@pytest.mark.parametrize("said, predicate, target", [
    ("Already signed up! It's called Salmon Bay Clay, and my first class there is this Thursday.", "member_of",
     "Salmon Bay Clay"),
    ("I joined a climbing gym last month. It's called The Arch.", "member_of", "Arch"),
    ("I started a podcast last year. It's called Low Tide.", "works_on", "Low Tide"),
])
def test_what_the_speaker_joined_or_started_named_in_the_next_sentence(said, predicate, target):
    profiles = _one_batch([("Ana", said), ("Ben", "Nice.")])
    assert (predicate, target) in _rels(profiles["Ana"])
    assert profiles[target].type in ("organization", "project")


@pytest.mark.parametrize("said", ["Did you join a gym? It's called The Arch, right?",
                                  "I found a great cafe. It's called Bean There.",
                                  "I might join a choir. It's called Voices."])
def test_no_membership_from_a_question_a_find_or_a_maybe(said):
    profiles = _one_batch([("Ana", said), ("Ben", "Nice.")])
    assert not profiles["Ana"].relations
