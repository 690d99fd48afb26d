"""Relations read from a noun: naming patterns ("my sister Anna", "our dog Biscuit", "my running club, the Harbor
Striders", "the model MedLLM", "Anna is my sister": ``noun_patterns``), kin words used as names or to address the
listener ("Mum called", "Thanks, bro!"), and job and home nouns that say where someone works or lives with no verb
to say it ("my new position at Globex", "our flat in Bristol": ``job_patterns``)."""

from __future__ import annotations

from ...anchors import Entity
from .facts import hedged
from .grammar import FUTURE_AUX, is_first_person, subject_of
from .lexicon import FAMILY, KIN, NOT_NAMES, PERSON_NOUNS, PET_MODIFIERS, PETS
from .names import full_name, looks_like_name
from .profiles import (GROUP_PREDICATES, KIN_NAMES, PRODUCT_NOUNS, PROJECT_NOUNS, ROLE_PREDICATES, ProfileBook,
                       is_school, name_of, quote, relate, shorten, unknown_word)
from .references import confirmed, org_before, possessor
from .wordlists import word_list


def kin_names(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"Mum called", "ask Dad": a kin word used as a name is the speaker's relative."""
    for tok in doc:
        low = tok.lower_
        if low not in KIN_NAMES or not tok.text[:1].isupper() or tok.pos_ not in ("PROPN", "NOUN"):
            continue
        if any(c.dep_ in ("poss", "det") for c in tok.children) or tok.dep_ == "compound":
            continue
        if tok.sent.text.rstrip().endswith("?") and tok.dep_ == "npadvmod":
            continue
        name = tok.text[:1].upper() + low[1:]
        said = shorten(tok.sent.text, 60)
        kin = book.entity(name, "person", source_id, tok.sent.text, why=f'{speaker.name}\'s {low} ("{said}")')
        book.relation(kin, ROLE_PREDICATES.get(low, "parent_of"), speaker.name, source_id)


# Kin words people address each other with; "mate", "buddy", "love" are said to anyone.
VOCATIVE_KIN = set(word_list("entities", "VOCATIVE_KIN"))


def addressed_kin(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """"You're my little sis": the listener is the speaker's kin; "as your big brother": the speaker
    is the listener's."""
    if not other:
        return
    for tok in doc:
        if tok.dep_ not in ("attr", "pobj") or tok.pos_ != "NOUN":
            continue
        pred = ROLE_PREDICATES.get(tok.lemma_.lower())
        if pred is None or pred == "reports_to" or name_of(tok) is not None:
            continue
        poss = next((c.lower_ for c in tok.children if c.dep_ == "poss"), None)
        if poss == "my" and tok.dep_ == "attr" and tok.head.lemma_ == "be" and not \
                tok.sent.text.rstrip().endswith("?"):
            subj = subject_of(tok.head)
            if subj is not None and subj.lower_ == "you":
                book.relation(book.entity(other, "person", source_id), pred, speaker.name, source_id)
        elif poss == "your" and tok.dep_ == "pobj" and tok.head.lower_ == "as":
            book.relation(speaker, pred, other, source_id)
    for tok in doc:  # "Good luck, little sis.", "Thanks, bro!": the listener addressed by a kin word
        pred = ROLE_PREDICATES.get(tok.lemma_.lower() if tok.lower_ not in VOCATIVE_KIN else tok.lower_)
        if tok.lower_ not in VOCATIVE_KIN or pred is None or tok.i == 0 or doc[tok.i - 1].text != "," and not (
                doc[tok.i - 1].dep_ == "amod" and tok.i > 1 and doc[tok.i - 2].text == ","):
            continue
        if any(c.dep_ == "poss" and c.lower_ != "my" for c in tok.children) or name_of(tok) is not None or \
                tok.dep_ not in ("appos", "npadvmod", "vocative", "ROOT", "dep", "intj", "conj", "attr"):
            continue
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        if nxt is None or nxt.is_punct:
            book.relation(book.entity(other, "person", source_id), pred, speaker.name, source_id)


# Ties that hold both ways, said of "you" or "we" with no "my" ("you're a true friend", "we're colleagues"), and
# nouns that name a tie ("our friendship"): what the speaker and the listener are to each other.
MUTUAL_ROLES = set(word_list("entities", "MUTUAL_ROLES"))
TIE_NOUNS = dict(pair.split() for pair in word_list("entities", "TIE_NOUNS"))
THIRD_PERSON = set(word_list("entities", "THIRD_PERSON"))
PEOPLE_NOUNS = set(ROLE_PREDICATES) | KIN | PERSON_NOUNS  # "my teammates", "the kids", "a designer"


def mutual_ties(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """"You're a true friend", "we've been friends since school", "a friend like you", "thanks for being such a
    great friend", "your friendship means a lot": the speaker and the listener are friends (colleagues,
    cousins...). A tie to someone else ("friends with the Okafors", "a good friend to Sarah", "friends from the
    gym"), a question, a negation or a hedge says nothing of the two."""
    if not other:
        return
    for tok in doc:
        lemma = tok.lemma_.lower()
        if tok.pos_ != "NOUN" or tok.sent.text.rstrip().endswith("?") or any(
                c.dep_ == "prep" and c.lower_ in ("with", "to", "of", "from") for c in tok.children):
            continue
        poss = next((c.lower_ for c in tok.children if c.dep_ == "poss"), None)
        if lemma in TIE_NOUNS and (poss == "your" or poss == "our" and not _someone_else_before(tok, other)):
            pred = TIE_NOUNS[lemma]
        elif lemma in MUTUAL_ROLES and poss is None and name_of(tok) is None and _said_of_us(tok, other):
            pred = ROLE_PREDICATES[lemma]
        else:
            continue
        clause = tok.head if tok.dep_ == "attr" else tok
        if any(c.dep_ == "neg" for c in clause.children) or (clause.pos_ in ("VERB", "AUX") and hedged(clause)):
            continue
        book.relation(book.entity(other, "person", source_id), pred, speaker.name, source_id)


def _said_of_us(tok, other: str) -> bool:
    """Whether a role noun is said of the listener ("you're a true friend", "a friend like you", "thanks for being
    a great friend") or of the speaker and the listener together ("we are friends"; not after someone else is
    named or called he or she: "my friend Jun Wei. we've been friends since my first week")."""
    if any(c.dep_ == "prep" and c.lower_ == "like" and any(g.lower_ == "you" for g in c.children)
           for c in tok.children):  # whose friend, when someone else was named first: "she ... a friend like you"
        return not _someone_else_before(tok, other)
    if tok.dep_ != "attr" or tok.head.lemma_ != "be" or tok.head.dep_ == "xcomp" or any(
            c.dep_ == "aux" and c.tag_ == "MD" for c in tok.head.children):
        return False  # ahead or wished: "we're gonna be friends", "we'll be friends", "we should be colleagues"
    subj = subject_of(tok.head)
    if subj is None:  # "Thanks for being such a great friend"
        up = tok.head.head
        return tok.head.dep_ == "pcomp" and up.lower_ == "for" and up.head.lemma_.lower() == "thank"
    if subj.lower_ == "we":  # not a past tie: "We were teammates for four years in high school"
        return tok.tag_ == "NNS" and tok.head.tag_ != "VBD" and not _someone_else_before(subj, other)
    return subj.lower_ == "you"


def _someone_else_before(tok, other: str) -> bool:
    """Whether the utterance names someone other than the listener, says he, she or they, or speaks of people
    ("my teammates") before ``tok``: then "we" and "our" may be the speaker and them ("They signed it to show our
    friendship")."""
    return any(t.lower_ in THIRD_PERSON or (t.pos_ == "PROPN" and t.text != other) or (
        t.pos_ == "NOUN" and t.lemma_.lower() in PEOPLE_NOUNS) for t in tok.doc[:tok.i])


def _name_before_comma(tok):
    """The capitalised word before "X, the <modifiers> <tok>" (the parser often misses this apposition)."""
    k = tok.i - 1
    while k > tok.sent.start and (tok.doc[k].pos_ in ("DET", "ADJ", "NOUN", "VERB", "PRON") and tok.doc[k].dep_ in (
            "det", "amod", "compound", "npadvmod", "poss", "nmod") or tok.doc[k].text == "-"):
        k -= 1
    if k - 1 > tok.sent.start and tok.doc[k].text == "," and tok.doc[k - 1].text[:1].isupper():
        return tok.doc[k - 1]
    return None


def _named_kin_tag(book: ProfileBook, tok):
    """(name, my/your) of "Cathal's your brother, yeah?", which the small parser reads as two possessives of
    "brother"; asked, it holds unless the answer opens with a no."""
    named = next((c for c in tok.children if c.dep_ == "poss" and c.pos_ == "PROPN" and c.i == tok.sent.start
                  and any(g.dep_ == "case" for g in c.children)), None)
    mine = next((c for c in tok.children if c.dep_ == "poss" and c.lower_ in ("my", "your", "our")), None)
    if named is None or mine is None or mine.i < named.i:
        return None
    if tok.sent.text.rstrip().endswith("?") and confirmed(book) is None:
        return None
    return named, mine


def _name_beside_fragment(tok):
    """The name a bare "my/your <kin>" fragment is about: "And your brother? Is Cian still in Dublin?" (the
    fragment, then a name in the next sentence) or "Ines's, obviously. My girlfriend has ..." (a bare name,
    then the kin noun)."""
    if not any(c.dep_ == "poss" and c.lower_ in ("my", "your") for c in tok.children):
        return None
    sent = tok.sent
    doc = tok.doc
    if tok.dep_ == "ROOT" and all(t.i == tok.i or t.is_punct or t.dep_ in ("poss", "cc", "amod", "det", "intj")
                                  for t in sent):
        if sent.end < len(doc):
            nxt = doc[sent.end].sent
            names = [t for t in nxt if t.pos_ == "PROPN" and t.dep_ in ("nsubj", "nsubjpass", "attr")
                     and t.ent_type_ in ("PERSON", "", "NORP", "ORG")]
            return names[0] if len(names) == 1 else None
        return None
    if sent.start > 0 and tok.dep_ in ("nsubj", "nsubjpass"):
        prev = doc[sent.start - 1].sent
        words = [t for t in prev if not t.is_punct and t.dep_ not in ("case", "advmod", "intj", "cc")]
        # "Ines's, obviously." names; "Definitely!" is a word
        if len(words) == 1 and words[0].text[:1].isupper() and words[0].lower_ not in NOT_NAMES and (
                words[0].ent_type_ == "PERSON" or unknown_word(words[0].lower_)):
            return words[0]
    return None


def noun_patterns(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Naming patterns around a noun: "my sister Anna", "our dog Biscuit", "my running club, the Harbor
    Striders", "the model MedLLM", "Anna is my sister"."""
    for tok in doc:
        lemma = tok.lemma_.lower()
        # the small tagger makes an adjective of "spaniel" in "My spaniel Bramble sends her love"
        if tok.pos_ not in ("NOUN", "PROPN") and not (tok.pos_ == "ADJ" and lemma in PETS and tok.i + 1 < len(doc)
                                                     and doc[tok.i + 1].text[:1].isupper()):
            continue
        kind = ("pet" if lemma in PETS else "role" if lemma in ROLE_PREDICATES else "group" if lemma in GROUP_PREDICATES
                else "product" if lemma in PRODUCT_NOUNS else "project" if lemma in PROJECT_NOUNS
                else "person" if lemma in PERSON_NOUNS and (tok.pos_ == "NOUN" or tok.text.islower()) else None)
        if kind is None:
            continue
        if kind == "role" and ROLE_PREDICATES[lemma] == "friend_of" and any(
                c.dep_ == "amod" and "".join(t.lower_ for t in c.subtree) in PET_MODIFIERS for c in tok.children):
            kind = "pet"  # "my furry friend Pepper" is a dog
        name_tok = name_of(tok)
        # "Anna is my sister": the name is the subject of "is", the role noun its complement.
        if name_tok is None and tok.dep_ == "attr" and tok.head.lemma_ == "be":
            subj = next((c for c in tok.head.children if c.dep_ == "nsubj"), None)
            if subj is not None and subj.pos_ == "PROPN":
                name_tok = subj
        if name_tok is None and tok.dep_ in ("nsubj", "nsubjpass") and tok.head.lemma_ == "be":
            attr = next((c for c in tok.head.children if c.dep_ == "attr" and c.pos_ == "PROPN"), None)
            if attr is not None:
                name_tok = attr  # "my new manager will be Owen Price"
        if name_tok is None and kind in ("product", "project"):
            name_tok = _name_before_comma(tok)  # "MedLLM, the medical question-answering model"
        if name_tok is None and kind == "pet" and tok.pos_ == "ADJ":
            name_tok = doc[tok.i + 1]
        tagged = _named_kin_tag(book, tok) if kind == "role" and name_tok is None else None
        if tagged is not None:
            name_tok = tagged[0]
        if name_tok is None and kind == "role":
            name_tok = _name_beside_fragment(tok)  # "And your brother? Is Cian still in Dublin?"
        if name_tok is None:
            if kind == "pet" and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in tok.children):
                book.attribute(speaker, "pet", tok.text, source_id)
            elif kind == "role" and lemma in FAMILY and any(c.dep_ == "poss" and c.lower_ in ("my", "our")
                                                            for c in tok.children):
                book.attribute(speaker, "family", tok.text, source_id)
            continue
        name = full_name(name_tok)
        if not looks_like_name(name) or name.lower() in NOT_NAMES:
            continue
        if tagged is None:
            owner = possessor(book, tok, speaker, other, source_id)
        elif tagged[1].lower_ in ("my", "our"):
            owner = speaker
        else:  # "your": the listener
            owner = book.entity(other, "person", source_id) if other else None
        said = quote(doc, tok, name_tok)
        if kind == "pet":
            if owner is None:
                continue
            pet = book.entity(name, "pet", source_id, tok.sent.text, why=f'pet of {owner.name} ("{said}")')
            book.relation(owner, "owns_pet", pet.name, source_id)
            book.attribute(owner, "pet", said, source_id) if said.lower() in doc.text.lower() else None
        elif kind == "role" or kind == "person":
            if kind == "person" or (owner is None and lemma not in FAMILY):
                # "Marcus, a coach at Ironbridge Gym": a person by role, working where the role is
                person = book.entity(name, "person", source_id, tok.sent.text, why=f'a {lemma} ("{said}")')
                # "Hollins Mill put their prices up" - "Their rep, Colin, says ...": the organisation's person
                if any(c.dep_ == "poss" and c.lower_ in ("their", "its") for c in tok.children) and \
                        (org := org_before(book, tok)) is not None and lemma not in FAMILY:
                    book.relation(person, "works_at", org, source_id)
                for prep in (g for g in tok.children if g.dep_ == "prep" and g.lower_ in ("at", "for", "with")):
                    relate(book, person, "works_at", next((g for g in prep.children if g.dep_ == "pobj"), None),
                            source_id)
                continue
            if owner is None and any(c.dep_ == "poss" for c in tok.children):
                # "my sister ... her girlfriend Sigrid": whose is not known here, a person she is
                book.entity(name, "person", source_id, tok.sent.text, why=f'a {lemma} ("{said}")')
            if owner is None or owner.name.lower() == name.lower():
                continue
            person = book.entity(name, "person", source_id, tok.sent.text, why=f"{owner.name}'s {lemma} (\"{said}\")")
            predicate = ROLE_PREDICATES[lemma]
            if predicate == "reports_to":
                book.relation(owner, "manager_of", person.name, source_id)
            else:
                book.relation(person, predicate, owner.name, source_id)
        elif kind == "group":
            predicate = GROUP_PREDICATES[lemma]
            org = book.entity(name, "organization", source_id, tok.sent.text,
                              why=f'{lemma} of {owner.name} ("{said}")' if owner else f'the {lemma} ("{said}")')
            if owner is not None and owner.type == "person":
                book.relation(owner, predicate, org.name, source_id)
        else:
            article = "an" if lemma[:1] in "aeiou" else "a"
            thing = book.entity(name, kind, source_id, tok.sent.text, why=f'{article} {lemma} ("{said}")')
            if owner is not None:
                # "my favourite game, Starfall": one the owner likes, not one they work on
                liked = any(c.dep_ == "amod" and c.lower_ in ("favourite", "favorite") for c in tok.children)
                book.relation(owner, "likes" if liked else "works_on", thing.name, source_id)


_JOB_NOUNS = set(word_list("entities", "_JOB_NOUNS"))
_TAKE_JOB_VERBS = set(word_list("entities", "_TAKE_JOB_VERBS"))
_LEASE_NOUNS = set(word_list("entities", "_LEASE_NOUNS"))
# "We just bought a house in Harrogate", "we're renting a flat in Porto": a home the speaker now has
_HOME_GETTING_VERBS = set(word_list("entities", "_HOME_GETTING_VERBS"))
_ORDINALS = set(word_list("entities", "_ORDINALS"))
# "my neighbours in Didsbury", "the commute from Reading is killing me": where the speaker lives
_HOME_SIDE_NOUNS = {"neighbour": "in", "neighbor": "in", "commute": "from"}
_HOME_NOUNS = set(word_list("entities", "_HOME_NOUNS"))


def _home_after(book: ProfileBook, tok, speaker: Entity, words: tuple[str, ...], source_id: str) -> None:
    """The speaker lives in what follows ``tok`` after one of ``words``, on the noun or on its verb ("a lease in
    Ballard", "bought a house in Harrogate": the parser hangs "in" on either)."""
    for prep in (c for c in [*tok.children, *tok.head.children] if c.dep_ == "prep" and c.lower_ in words
                 and c.i > tok.i):
        relate(book, speaker, "lives_in", next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)


def _said_of_the_past(tok) -> bool:
    """The clause ``tok`` is in says how things were: "My commute from Reading used to be awful", "... was"."""
    verb = tok.head if tok.dep_ in ("nsubj", "nsubjpass") else None
    return verb is not None and (verb.tag_ == "VBD" or any(t.lower_ == "used" for t in verb.children) or
                                 verb.head.lower_ == "used")


def _speaker_gets_home(tok) -> bool:
    """``tok`` (a home noun) is what the speaker bought, rents or owns, said as done or going on, not planned."""
    verb = tok.head
    if tok.dep_ != "dobj" or verb.lemma_.lower() not in _HOME_GETTING_VERBS or verb.dep_ == "xcomp":
        return False
    return is_first_person(subject_of(verb)) and not hedged(verb) and not any(
        c.dep_ == "neg" or (c.dep_ == "aux" and c.lower_ in FUTURE_AUX) for c in verb.children)


def job_patterns(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"at my job at Northwind", "my new position at Globex": works_at without a work verb."""
    for tok in doc:
        lemma = tok.lemma_.lower()
        if lemma not in _JOB_NOUNS and lemma not in _HOME_NOUNS and lemma not in _LEASE_NOUNS and \
                lemma not in _HOME_SIDE_NOUNS and lemma != "year" and \
                tok.lower_ not in ("here", "home") and \
                tok.pos_ != "PROPN":
            continue
        if tok.sent.text.rstrip().endswith("?"):
            continue
        mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in tok.children)
        # "I got the job at Brightwater", "I handed in my notice at Pennine Mutual"
        taken = tok.dep_ == "dobj" and tok.head.lemma_.lower() in _TAKE_JOB_VERBS and is_first_person(
            subject_of(tok.head)) and not any(c.dep_ == "neg" for c in tok.head.children) and not hedged(tok.head)
        if lemma in _JOB_NOUNS and (mine or taken):
            verb_preps = [c for c in tok.head.children if c.dep_ == "prep" and c.lower_ == "at" and c.i > tok.i] \
                if tok.dep_ == "dobj" else []
            for prep in [c for c in tok.children if c.dep_ == "prep" and c.lower_ in ("at", "with", "for")] + verb_preps:
                relate(book, speaker, "works_at", next((g for g in prep.children if g.dep_ == "pobj"), None),
                        source_id)
        # "I signed a lease in Ballard": where the speaker lives now
        if lemma in _LEASE_NOUNS and tok.dep_ == "dobj" and is_first_person(subject_of(tok.head)) and not any(
                c.dep_ == "neg" for c in tok.head.children) and not hedged(tok.head):
            _home_after(book, tok, speaker, ("in", "on"), source_id)
        # "I'm in my second year at Kirkgate Uni": a course or a job, by the place's name
        if lemma == "year" and any(c.dep_ == "amod" and c.lower_ in _ORDINALS for c in tok.children) and any(
                c.dep_ == "poss" and c.lower_ == "my" for c in tok.children) and \
                not tok.sent.text.rstrip().endswith("?"):
            for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == "at"):
                pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.pos_ == "PROPN":
                    relate(book, speaker, "studies_at" if is_school(pobj) else "works_at", pobj, source_id)
        if lemma in _HOME_NOUNS and lemma != "move" and _speaker_gets_home(tok):
            _home_after(book, tok, speaker, ("in",), source_id)
        mine = any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in tok.children) or (
            not any(c.dep_ == "poss" for c in tok.children) and any(t.lower_ in ("me", "my", "i") for t in tok.sent))
        if lemma in _HOME_SIDE_NOUNS and mine and not _said_of_the_past(tok):
            for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == _HOME_SIDE_NOUNS[lemma]):
                relate(book, speaker, "lives_in", next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)
        # "our flat in Bristol", "Mum's house in Harrogate", "the move to Bristol"
        if lemma in _HOME_NOUNS:
            owner = possessor(book, tok, speaker, None, source_id) if any(c.dep_ == "poss" for c in tok.children) \
                else None
            if owner is not None and owner.type == "person":
                for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ in (
                        ("to",) if lemma == "move" else ("in", "near"))):
                    pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.ent_type_ in ("GPE", "LOC", "")), None)
                    if pobj is not None:
                        relate(book, owner, "lives_in", pobj, source_id)
        # "back home in Leeds" said of oneself; "here in York", "an interview here in Bristol" whoever it is about
        if tok.lower_ in ("here", "home") and tok.dep_ in ("advmod", "npadvmod", "dobj") and \
                not tok.sent.text.rstrip().endswith("?"):
            verb = tok.head
            if tok.lower_ == "here" or (is_first_person(subject_of(verb)) if verb.pos_ in ("VERB", "AUX") else False):
                # the parser hangs "in Bristol" on "here" or beside it, on the same head
                after = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
                for prep in {c for c in [*tok.children, after] if c is not None and c.dep_ == "prep" and
                             c.lower_ == "in"}:
                    pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                    # NER often calls the town an organisation here ("here in Bristol")
                    if pobj is not None and (pobj.ent_type_ == "GPE" or (
                            tok.lower_ == "here" and pobj.ent_type_ in ("ORG", "PERSON", "LOC"))):
                        relate(book, speaker, "lives_in", pobj, source_id)
        # "my friend Kenta in Osaka": a named person in a city
        if tok.pos_ == "PROPN" and (known := book.get(full_name(tok))) is not None and known.type == "person" and \
                known.name != speaker.name:
            for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == "in"):
                pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.ent_type_ == "GPE"), None)
                if pobj is not None:
                    relate(book, known, "lives_in", pobj, source_id)
