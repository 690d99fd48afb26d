"""Relations and attributes read from a verb whose subject is known (``verb_patterns``: "I live in Porto", "I love
hiking", "I'm a nurse at Cedar Clinic", "I joined the Harbor Striders"), the verb-and-preposition table they use
(``_PLACE_VERBS``), and the relations of the DependencyMatcher patterns of ``patterns.py`` (``matched_relations``)."""

from __future__ import annotations

import re

from ...anchors import Entity
from .facts import hedged
from .grammar import FUTURE_AUX, span_text
from .lexicon import NOT_NAMES, PETS
from .names import full_name, looks_like_name, suffix_type
from .patterns import relation_matches
from .profiles import (PRODUCT_NOUNS, PROJECT_NOUNS, ROLE_PREDICATES, SCHOOL_HEADS, ProfileBook, is_school, name_of,
                       quote, relate, shorten, target_name)
from .references import BUILD_VERBS, named_org, org_before, owner_of, possessor, question_before
from .wordlists import word_list


# "I want to tell you ..." is conversation, not a wish worth a profile field.
_TALK_VERBS = set(word_list("entities", "_TALK_VERBS"))
LIKE = {"love": "likes", "like": "likes", "enjoy": "likes", "adore": "likes", "hate": "dislikes",
         "dislike": "dislikes", "detest": "dislikes"}
_WISH = {"plan": "plans", "intend": "plans", "aim": "plans", "decide": "plans", "want": "wants", "hope": "wants",
         "wish": "wants"}
_VAGUE_OBJECTS = set(word_list("entities", "_VAGUE_OBJECTS"))
_NOT_IDENTITY = set(word_list("entities", "_NOT_IDENTITY"))


def _phrase(token, max_tokens: int = 8, drop_to: bool = True) -> str:
    """The token's subtree without relative clauses, as written, at most ``max_tokens`` words."""
    skip: set[int] = set()
    for child in token.children:
        if child.dep_ in ("relcl", "advcl", "punct", "cc", "conj", "parataxis") and child.i > token.i:
            skip.update(t.i for t in child.subtree)
    # Stop at the first punctuation after the head: the value stays one contiguous run of words.
    stop = next((t.i for t in token.subtree if t.is_punct and t.i > token.i), None)
    tokens = [t for t in token.subtree if t.i not in skip and (stop is None or t.i < stop)]
    while tokens and (tokens[-1].lower_ in ("too", "also", "either") or not any(c.isalnum() for c in tokens[-1].text)):
        tokens.pop()  # "flying too 😂" is "flying"
    while tokens and (tokens[-1].is_punct or tokens[-1].dep_ in ("cc", "prep", "det")):
        tokens.pop()
    while tokens and (tokens[0].is_punct or (drop_to and tokens[0].lower_ in ("to", "na") and tokens[0].dep_ == "aux")):
        tokens.pop(0)
    return span_text(tokens[:max_tokens])


