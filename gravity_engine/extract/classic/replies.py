"""Rules that read a reply against the other speaker's turn just before it, both turns being the evidence: a bare
name answering "my sister" ("Elif? Always!": ``named_in_reply``), "my girlfriend" answering a question about a
named person, "Your little brother?" asked back, a named organisation answering "How's the new job?", a named thing
"coming along" that is the replier's project."""

from __future__ import annotations

import re

from ...anchors import Entity
from .grammar import is_first_person, subject_of
from .lexicon import FAMILY, NOT_NAMES, PETS
from .names import full_name, looks_like_name, clean_name
from .profiles import ROLE_PREDICATES, ProfileBook, name_of, quote, shorten, unknown_word
from .references import personish
from .relations import read_relations
from .wordlists import word_list


# words of chat that no lexicon holds and no name is: "Awww", "Ughhh", "lol", "Omg"
_CHAT_NOISE = re.compile(r"(?i)^(?:.*(\w)\1\1.*|lol|lmao|omg|ugh|eww?|yay|wow|hm+|oops|aw+|haha|hehe|ooh|ahh?"
                         r"|yikes|phew|meh|nah|yep|yup|idk|tbh|btw|brb|pls|plz|thx|ty|np|xoxo|ok|okay)$")
_REPLY_OPENERS = set(word_list("entities", "_REPLY_OPENERS"))


def named_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """A bare name in reply names the unnamed "my sister" or "your cat" of the turn before: "is it ok if my
    sister stays?" - "Elif? Always!" (Elif is the asker's sister), "your cat threw up on the rug" - "Ugh,
    Pilchard!" (Pilchard is the replier's cat); so does a name echoed as the subject of a short exclamation or
    question ("my mum's flying in" - "Sevgi's coming?!"), and a name that is the subject of a yes or no to a
    question about the kin ("Does your brother live in Exeter?" - "Yes, Danny's been in Heavitree for years").
    Both turns are the evidence."""
    words = [t for t in doc if not t.is_space]
    yes_or_no = False
    while words and (words[0].lower_ in _REPLY_OPENERS or words[0].is_punct):
        yes_or_no = yes_or_no or words[0].lower_ in ("yes", "yeah", "yep", "yup", "no", "nope")
        words = words[1:]
    if len(words) < 2 or not words[0].text[:1].isupper():
        return
    sent = words[0].sent
    subject = words[0].dep_ in ("nsubj", "nsubjpass")
    echoed = subject and len(sent) <= 6 and sent[-1].text in ("?", "!")  # "Sevgi's coming?!"
    # "Does your brother live in Exeter?" - "Yes, Danny's been in Heavitree ...": the answer's subject is the kin
    answered = yes_or_no and subject
    if words[1].text not in ("?", "!", ",", ".") and not echoed and not answered:
        return
    if words[0].pos_ not in ("PROPN", "NOUN") and not unknown_word(words[0].lower_):
        return  # "Really? Wow": a word; "Elif?" (tagged an adverb) is no English word, so a name
    name = clean_name(words[0].text)
    if not looks_like_name(name) or name.lower() in NOT_NAMES or book.canonical(name)[0] in book.speakers:
        return
    if name.lower() not in book.capitalised_inside and not (
            (words[1].text == "?" or echoed and "?" in sent.text) and name.isalpha() and unknown_word(name.lower())
            and not _CHAT_NOISE.match(name)):
        # "Awww, thanks!", "Oops!", "Pizza? Cool", "Sames, can't wait": a name is also written as one inside a
        # sentence, or is asked back alone and is no English word nor chat noise ("Elif? Always!" names the sister
        # whose name comes up again sessions later)
        return
    unnamed = [t for t in asked_doc if t.pos_ == "NOUN" and (t.lemma_.lower() in PETS or t.lemma_.lower() in FAMILY)
               and name_of(t) is None and any(c.dep_ == "poss" and c.lower_ in ("my", "your") for c in t.children)]
    if len(unnamed) != 1:
        return  # "my sister and your dog": which one is it?
    noun = unnamed[0]
    if answered and not echoed and (noun.dep_ not in ("nsubj", "nsubjpass") or
                                    not noun.sent.text.rstrip().endswith("?")):
        return  # a yes or no answers a question about the kin, not one where the kin is mentioned in passing
    mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in noun.children)
    owner = book.entity(asked.speaker, "person", asked.id) if mine else speaker
    lemma = noun.lemma_.lower()
    said = f'"{quote(asked_doc, noun, noun)}" - "{shorten(words[0].sent.text, 40)}"'
    if lemma in PETS:
        pet = book.entity(name, "pet", source_id, words[0].sent.text, why=f"pet of {owner.name} ({said})")
        book.relation(owner, "owns_pet", pet.name, asked.id)
        book.relation(owner, "owns_pet", pet.name, source_id)
    elif lemma in ROLE_PREDICATES:
        person = book.entity(name, "person", source_id, words[0].sent.text, why=f"{owner.name}'s {lemma} ({said})")
        book.relation(person, ROLE_PREDICATES[lemma], owner.name, asked.id)
        book.relation(person, ROLE_PREDICATES[lemma], owner.name, source_id)
        # "Elif? Always! Is she still at Severnside?": she is who was just named
        book.last_person, book.last_person_at = person.name, book.utterance_index
        # and what the turn before said of "my mum" is said of her ("my mum's flying in from Izmir" - "Sevgi's
        # coming?!"): read it again now that the kin has a name
        book.counting = False
        try:
            read_relations(book, asked_doc, book.entity(asked.speaker, "person", asked.id), speaker.name, asked.id)
        finally:
            book.counting = True


