"""What a word points at, and the type a name gets from how it is used: who "her", "she" or "he" means
(``person_before``), what "there" means (``org_before``), whose "my sister" or "Anna's dog" it is (``possessor``),
who a clause's subject stands for (``owner_of``), the turns either side of the current one (``question_before``,
``confirmed``); a name people live in or go to is a place (``place_types``), one that does or has what only people
do or have is a person (``person_types``)."""

from __future__ import annotations

import re

from ...anchors import Entity
from .grammar import is_first_person, span_text, subject_of
from .lexicon import NOT_NAMES
from .names import full_name, looks_like_name, clean_name, suffix_type
from .profiles import ROLE_PREDICATES, ProfileBook, name_of, shorten, unknown_word
from .wordlists import word_list


_MEMBER_VERBS = set(word_list("entities", "_MEMBER_VERBS"))
BUILD_VERBS = set(word_list("entities", "_BUILD_VERBS"))


def _unnamed_subject(tok) -> bool:
    """"My little sister is flying over with her girlfriend": "her" is the clause's subject, a person with no name
    here, not the last name said."""
    verb = tok.head
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    subj = subject_of(verb) if verb.pos_ in ("VERB", "AUX") else None
    return subj is not None and subj.pos_ == "NOUN" and subj.lemma_.lower() in ROLE_PREDICATES and \
        name_of(subj) is None


def possessor(book: ProfileBook, tok, speaker: Entity, other: str | None, source_id: str):
    """Whose "sister"/"dog"/"club" this is: my/our -> the speaker, your -> the listener, "Anna's" -> Anna."""
    # "My cousin Kenta": the parser hangs "my" on the name, with the role noun as its compound
    kids = [*tok.children, *(tok.head.children if tok.dep_ == "compound" and tok.head.pos_ == "PROPN" else [])]
    for c in kids:
        if c.dep_ != "poss":
            continue
        if c.lower_ in ("my", "our"):
            return speaker
        if c.lower_ in ("your",) and other:
            return book.entity(other, "person", source_id)
        if c.pos_ == "PROPN" and c.ent_type_ in ("PERSON", ""):
            name = full_name(c)
            if looks_like_name(name):
                return book.entity(name, "person", source_id, c.sent.text)
        if c.lower_ in ("her", "his") and not _unnamed_subject(tok) and (
                named := person_before(book, tok)) is not None:
            return book.entity(named, "person", source_id)
    if tok.dep_ == "dobj" and tok.head.lemma_ in ("have", "adopt", "get", "own", "rescue", "foster"):
        return owner_of(book, subject_of(tok.head), speaker, other, source_id)
    if tok.sent.text.rstrip().endswith("?"):
        return None
    head = tok.head
    # "I joined a climbing gym called X", "I'm leading the Quill project"
    if tok.dep_ in ("dobj", "attr") and head.lemma_ in _MEMBER_VERBS | BUILD_VERBS | {"work"}:
        return owner_of(book, subject_of(head), speaker, other, source_id)
    # "I'm in the Elmstead chess club", "I play for the Red Kites", "I work on the Quill project"
    if tok.dep_ == "pobj" and head.dep_ == "prep" and head.lower_ in ("in", "for", "with", "on", "at") and \
            head.head.lemma_ in ("be", "play", "sing", "work", "volunteer", "train", "row", "swim", "run", "climb"):
        return owner_of(book, subject_of(head.head), speaker, other, source_id)
    return None


PERSON_VERBS = set(word_list("entities", "PERSON_VERBS"))  # the small model's lemma of "texted"


def personish(book: ProfileBook, ent) -> bool:
    """A named span that stands for a person: NER says so, its profile says so, or it does what
    people do ("Tasha said", "Marcus is coming", "Gethin texted")."""
    known = book.get(clean_name(ent.text))
    if known is not None and known.type == "person":
        return True
    if known is not None and book.typed_by_context(known):
        return False
    if ent.label_ == "PERSON":
        return known is None or known.type in ("person", "other")
    root = ent.root
    return root.dep_ in ("nsubj", "nsubjpass") and root.head.lemma_.lower() in PERSON_VERBS and len(ent) <= 2


RECENT_UTTERANCES = 3  # "he"/"she" with no name in its utterance points at a person named this recently
RECENT_ORG_UTTERANCES = 1  # "there" points at an organisation named in this utterance or the one before


