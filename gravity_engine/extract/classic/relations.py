"""Every relation rule run over one parsed utterance (``read_relations``): the noun, verb and matcher patterns, the
entity a verb's subject stands for, and the rules that read a whole sentence ("Been at Lidl six months now", "It's
called Salmon Bay Clay", "come visit me in Seattle", "Priya from your work", "two weeks with Elif in Gloucester")."""

from __future__ import annotations

from ...anchors import Entity
from .facts import hedged
from .grammar import is_first_person, subject_of
from .lexicon import NOT_NAMES, TIME_WORDS
from .names import full_name, looks_like_name, clean_name
from .noun_patterns import addressed_kin, job_patterns, kin_names, mutual_ties, noun_patterns
from .profiles import ProfileBook, is_school, relate, shorten
from .references import BUILD_VERBS, confirmed, known_person, owner_of, person_before, possessor
from .verb_patterns import BUSINESS_NOUNS, LIKE, MADE_NOUNS, OWN_VERBS, matched_relations, pet_names, verb_patterns
from .wordlists import word_list


# "Lives out in Malton", "Works at the brewery now": where a dropped subject's verb still says something
_DROPPED_SUBJECT_VERBS = set(word_list("entities", "_DROPPED_SUBJECT_VERBS"))
_WORKPLACE_NOUNS = set(word_list("entities", "_WORKPLACE_NOUNS"))


def _subject_entity(book: ProfileBook, verb, speaker: Entity, other: str | None, source_id: str) -> Entity | None:
    subj = subject_of(verb)
    if subj is None:
        # "Lives out in Malton, workshop at the bottom of his garden": a dropped "he"/"she" (a third-person verb
        # opening its sentence) is the person just talked about
        if verb.tag_ == "VBZ" and verb.i == verb.sent.start and verb.lemma_.lower() in _DROPPED_SUBJECT_VERBS and \
                not verb.sent.text.rstrip().endswith("?") and (named := person_before(book, verb)) is not None:
            return book.entity(named, "person", source_id)
        return None
    if is_first_person(subj):
        return speaker
    if subj.lower_ == "you":
        return None  # what the listener does is mostly asked or praised, not stated
    if subj.lower_ in ("who", "that") and verb.dep_ == "relcl":
        return owner_of(book, verb.head, speaker, other, source_id)  # "my cousin Kenta, who lives in Osaka"
    if subj.lower_ in ("she", "he") and (named := person_before(book, subj)) is not None:
        return book.entity(named, "person", source_id)  # "Tasha? She lives in Bristol now"
    return owner_of(book, subj, speaker, other, source_id)


_ARRIVE_VERBS = set(word_list("entities", "_ARRIVE_VERBS"))
_ARRIVE_PARTICLES = set(word_list("entities", "_ARRIVE_PARTICLES"))