_PLACE_VERBS = {("live", "in"): "lives_in", ("move", "to"): "lives_in", ("move", "into"): "lives_in", ("relocate", "to"): "lives_in",
                ("base", "in"): "lives_in", ("settle", "in"): "lives_in", ("move", "from"): "moved_from",
                ("work", "at"): "works_at", ("work", "for"): "works_at", ("work", "with"): None,
                ("intern", "at"): "works_at", ("start", "at"): "works_at",
                ("volunteer", "at"): "volunteers_at", ("volunteer", "with"): "volunteers_at", ("volunteer", "for"): "volunteers_at",
                ("study", "at"): "studies_at", ("enroll", "at"): "studies_at", ("enroll", "in"): "studies_at",
                ("enrol", "at"): "studies_at", ("major", "in"): None, ("be", "from"): "from", ("come", "from"): "from",
                ("grow", "in"): "grew_up_in", ("work", "on"): "works_on", ("join", "at"): "works_at",
                ("play", "for"): "member_of", ("sing", "in"): "member_of", ("play", "in"): "member_of",
                ("row", "for"): "member_of", ("run", "with"): "member_of", ("climb", "at"): "member_of",
                ("train", "at"): "member_of", ("teach", "at"): "works_at", ("lecture", "at"): "works_at",
                ("research", "at"): "studies_at", ("live", "near"): "lives_in", ("stay", "in"): None,
                ("cover", "at"): "works_at",  # "I'm covering at Bellhouse till 2": a shift
                ("live", "outside"): "lives_in", ("live", "around"): "lives_in",
                ("commute", "from"): "lives_in",  # "I'd be commuting from Bristol to London": home is Bristol
                # "I got promoted at Deloitte", "she was hired by Arup", "I've signed up with the Yare Valley Harriers"
                # (not "I signed with Eden Valley Flour": a supplier)
                ("promote", "at"): "works_at", ("hire", "at"): "works_at", ("hire", "by"): "works_at",
                ("employ", "by"): "works_at", ("employ", "at"): "works_at", ("sign up", "with"): "member_of"}
_ATTRIBUTE_KEYS = {("work", "as"): "occupation", ("major", "in"): "studies"}
_GROUP_ROLES = set(word_list("entities", "_GROUP_ROLES"))
_THERE_ADVERBS = set(word_list("entities", "_THERE_ADVERBS"))
_DEGREE_NOUNS = set(word_list("entities", "_DEGREE_NOUNS"))
_STUDENT_NOUNS = set(word_list("entities", "_STUDENT_NOUNS"))


def _compliment(book: ProfileBook, verb, obj) -> bool:
    """What "I love ..." says to the listener, not of the speaker's tastes: "I love your turtles", "I love the
    thought Nate!", "That's what I like to hear"."""
    return any(c.dep_ == "poss" and c.lower_ == "your" for c in obj.children) or any(
        t.text in book.speakers for t in obj.subtree) or any(
        c.lower_ in ("what", "which") and c.dep_ in ("dobj", "attr", "pobj") for c in verb.subtree if c.i < verb.i)


def _pet_before(book: ProfileBook, verb) -> bool:
    """Whether a pet noun is said before ``verb``: earlier in its utterance or in the two turns before it."""
    if any(t.lemma_.lower() in PETS and t.pos_ == "NOUN" for t in verb.doc[:verb.i]):
        return True
    k = book.utterance_index
    words = {w for u in book.batch.utterances[max(0, k - 2):k] for w in re.findall(r"[a-z]+", u.text.lower())}
    return any(w in PETS or (w.endswith("s") and w[:-1] in PETS) for w in words)


def pet_names(book: ProfileBook, doc, source_id: str) -> None:
    """"We have two cats. Their names are Mochi and Bean", "Her name is Pickle" just after a pet noun: those
    names are pets. Whose is left to the relation head (the one who says it may speak of a sister's)."""
    for tok in doc:
        if tok.lemma_.lower() != "name" or tok.dep_ != "nsubj" or tok.head.lemma_ != "be" or not any(
                c.dep_ == "poss" and c.lower_ in ("their", "her", "his", "its") for c in tok.children) or \
                tok.sent.text.rstrip().endswith("?") or not _pet_before(book, tok):
            continue
        first = next((c for c in tok.head.children if c.dep_ in ("attr", "acomp") and c.pos_ == "PROPN"), None)
        if first is None:
            continue
        names = [first, *(t for t in first.subtree if t.dep_ == "conj" and t.text[:1].isupper())]
        said = quote(doc, tok, names[-1])
        for name_tok in names:
            name = full_name(name_tok)
            if looks_like_name(name) and name.lower() not in NOT_NAMES:
                book.entity(name, "pet", source_id, tok.sent.text, why=f'a pet ("{said}")')