def person_before(book: ProfileBook, tok) -> str | None:
    """The person "her"/"his"/"she" most likely means: the last person named before ``tok`` in its
    utterance (not a speaker; an entity NER calls a person, or a name already known as a person: "my sister
    Ana came with her husband"), else the last one named in the batch's last few utterances."""
    best, at = None, -1
    for ent in tok.doc.ents:
        if ent.end <= tok.i and personish(book, ent):
            name = clean_name(ent.text)
            if looks_like_name(name) and name.lower() not in NOT_NAMES and book.canonical(name)[0] not in book.speakers:
                best, at = book.canonical(name)[0], ent.end
    for t in tok.doc[:tok.i]:
        if t.pos_ != "PROPN" or t.i < at:
            continue
        known = book.get(full_name(t))
        if known is not None and known.type == "person" and known.name not in book.speakers:
            best, at = known.name, t.i
        elif known is None or known.type == "other":
            # "Siobhan is happy ...; she's studying at ...": a name that is the subject of a clause
            name = full_name(t)
            if t.dep_ in ("nsubj", "nsubjpass") and t.ent_type_ in ("PERSON", "") and looks_like_name(name) \
                    and name.lower() not in NOT_NAMES and book.canonical(name)[0] not in book.speakers:
                best, at = name, t.i
    if best is not None:
        return best
    asked = _kin_asked_before(book)
    if asked is not None:
        # "Has your dad come round?" - "Slowly. He's coming down from Scarborough": the dad, named or not
        return asked or None
    return book.last_person if book.utterance_index - book.last_person_at <= RECENT_UTTERANCES else None


_KIN_PHRASE = re.compile(r"(?i)\b(?:your|my|his|her)\s+(?:(?:little|big|older|younger|new|old)\s+)?("
                         + "|".join(sorted(map(re.escape, ROLE_PREDICATES), key=len, reverse=True)) + r")\b")


def question_before(book: ProfileBook):
    """The turn just before the current one, when another speaker asked a question in it."""
    k = book.utterance_index
    if k == 0 or k >= len(book.batch.utterances):
        return None
    before, now = book.batch.utterances[k - 1], book.batch.utterances[k]
    return before if before.speaker != now.speaker and "?" in before.text else None


def _kin_asked_before(book: ProfileBook) -> str | None:
    """When the other speaker's turn just before asked after someone by kin ("How's your dad?"): that person's name
    if the batch knows it, else "" (someone unnamed); None when nothing was asked so."""
    before = question_before(book)
    if before is None or book.utterance_index - book.last_person_at <= 1:
        return None  # a name said in the question or since ("Alan? Since when do you call your dad Alan?") wins
    found = _KIN_PHRASE.search(before.text)
    if found is None:
        return None
    role = ROLE_PREDICATES[found.group(1).lower()]
    whose = found.group(0).split()[0].lower()
    owner = book.batch.utterances[book.utterance_index].speaker if whose == "your" else \
        before.speaker if whose == "my" else None
    known = [e.name for e in book.entities() if e.type == "person" and e.name not in book.speakers and any(
        r.predicate == role and r.target == owner for r in e.relations)]
    return known[0] if len(known) == 1 else ""


def named_org(ent: Entity) -> bool:
    """An organisation by context or by its own name ("... Dental", "... Bank"), not by NER alone."""
    return ent.type == "organization" and (any(a.key == "why" for a in ent.attributes) or
                                           suffix_type(ent.name) == "organization")


def org_before(book: ProfileBook, tok) -> str | None:
    """What "there" points at: the last organisation named before ``tok`` (this utterance first)."""
    for ent in reversed([e for e in tok.doc.ents if e.end <= tok.i]):
        known = book.get(clean_name(ent.text))
        if known is not None and named_org(known):
            return known.name
    # "Still nights at St Brendan's?" - "I'm a nurse there": an organisation named turns ago is not meant
    return book.last_org if book.utterance_index - book.last_org_at <= RECENT_ORG_UTTERANCES else None


_VENUE_NOUNS = set(word_list("entities", "_VENUE_NOUNS"))
_PLACE_MOTION = set(word_list("entities", "_PLACE_MOTION"))