def kin_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """The other way round: a question about one named person, answered about "my <kin>" with no name:
    "Did Maren make it over from Cardiff?" - "No, my poor girlfriend got called in." (Maren is the replier's
    girlfriend). Only when the named person is the question's subject ("Did you see Maren?" - "My sister saw
    her" says nothing of Maren)."""
    question = [s for s in asked_doc.sents if s.text.rstrip().endswith("?")]
    first = next(iter(doc.sents), None)
    if len(question) != 1 or first is None:
        return
    people = [e for e in question[0].ents if e.label_ == "PERSON" or (
        (known := book.get(clean_name(e.text))) is not None and known.type == "person")]
    names = {book.canonical(clean_name(e.text))[0] for e in people} - set(book.speakers)
    if len(names) != 1 or people[0].root.dep_ not in ("nsubj", "nsubjpass"):
        return
    kin = [t for t in first if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "NOUN" and t.lemma_.lower() in FAMILY
           and t.lemma_.lower() in ROLE_PREDICATES and name_of(t) is None
           and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in t.children)]
    if len(kin) != 1:
        return
    name, lemma = names.pop(), kin[0].lemma_.lower()
    said = f'"{shorten(question[0].text, 40)}" - "{quote(doc, kin[0], kin[0])}"'
    person = book.entity(name, "person", source_id, question[0].text, why=f"{speaker.name}'s {lemma} ({said})")
    book.relation(person, ROLE_PREDICATES[lemma], speaker.name, asked.id)
    book.relation(person, ROLE_PREDICATES[lemma], speaker.name, source_id)