def verb_patterns(book: ProfileBook, verb, who: Entity, speaker: Entity, source_id: str) -> None:
    """Patterns of a verb whose subject is ``who`` (the speaker for I/we, else a named person)."""
    lemma = verb.lemma_.lower()
    children = list(verb.children)
    negated = any(c.dep_ == "neg" for c in children)
    conditional = any(c.lower_ in ("would", "'d", "might", "could") for c in children) or hedged(verb)
    future = any(c.dep_ == "aux" and c.lower_ in FUTURE_AUX for c in children)
    is_speaker = who is speaker
    if lemma == "stand" and negated and any(c.lower_ in ("ca", "can", "could") for c in children):
        obj = next((c for c in children if c.dep_ in ("dobj", "xcomp")), None)  # "I can't stand the treadmill"
        if obj is not None and obj.pos_ != "PRON" and obj.lower_ not in _VAGUE_OBJECTS:
            book.relation(who, "dislikes", _phrase(obj, 6), source_id)
        return
    if lemma in LIKE and not conditional:
        # "you can't stand anything that moves, you hate flying": the object, before a clause hung on the verb
        obj = next((c for dep in ("dobj", "xcomp", "ccomp") for c in children if c.dep_ == dep
                    and not (dep == "ccomp" and any(g.dep_ == "nsubj" for g in c.children))), None)
        if obj is not None and obj.lower_ not in _VAGUE_OBJECTS and obj.pos_ != "PRON" and \
                not _compliment(book, verb, obj):
            key = LIKE[lemma]
            if negated:
                key = "dislikes" if key == "likes" else "likes"
            name = target_name(obj)
            target = book.entity(name, "other", source_id, obj.sent.text).name if name else _phrase(obj)
            if target and len(target.split()) <= 6:
                book.relation(who, key, target, source_id)
        return
    if not is_speaker:
        pass
    elif (lemma in _WISH or (lemma in ("love", "like") and conditional)) and not negated:
        obj = next((c for c in children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX")), None)
        if obj is not None and obj.lemma_ not in _TALK_VERBS:
            book.attribute(speaker, _WISH.get(lemma, "wants"), _phrase(obj, 10), source_id)
        return
    elif lemma == "go" and verb.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in children):
        obj = next((c for c in children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
        if obj is not None and not negated and obj.lemma_ not in _TALK_VERBS:
            book.attribute(speaker, "plans", _phrase(obj, 10), source_id)
        return
    elif lemma in ("study", "learn", "teach", "play") and not negated:
        obj = next((c for c in children if c.dep_ == "dobj"), None)
        if obj is not None and obj.pos_ != "PRON" and obj.lower_ not in _VAGUE_OBJECTS and obj.pos_ != "PROPN":
            key = {"study": "studies", "learn": "learning", "teach": "teaches", "play": "plays"}[lemma]
            book.attribute(speaker, key, _phrase(obj, 6), source_id)
    if lemma == "be" and negated:
        for c in children:  # "I'm not a fan of slugs"
            of = next((g for g in c.children if g.dep_ == "prep" and g.lower_ == "of"), None)
            if c.dep_ == "attr" and c.lemma_ in ("fan", "lover") and of is not None:
                pobj = next((g for g in of.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.pos_ != "PRON":
                    book.relation(who, "dislikes", _phrase(pobj, 6), source_id)
    if lemma == "be" and not negated:
        for c in children:  # "I'm sick of cold calls", "I'm tired of the commute"
            if c.dep_ == "acomp" and c.lemma_ in ("sick", "tired", "fed"):
                of = next((g for g in c.subtree if g.dep_ == "prep" and g.lower_ == "of"), None)
                pobj = next((g for g in of.children if g.dep_ == "pobj"), None) if of is not None else None
                if pobj is not None and pobj.pos_ != "PRON" and pobj.lower_ not in _VAGUE_OBJECTS:
                    book.relation(who, "dislikes", _phrase(pobj, 6), source_id)
    if future and not negated and not conditional:
        # "I'll be working on the Tidewater dashboard", "I'll work at Brightwater from May": a new job said ahead
        for prep in (c for c in children if c.dep_ == "prep"):
            key = _PLACE_VERBS.get((lemma, prep.lower_))
            if key in ("works_at", "works_on", "studies_at"):
                relate(book, who, key, next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)
    school = next((c for c in children if c.dep_ == "dobj"), None) if lemma == "attend" else None
    if school is not None and not negated and not conditional and \
            is_school(school):
        relate(book, who, "studies_at", school, source_id)  # "Maya will attend Bruntsfield Primary"
    if negated or conditional or future:
        return
    if lemma == "be":
        _still_there(book, verb, who, source_id)
        # "He's been on my team since 2021"
        for prep in (c for c in children if c.dep_ == "prep" and c.lower_ == "on"):
            team = next((g for g in prep.children if g.dep_ == "pobj" and g.lemma_ in ("team", "staff", "crew")), None)
            mate = possessor(book, team, speaker, None, source_id) if team is not None else None
            if mate is not None and mate.type == "person" and mate.name != who.name and who.type == "person":
                book.relation(who, "colleague_of", mate.name, source_id)
        for c in children:
            if c.dep_ == "attr" and c.pos_ == "NOUN":
                of = next((g for g in c.children if g.dep_ == "prep" and g.lower_ == "of"), None)
                if c.lemma_ == "fan" and of is not None:
                    pobj = next((g for g in of.children if g.dep_ == "pobj"), None)
                    if pobj is not None and pobj.pos_ != "PRON" and not _compliment(book, verb, pobj):
                        name = target_name(pobj)
                        book.relation(who, "likes", book.entity(name, "other", source_id).name if name
                                      else _phrase(pobj), source_id)
                elif c.lemma_ == "fan" and negated:
                    pass
                elif c.lemma_ in _GROUP_ROLES and of is not None:  # "Derek is chair of Rivelin Bank"
                    relate(book, who, "member_of", next((g for g in of.children if g.dep_ == "pobj"), None), source_id)
                elif c.lemma_ == "member" and (org := org_before(book, c)) is not None:
                    # "The Allotment Society had a waiting list, so now I'm a member"
                    book.relation(who, "member_of", org, source_id)
                elif c.lemma_ not in _NOT_IDENTITY and (c.lemma_ not in ROLE_PREDICATES or c.lemma_ in _STUDENT_NOUNS
                                                         or c.lemma_ == "coach") and any(
                        g.dep_ == "det" and g.lower_ in ("a", "an") for g in c.children):
                    if is_speaker:
                        book.attribute(speaker, "is", _phrase(c, 6), source_id)
                    # "I'm a data analyst there": the organisation named just before
                    org_name = org_before(book, c)
                    if org_name and any(g.lower_ == "there" and g.dep_ == "advmod" for g in [*c.children, *children]):
                        org = book.entity(org_name, "organization", source_id)
                        book.relation(who, "studies_at" if c.lemma_ in _STUDENT_NOUNS else "works_at", org.name,
                                      source_id)
                    # "Sofie is a barista in Hamburg": where one works is where one lives
                    for prep in (g for g in c.children if g.dep_ == "prep" and g.lower_ == "in"):
                        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                        if pobj is not None and pobj.ent_type_ == "GPE":
                            relate(book, who, "lives_in", pobj, source_id)
                    # "I'm a nurse at Cedar Clinic", "I'm a student at Porto Polytechnic"
                    for prep in (g for g in c.subtree if g.dep_ == "prep" and g.lower_ in ("at", "for", "with")
                                 and g.head.pos_ in ("NOUN", "PROPN") and g.head.i <= c.i):
                        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                        relate(book, who, "studies_at" if c.lemma_ in _STUDENT_NOUNS
                                else "works_at", pobj, source_id)
            if c.dep_ == "acomp" and c.lemma_ in ("passionate", "interested", "into") and is_speaker:
                prep = next((g for g in c.children if g.dep_ == "prep"), None)
                pobj = next((g for g in prep.children if g.dep_ == "pobj"), None) if prep is not None else None
                if pobj is not None:
                    book.attribute(speaker, "interests", _phrase(pobj), source_id)
    # "I joined the Harbor Striders", "I'm building Atlas", "we're calling it MedKG"
    dobj = next((c for c in children if c.dep_ == "dobj"), None)
    if lemma == "join" and dobj is not None:
        # "I joined Northwind as a data analyst": a job, not a membership
        role = next((g for c in children if c.dep_ == "prep" and c.lower_ == "as" for g in c.children
                     if g.dep_ == "pobj" and g.pos_ == "NOUN" and g.lemma_ not in ("member", "volunteer")), None)
        relate(book, who, "works_at" if role is not None else "member_of", dobj, source_id)
    elif lemma in OWN_VERBS and dobj is not None and not negated and dobj.lemma_.lower() in MADE_NOUNS and \
            (called := _called(dobj)) is not None:
        # "I run a small bakery called Crumb & Co.", "we started a podcast called Low Tide"
        business = dobj.lemma_.lower() in BUSINESS_NOUNS
        relate(book, who, "works_at" if business else "works_on", called, source_id)
    elif lemma in BUILD_VERBS and dobj is not None and dobj.ent_type_ not in ("PERSON", "GPE", "DATE", "NORP"):
        relate(book, who, "works_on", dobj, source_id)
    elif lemma in ("call", "name") and dobj is not None and (dobj.lower_ in ("it", "him", "her") or (
            dobj.pos_ == "PROPN" and dobj.i == verb.i + 2 and verb.doc[verb.i + 1].lower_ == "her")):
        # "named her Pickle": the small tagger reads "her" as Pickle's possessive
        oprd = dobj if dobj.pos_ == "PROPN" else next(
            (c for c in children if c.dep_ in ("oprd", "xcomp", "attr", "npadvmod") and c.pos_ == "PROPN"), None)
        if oprd is not None and _pet_before(book, verb):
            # "We got a puppy! I named him Biscuit": what is named is the pet just spoken of
            name = full_name(oprd)
            if looks_like_name(name) and not negated:
                pet = book.entity(name, "pet", source_id, verb.sent.text,
                                  why=f'pet of {who.name} ("{quote(verb.doc, verb, oprd)}")')
                book.relation(who, "owns_pet", pet.name, source_id)
        elif oprd is not None and dobj.lower_ == "it":
            relate(book, who, "works_on", oprd, source_id)  # "we're calling it MedKG"
    if lemma == "work" and any(c.lower_ == "there" and c.dep_ == "advmod" for c in children) and \
            (org_name := org_before(book, verb)):
        book.relation(who, "works_at", book.entity(org_name, "organization", source_id).name, source_id)
    # "I'm doing an MSc at the University of X", "she's starting a PhD at Y"
    if dobj is not None and dobj.lemma_.lower() in _DEGREE_NOUNS:
        for prep in (g for g in [*dobj.children, *children] if g.dep_ == "prep" and g.lower_ in ("at", "with")):
            relate(book, who, "studies_at", next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)
    # "I'm writing the navigation code for Otter", "I did the wiring on Otter": a known project
    for prep in [c for c in children if c.dep_ == "prep" and c.lower_ in ("for", "on")] + (
            [g for g in dobj.children if g.dep_ == "prep" and g.lower_ in ("for", "on")] if dobj is not None else []):
        pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN"), None)
        known = book.get(full_name(pobj)) if pobj is not None else None
        if known is not None and known.type in ("project", "product") and lemma not in LIKE and not negated:
            book.relation(who, "works_on", known.name, source_id)
    phrasal = f"{lemma} up" if any(c.dep_ == "prt" and c.lower_ == "up" for c in children) else lemma
    for prep in (c for c in children if c.dep_ == "prep"):
        pair = (phrasal if (phrasal, prep.lower_) in _PLACE_VERBS else lemma, prep.lower_)
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        if pobj is None or pobj.pos_ == "PRON" or pobj.ent_type_ in ("DATE", "TIME"):
            continue  # "I volunteered at yesterday's fair" names no place
        if pair in _ATTRIBUTE_KEYS and is_speaker:
            book.attribute(speaker, _ATTRIBUTE_KEYS[pair], _phrase(pobj, 6), source_id)
            continue
        key = _PLACE_VERBS.get(pair)
        if key is None:
            continue
        if not relate(book, who, key, pobj, source_id) and is_speaker and key != "works_on":
            book.attribute(speaker, key, _phrase(pobj, 6), source_id)  # "I live in a small town"


_WHILE_NOUNS = set(word_list("entities", "_WHILE_NOUNS"))  # not a week: a trip


def _for_a_while(verb) -> bool:
    """A perfect "be" with a duration: "has been in Leeds for years", "I've been at Acme for six months"."""
    # "Danny's been": the small parser reads the "'s" of "has" as a passive "is"
    return verb.tag_ == "VBN" and any(c.dep_ in ("aux", "auxpass") and (c.lemma_.lower() == "have" or c.lower_ in (
        "'s", "'ve", "'d")) for c in verb.children) and any(
        c.dep_ == "prep" and c.lower_ == "for" and any(g.lemma_.lower() in _WHILE_NOUNS for g in c.subtree)
        for c in verb.children)


def _still_there(book: ProfileBook, verb, who: Entity, source_id: str) -> None:
    """Being somewhere as a lasting state: "Mum's still up in Harrogate" (lives there), "she's still at
    Severnside Uni" (studies there), "Carys is at Drakeshead Marine Lab now" (works there). "still" (or a
    duration: "has been in Heavitree for years") says a state for both; "now" only for an organisation ("I'm in
    Lisbon now" may be a trip)."""
    kids = list(verb.children)
    adverbs = {c.lower_ for c in kids if c.dep_ == "advmod"}
    if _for_a_while(verb):
        adverbs.add("still")  # "Danny's been in Heavitree for about eight years"
    if not adverbs & {"still", "now"} or who.type != "person":
        return
    # "still up in Leeds": the place hangs on the particle-like adverb
    preps = [c for c in kids if c.dep_ == "prep"] + [g for c in kids if c.dep_ == "advmod" and c.lower_ in
                                                     _THERE_ADVERBS for g in c.children if g.dep_ == "prep"]
    for prep in preps:
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        name = target_name(pobj)
        if name is None:
            continue
        known = book.get(name)
        if prep.lower_ == "in" and "still" in adverbs and (pobj.ent_type_ in ("GPE", "LOC") or (
                known is not None and known.type == "place")):
            relate(book, who, "lives_in", pobj, source_id)
        elif prep.lower_ == "at":
            if name.lower().split()[-1] in SCHOOL_HEADS:
                relate(book, who, "studies_at", pobj, source_id)
            elif suffix_type(name) == "organization" or (known is not None and named_org(known)):
                relate(book, who, "works_at", pobj, source_id)


OWN_VERBS = set(word_list("entities", "_OWN_VERBS"))
BUSINESS_NOUNS = set(word_list("entities", "_BUSINESS_NOUNS"))

MADE_NOUNS = BUSINESS_NOUNS | PROJECT_NOUNS | PRODUCT_NOUNS | {"podcast", "blog", "channel", "newsletter", "show",
                                                               "zine", "label", "charity", "club", "brand"}


def _called(noun):
    """The name in "a bakery called Crumb & Co." / "a podcast named Low Tide", else None."""
    for acl in noun.children:
        if acl.dep_ == "acl" and acl.lemma_.lower() in ("call", "name"):
            return next((g for g in acl.children if g.dep_ in ("oprd", "attr", "dobj", "xcomp") and g.pos_ == "PROPN"),
                        None)
    return None


def _person_named(book: ProfileBook, tok, source_id: str) -> Entity | None:
    """The person a noun phrase names: "Dana", "a designer called Wojtek", "a friend, Isla"."""
    name_tok = tok if tok.pos_ == "PROPN" else name_of(tok)
    if name_tok is None:
        return None
    name = full_name(name_tok)
    if not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name):
        return None  # "a designer called Wojtek", not "I've worked with Python"
    known = book.get(name)
    if tok.pos_ == "PROPN" and name_tok.ent_type_ != "PERSON" and (known is None or known.type != "person"):
        return None  # "I work with Figma": a bare name is a person only when NER or the profile says so
    if known is not None and known.type != "person" and book.typed_by_context(known):
        return None
    said = shorten(span_text(list(tok.doc[min(tok.i, name_tok.i):max(tok.i, name_tok.i) + 1])), 60)
    return book.entity(name, "person", source_id, tok.sent.text,
                       why=None if tok.pos_ == "PROPN" else f'a {tok.lemma_.lower()} ("{said}")')


def _asked_person(book: ProfileBook) -> str | None:
    """The person the other speaker's question just before this turn named ("Where was Jordan before?")."""
    if book.last_person_at != book.utterance_index - 1 or book.last_person in (None, *book.speakers):
        return None
    return book.last_person if question_before(book) is not None else None


def _employer_misfit(book: ProfileBook, target) -> bool:
    """"I've been at Mum's since Friday", "three weeks in Lisbon": a place, a person or a date is no employer."""
    name = target_name(target)
    known = book.get(name) if name else None
    # a facility NER knows ("Harwick Cider", "the Royal Infirmary") is somewhere one can work
    return name is None or target.ent_type_ in ("GPE", "LOC", "PERSON", "DATE") or (
        known is not None and known.type not in ("organization", "other") and not (
            target.ent_type_ == "FAC" and not book.typed_by_context(known)))


def matched_relations(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Relations from the DependencyMatcher patterns of ``patterns.py``."""
    for label, t in relation_matches(doc):
        head = t["noun"] if label.startswith("member") else t.get("verb") or t.get("noun")
        if any(c.dep_ == "neg" for c in head.children) or hedged(head):
            continue
        target = t["target"]
        if target.pos_ == "NOUN" and label != "colleague" and label != "friend_made":
            target = name_of(target) or target  # "my membership at Northern Edge climbing wall"
        if label.startswith("member"):
            owner = possessor(book, head, speaker, other, source_id)
            if owner is not None and owner.type == "person":
                relate(book, owner, "member_of", target, source_id)
            continue
        if label == "tenure":
            # "Eleven years at Pellow & Garth this spring": only as the sentence's opening, with no subject of its own
            opening = t["count"].i - t["noun"].sent.start <= 1 and t["count"].i < t["noun"].i
            if opening and not _employer_misfit(book, target):
                # "Where was Jordan before?" - "Six years at the Rothay Hotel": the one asked about
                who = book.entity(asked, "person", source_id) if (asked := _asked_person(book)) else speaker
                relate(book, who, "studies_at" if is_school(target) else "works_at", target, source_id)
            continue
        who = owner_of(book, t["subject"], speaker, other, source_id)
        if who is None or who.type != "person":
            continue
        if label == "job_in":
            if target.ent_type_ == "GPE":  # "I've accepted a job in Edinburgh": where one works, one lives
                relate(book, who, "lives_in", target, source_id)
        elif label in ("employed_at", "job_taken"):
            if not _employer_misfit(book, target):
                relate(book, who, "works_at", target, source_id)
        elif label in ("colleague", "friend_made"):
            person = _person_named(book, t["target"], source_id)
            if person is not None and person.name != who.name:
                book.relation(person, "colleague_of" if label == "colleague" else "friend_of", who.name, source_id)