def place_types(book: ProfileBook, doc, source_id: str) -> None:
    """A one-word name after "in/to/from/near" with a verb of living or going ("moved to Heworth",
    "lives in Leeds", "back from Penarth") is a place, whatever NER says."""
    for ent in doc.ents:
        if ent.label_ in ("GPE", "LOC") or len(ent) > 2:
            continue
        root = ent.root
        prep = root.head
        along = root.dep_ == "pobj" and prep.lower_ in ("along", "across") and ent.start > 0 and \
            doc[ent.start - 1].lower_ == "the"  # "18 miles along the Charles", "across the Tamar": a river
        if not along and (root.dep_ != "pobj" or prep.lower_ not in ("in", "to", "from", "near", "around")
                          or prep.head.i == prep.i):
            continue
        verb = prep.head
        if verb.lower_ == "next":
            continue  # "she moved me next to Priya": beside someone or something, not gone to a place
        away = verb.lower_ in ("away", "back", "over", "out", "off", "home")
        if verb.pos_ == "ADV" and verb.head.i != verb.i:  # "back from", "over in", "down to"
            verb = verb.head
        if along:
            verb = prep
        elif away and prep.lower_ in ("in", "to", "from"):
            pass  # "Ines is away in Grenoble", "she's off to Porto": where a person is
        elif verb.pos_ == "NOUN" and prep.lower_ in ("in", "near") and ent.label_ == "PERSON":
            pass  # "the new branch in Penarth", "a flat near Totterdown"
        elif prep.lower_ in ("in", "near") and ent.label_ in ("ORG", "NORP") and (
                verb.lemma_.lower() in _VENUE_NOUNS or verb.pos_ == "PROPN" and (
                    (org := book.get(full_name(verb))) is not None and org.type == "organization")):
            pass  # "the Rothay Hotel in Grasmere", "his pizzeria in Penrith": a business is somewhere
        elif verb.lemma_.lower() not in _PLACE_MOTION or (verb.lemma_ == "be" and prep.lower_ != "from"
                                                          and ent.label_ != "PERSON"):
            continue
        name = clean_name(ent.text)
        if not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name) not in (None, "place"):
            continue
        known = book.get(name)
        if known is not None and book.typed_by_context(known):
            continue
        book.entity(name, "place", source_id, ent.sent.text,
                    why=f'a place ("{shorten(span_text(list(doc[verb.i:root.i + 1])) if verb.i < root.i else name, 60)}")')


# What only a person has: "Hattie's leaving do", "Carys's boyfriend" (not "Bristol's best cafe", "Leeds's manager").
PERSON_POSSESSIONS = {*(w for w, p in ROLE_PREDICATES.items() if p not in ("manager_of", "coach_of", "mentor_of",
                                                                          "colleague_of")),
                      "birthday", "wedding", "funeral", "leaving", "farewell", "graduation", "retirement", "hen",
                      "stag"}


def person_types(book: ProfileBook, doc, source_id: str) -> None:
    """A name that does what people do ("Tasha said", "Marcus is coming") or has what only people have
    ("Hattie's leaving do") is a person, whatever NER says."""
    for ent in doc.ents:
        if ent.label_ == "PERSON" or len(ent) > 2:
            continue
        root = ent.root
        owned = root.dep_ == "poss" and (root.head.lower_ in PERSON_POSSESSIONS or
                                         root.head.lower_ == "do" and root.head.pos_ == "NOUN")  # "Marit's leaving do"
        if not owned and not _she_next(ent) and (ent.label_ in ("GPE", "LOC") or not personish(book, ent)):
            continue
        name = clean_name(ent.text)
        if not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name):
            continue
        verb = root.head
        book.entity(name, "person", source_id, ent.sent.text,
                    why=f'a person ("{shorten(span_text([root, verb]) if verb.i > root.i else ent.text, 60)}")')
    first = doc[0] if len(doc) else None
    if first is not None and first.lower_ == "who" and first.head.lemma_ == "be" and doc.text.rstrip().endswith("?"):
        # "Who's Ade?": asked of a person
        named = [t for t in first.head.children if t.pos_ == "PROPN" and t.dep_ in ("attr", "nsubj")]
        name = clean_name(full_name(named[0])) if len(named) == 1 else ""
        known = book.get(name) if name else None
        if name and looks_like_name(name) and name.lower() not in NOT_NAMES and not suffix_type(name) and (
                known is None or not book.typed_by_context(known)):
            book.entity(name, "person", source_id, doc.text, why=f'a person ("{shorten(doc.text, 60)}")')
    for tok in doc:  # "Carys who moved to Plymouth?": "who" is said of people (the tagger may call Carys a noun)
        if tok.pos_ not in ("PROPN", "NOUN") or not tok.text[:1].isupper() or tok.dep_ == "compound":
            continue
        clause = next((c for c in tok.children if c.dep_ == "relcl" and any(
            w.lower_ in ("who", "whom", "whose") and w.i > tok.i for w in c.children)), None)
        name = clean_name(tok.text)
        if clause is None or not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name) \
                or tok.pos_ == "NOUN" and not unknown_word(tok.lower_):
            continue
        book.entity(name, "person", source_id, tok.sent.text,
                    why=f'a person ("{shorten(span_text([tok, *clause.subtree]), 60)}")')