def _visitor_homes(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Where someone comes over from is where they live ("my mum's flying in from Izmir", "Did Maren make it over
    from Cardiff?"), and so is where they have been for how long ("How long has she been in Lisbon now?"): asked
    or said, the place is taken as known. Not the speaker's own travel nor a way back ("I just got back from Paris")."""
    for prep in doc:
        if prep.dep_ != "prep" or prep.head.pos_ not in ("VERB", "AUX"):
            continue
        verb, kids = prep.head, list(prep.head.children)
        if prep.lower_ == "from":
            ok = verb.lemma_.lower() in _ARRIVE_VERBS and not any(c.lower_ == "back" for c in kids) and any(
                c.dep_ in ("prt", "advmod") and c.lower_ in _ARRIVE_PARTICLES for c in kids)
        else:
            ok = prep.lower_ == "in" and verb.lemma_ == "be" and any(c.lemma_ == "have" for c in kids) and any(
                c.lower_ == "long" and any(g.lower_ == "how" for g in c.children) for c in kids)
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        subj = subject_of(verb)
        if not ok or pobj is None or pobj.ent_type_ in ("ORG", "FAC", "DATE", "TIME") or subj is None \
                or is_first_person(subj):
            continue
        if subj.lower_ == "you":
            who = book.entity(other, "person", source_id) if other else None
        elif subj.lower_ in ("she", "he"):
            who = book.entity(named, "person", source_id) if (named := person_before(book, subj)) else None
        else:
            who = owner_of(book, subj, speaker, other, source_id)
        if who is not None and who.type == "person":
            relate(book, who, "lives_in", pobj, source_id)


_CLUB_SESSIONS = set(word_list("entities", "_CLUB_SESSIONS"))


def _club_sessions(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """A named group's training in the speaker's own plans is the speaker's group: "I'll ring him after Harbourside
    Hornets training", "I've got Hornets practice tonight"."""
    for noun in doc:
        if noun.lemma_.lower() not in _CLUB_SESSIONS or noun.pos_ != "NOUN" or noun.sent.text.rstrip().endswith("?"):
            continue
        names = [c for c in noun.children if c.dep_ == "compound" and c.pos_ == "PROPN" and c.text[:1].isupper()]
        if not names or not any(t.dep_ == "nsubj" and is_first_person(t) for t in noun.sent):
            continue
        name = clean_name(full_name(names[-1]))
        known = book.get(name)
        # NER's "person" gives way ("Harbourside Hornets" is PERSON to it); a type set by context does not
        if looks_like_name(name) and name.lower() not in NOT_NAMES and (known is None or known.type in (
                "organization", "other") or known.type == "person" and not book.typed_by_context(known)) \
                and book.canonical(name)[0] not in book.speakers:
            org = book.entity(name, "organization", source_id, noun.sent.text,
                              why=f'group of {speaker.name} ("{shorten(noun.sent.text, 60)}")')
            book.relation(speaker, "member_of", org.name, source_id)


def _staying_with(book: ProfileBook, doc, source_id: str) -> None:
    """Staying with someone somewhere says where they live: "Two (weeks) with Elif in Gloucester"."""
    for prep in doc:
        if prep.lower_ != "with" or prep.dep_ != "prep":
            continue
        person = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN" and g.text[:1].isupper()),
                      None)
        where = next((g for g in person.children if g.dep_ == "prep" and g.lower_ == "in"), None) if person else None
        place = next((g for g in where.children if g.dep_ == "pobj" and g.ent_type_ in ("GPE", "LOC")), None) \
            if where is not None else None
        if place is None:
            continue
        name = full_name(person)
        known = book.get(name)
        # NER's guess for a first name is often a place or a company: then it has to be known as a person already
        if not looks_like_name(name) or name.lower() in NOT_NAMES or book.canonical(name)[0] in book.speakers or (
                known is not None and known.type not in ("person", "other")) or (
                person.ent_type_ not in ("PERSON", "") and (known is None or known.type != "person")):
            continue
        relate(book, book.entity(name, "person", source_id, person.sent.text), "lives_in", place, source_id)


def _workplace_of(tok):
    """The workplace noun said with a name: "Priya from your work", "Rachel Kim from our legal team reviewed
    it" (the parser hangs "from" on the verb right after the name), "Marco Silva, a data engineer on my team"."""
    preps = [c for c in tok.children if c.dep_ == "prep" and c.lower_ == "from"]
    if tok.dep_ in ("nsubj", "nsubjpass"):
        preps += [c for c in tok.head.children if c.dep_ == "prep" and c.lower_ == "from" and c.i == tok.i + 1]
    preps += [p for a in tok.children if a.dep_ == "appos" and a.pos_ == "NOUN"
              for p in a.children if p.dep_ == "prep" and p.lower_ in ("on", "in", "from")]
    return next((g for p in preps for g in p.children if g.dep_ == "pobj" and g.lemma_ in _WORKPLACE_NOUNS), None)


def _workmates(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """"Priya from your work?" (unless the answer says no), "Tom from my office says hi", "Rachel Kim from our
    legal team", "Marco Silva, a data engineer on my team": a colleague."""
    for tok in doc:
        if tok.pos_ != "PROPN" or tok.ent_type_ not in ("PERSON", ""):
            continue
        place = _workplace_of(tok)
        if place is None:
            continue
        reply = confirmed(book) if tok.sent.text.rstrip().endswith("?") else None
        if tok.sent.text.rstrip().endswith("?") and reply is None:
            continue
        owner = possessor(book, place, speaker, other, source_id)
        name = full_name(tok)
        known = book.get(name)
        if owner is None or owner.type != "person" or not looks_like_name(name) or name.lower() in NOT_NAMES or (
                known is not None and known.type != "person" and book.typed_by_context(known)):
            continue
        mate = book.entity(name, "person", source_id, tok.sent.text,
                           why=f'a colleague of {owner.name} ("{shorten(tok.sent.text, 60)}")')
        if mate.name != owner.name:
            book.relation(mate, "colleague_of", owner.name, source_id)
            if reply is not None:
                book.relation(mate, "colleague_of", owner.name, reply)


def _visit_me_in(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"You have to come visit me in Seattle", "Come and see us in Leeds": where the speaker lives."""
    for tok in doc:
        if tok.lemma_.lower() not in ("visit", "see") or any(c.dep_ == "neg" for c in tok.children) or \
                not any(c.dep_ == "dobj" and c.lower_ in ("me", "us") for c in tok.children):
            continue
        for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == "in"):
            # a town NER takes for a person ("Braga") still counts; "in June" does not
            pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.ent_type_ not in ("DATE", "TIME")), None)
            if pobj is not None:
                relate(book, speaker, "lives_in", pobj, source_id)


_DURATION_WORDS = set(word_list("entities", "_DURATION_WORDS"))  # not days or weeks: "Been in Paris a week" is a trip


def _been_there(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"Been at Lidl six months now" (the speaker's work), "Been in Cardiff three years" (home): a sentence
    that opens with "Been", a place or an organisation and how long; "Leeds is home now": home."""
    for sent in doc.sents:
        if sent.text.rstrip().endswith("?"):
            continue
        first = sent[0]
        if first.lower_ == "been" and first.dep_ == "ROOT" and any(
                t.lemma_.lower() in _DURATION_WORDS for t in sent if t.i > first.i):
            for prep in (c for c in first.children if c.dep_ == "prep" and c.lower_ in ("at", "in")):
                # NER reads "Lidl six months" as one date; the name is still a name
                pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN"
                             and g.lower_ not in TIME_WORDS), None)
                if pobj is None:
                    continue
                known = book.get(full_name(pobj))
                if prep.lower_ == "in" and pobj.ent_type_ in ("GPE", "LOC", "DATE", ""):
                    relate(book, speaker, "lives_in", pobj, source_id)
                elif prep.lower_ == "at" and (known is None or known.type in ("organization", "other")):
                    relate(book, speaker, "studies_at" if is_school(pobj) else "works_at", pobj, source_id)
        root = sent.root
        home = next((c for c in root.children if c.dep_ in ("attr", "advmod") and c.lower_ == "home"), None)
        subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
        if root.lemma_ == "be" and home is not None and subj is not None and subj.pos_ == "PROPN" and \
                subj.ent_type_ in ("GPE", "LOC", "") and not any(c.dep_ == "neg" for c in root.children) and \
                not any(c.dep_ == "poss" for c in home.children):
            relate(book, speaker, "lives_in", subj, source_id)


_JOINING = set(word_list("entities", "_JOINING"))


def _called_it(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"Already signed up! It's called Salmon Bay Clay": what the speaker joined, started or runs, named in
    the next sentence ("I started a podcast last year. It's called Low Tide")."""
    sents = list(doc.sents)
    for before, sent in zip(sents, sents[1:]):
        root = sent.root
        name = next((c for c in root.children if c.dep_ in ("oprd", "attr", "xcomp") and c.pos_ == "PROPN"), None)
        if root.lemma_.lower() not in ("call", "name") or name is None or not any(
                c.dep_ in ("nsubjpass", "nsubj") and c.lower_ in ("it", "this", "she", "he") for c in root.children):
            continue
        verb = before.root
        if verb.pos_ != "VERB" or any(c.dep_ == "neg" for c in verb.children) or hedged(verb) or \
                before.text.rstrip().endswith("?"):
            continue
        subj = subject_of(verb)
        if not (is_first_person(subj) or (subj is None and verb.i == before.start + (before[0].dep_ == "advmod"))):
            continue  # the speaker's own, said or with the "I" dropped ("Already signed up!")
        lemma = verb.lemma_.lower()
        joined = lemma in _JOINING or (lemma == "sign" and any(c.dep_ == "prt" and c.lower_ == "up"
                                                               for c in verb.children))
        made = next((c for c in verb.children if c.dep_ == "dobj" and c.lemma_.lower() in MADE_NOUNS), None)
        if joined:
            relate(book, speaker, "member_of", name, source_id)
        elif made is not None and lemma in OWN_VERBS:
            relate(book, speaker, "works_at" if made.lemma_.lower() in BUSINESS_NOUNS else "works_on", name,
                    source_id)


def read_relations(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Relations and attributes from every pattern of a parsed utterance."""
    _been_there(book, doc, speaker, source_id)
    _called_it(book, doc, speaker, source_id)
    _visitor_homes(book, doc, speaker, other, source_id)
    _visit_me_in(book, doc, speaker, source_id)
    _workmates(book, doc, speaker, other, source_id)
    _club_sessions(book, doc, speaker, source_id)
    _staying_with(book, doc, source_id)
    kin_names(book, doc, speaker, source_id)
    addressed_kin(book, doc, speaker, other, source_id)
    mutual_ties(book, doc, speaker, other, source_id)
    noun_patterns(book, doc, speaker, other, source_id)
    pet_names(book, doc, source_id)
    job_patterns(book, doc, speaker, source_id)
    matched_relations(book, doc, speaker, other, source_id)
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.dep_ in ("aux", "auxpass") or \
                (tok.dep_ == "xcomp" and tok.lemma_.lower() not in BUILD_VERBS | {"work"}) or \
                (tok.sent.text.rstrip().endswith("?") and not (tok.dep_ == "relcl" and (
                    tok.head.pos_ == "PROPN" or known_person(book, tok.head)))):
            # "I started working on Atlas": the xcomp carries the relation; a question states nothing, but
            # its relative clause on a name takes its content as known ("Carys who moved to Plymouth?"; not
            # "What's something you like doing?")
            continue
        who = _subject_entity(book, tok, speaker, other, source_id)
        subj = subject_of(tok)
        if who is None and other and subj is not None and subj.lower_ == "you" and (
                tok.lemma_.lower() in LIKE or tok.lemma_.lower() == "stand"):
            who = book.entity(other, "person", source_id)  # "you hate flying": a statement about the listener
        if who is not None and who.type in ("person", "other"):
            verb_patterns(book, tok, who, speaker, source_id)