def kin_echo(book: ProfileBook, doc, asked, asked_doc, source_id: str) -> None:
    """A reply that asks back with a kin word names the one person of the turn before: "Callum's coming to stay on
    Saturday" - "Your little brother? Course." (Callum is the asker's brother)."""
    first = next(iter(doc.sents), None)
    if first is None or first.text.rstrip()[-1:] != "?" or len([t for t in first if not t.is_punct]) > 4:
        return
    kin = [t for t in first if t.pos_ == "NOUN" and t.lemma_.lower() in ROLE_PREDICATES
           and any(c.dep_ == "poss" and c.lower_ == "your" for c in t.children)]
    people = {book.canonical(clean_name(e.text))[0] for e in asked_doc.ents if personish(book, e)} - set(book.speakers)
    # "Callum and Priya are coming": NER may miss one of the two, the parse joins them
    joined = any(t.dep_ == "conj" and t.head.pos_ == "PROPN" and t.pos_ == "PROPN" for t in asked_doc)
    if len(kin) != 1 or len(people) != 1 or joined:
        return
    name, lemma = people.pop(), kin[0].lemma_.lower()
    said = f'"{shorten(asked_doc.text, 40)}" - "{shorten(first.text, 30)}"'
    person = book.entity(name, "person", source_id, first.text, why=f"{asked.speaker}'s {lemma} ({said})")
    book.relation(person, ROLE_PREDICATES[lemma], asked.speaker, asked.id)
    book.relation(person, ROLE_PREDICATES[lemma], asked.speaker, source_id)


_ASKED_JOBS = set(word_list("entities", "_ASKED_JOBS"))


def job_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """A question about the listener's job answered by naming one organisation: "How's the new job going?" - "A
    month in and Brackwater Studios still feels like a dream." (the replier works there)."""
    question = [s for s in asked_doc.sents if s.text.rstrip().endswith("?")]
    if len(question) != 1 or any(e.label_ in ("ORG", "PERSON") for e in question[0].ents):
        return
    job = [t for t in question[0] if t.pos_ == "NOUN" and t.lemma_.lower() in _ASKED_JOBS and (
        any(c.lower_ == "your" for c in t.children) or
        any(c.lower_ == "the" for c in t.children) and any(c.lower_ == "new" for c in t.children))]
    orgs = {clean_name(e.text) for s in list(doc.sents)[:2] for e in s.ents if e.label_ == "ORG"}
    orgs = {o for o in orgs if looks_like_name(o) and ((known := book.get(o)) is None or known.type == "organization")}
    if len(job) != 1 or len(orgs) != 1:
        return
    said = f'"{shorten(question[0].text, 40)}" - "{shorten(doc.text, 40)}"'
    org = book.entity(orgs.pop(), "organization", source_id, doc.text,
                      why=f"organization where {speaker.name} works ({said})")
    book.relation(speaker, "works_at", org.name, asked.id)
    book.relation(speaker, "works_at", org.name, source_id)


def project_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """"How's Kittiwake coming along?" - "Slowly! I sanded the hull on Sunday.": a named thing coming along is
    the replier's project (not a person, a place or an organisation)."""
    for verb in asked_doc:
        # "coming along", not "going": "How's Lisbon going?" asks about a move
        if verb.lemma_ != "come" or not verb.sent.text.rstrip().endswith("?") or not any(
                c.lower_ == "how" for c in verb.children) or not any(c.lower_ == "along" for c in verb.children):
            continue
        subj = subject_of(verb)
        if subj is None or subj.pos_ != "PROPN" or not subj.text[:1].isupper() or subj.ent_type_ in (
                "PERSON", "GPE", "LOC", "NORP", "DATE", "EVENT", "FAC"):
            continue
        name = full_name(subj)
        known = book.get(name)
        if not looks_like_name(name) or name.lower() in NOT_NAMES or (known is not None and known.type in (
                "person", "place", "organization", "pet", "event")):
            continue
        if not any(t.dep_ == "nsubj" and is_first_person(t) for t in doc):
            continue
        said = f'"{shorten(verb.sent.text, 40)}" - "{shorten(doc.text, 40)}"'
        project = book.entity(name, "project", source_id, verb.sent.text, why=f"a project of {speaker.name} ({said})")
        book.relation(speaker, "works_on", project.name, asked.id)
        book.relation(speaker, "works_on", project.name, source_id)