def _she_next(ent) -> bool:
    """"Any news from Hattie? How long has she been in Lisbon?": the next sentence's subject is "she" or "he"
    with nobody else named between, and the name is not where someone goes or is ("from Izmir. She ...")."""
    root = ent.root
    if root.dep_ == "pobj":
        prep = root.head
        if prep.lower_ not in ("from", "with", "about", "of", "for") or prep.head.pos_ != "NOUN":
            return False  # "news from Hattie", "a message from Hattie"; not "back from Izmir"
    elif root.dep_ not in ("nsubj", "dobj"):
        return False
    doc = ent.doc
    nxt = next((s for s in doc.sents if s.start >= ent.sent.end), None)
    if nxt is None or any(e.label_ == "PERSON" and e.start < nxt.end for e in doc.ents if e.start >= ent.end):
        return False
    subj = next((t for t in nxt if t.dep_ in ("nsubj", "nsubjpass")), None)
    return subj is not None and subj.lower_ in ("she", "he")


def owner_of(book: ProfileBook, subj, speaker: Entity, other: str | None, source_id: str) -> Entity | None:
    """Who did it: the speaker (I/we), the listener (you), a named person, or "my sister Anna"."""
    if subj is None:
        return None
    if is_first_person(subj):
        return speaker
    if subj.lower_ == "you" and other:
        return book.entity(other, "person", source_id)
    if subj.lower_ in ("she", "he") and (named := person_before(book, subj)) is not None:
        return book.entity(named, "person", source_id)
    if known_person(book, subj):  # "Carys who moved to Plymouth?": the tagger calls Carys a noun
        return book.entity(full_name(subj), "person", source_id, subj.sent.text)
    # A name doing what people do is a person whatever NER says ("Cian moved to Cork": NER says NORP).
    if subj.pos_ == "PROPN" and subj.text[:1].isupper() and (subj.ent_type_ in ("PERSON", "") or (
            (known := book.get(full_name(subj))) is not None and known.type == "person") or (
            subj.ent_type_ in ("NORP", "ORG") and subj.head.lemma_.lower() in PERSON_VERBS)):
        name = full_name(subj)
        if looks_like_name(name) and name.lower() not in NOT_NAMES:
            return book.entity(name, "person", source_id, subj.sent.text)
    name_tok = name_of(subj) if subj.lemma_.lower() in ROLE_PREDICATES else None
    if name_tok is not None:
        return book.entity(full_name(name_tok), "person", source_id, subj.sent.text)
    return _kin_known(book, subj, speaker, other)


def _kin_known(book: ProfileBook, noun, speaker: Entity, other: str | None) -> Entity | None:
    """"my brother" once the batch knows who that is ("Danny's been in Heavitree" named him): the one person
    with that role towards the speaker (or, for "your", the listener)."""
    role = ROLE_PREDICATES.get(noun.lemma_.lower())
    poss = next((c.lower_ for c in noun.children if c.dep_ == "poss"), None)
    owner = speaker.name if poss == "my" else other if poss == "your" else None
    if role is None or owner is None:
        return None
    known = [e for e in book.entities() if e.type == "person" and e.name not in book.speakers
             and any(r.predicate == role and r.target == owner for r in e.relations)]
    return known[0] if len(known) == 1 else None


def known_person(book: ProfileBook, tok) -> bool:
    """A capitalised word the tagger calls a noun that the batch already knows as a person (not a speaker)."""
    if tok.pos_ != "NOUN" or not tok.text[:1].isupper():
        return False
    known = book.get(full_name(tok))
    return known is not None and known.type == "person" and known.name not in book.speakers


_WORD = re.compile(r"[A-Za-z][A-Za-z'.&-]*")
_DENIALS = set(word_list("entities", "_DENIALS"))


def confirmed(book: ProfileBook) -> str | None:
    """The id of the turn after the current one when it does not open with a no: what confirms a question that
    states something ("Cathal's your brother, yeah?" - "The only one!")."""
    k = book.utterance_index + 1
    if k >= len(book.batch.utterances):
        return None
    first = _WORD.findall(book.batch.utterances[k].text)[:1]
    return book.batch.utterances[k].id if first and first[0].lower() not in _DENIALS else None
