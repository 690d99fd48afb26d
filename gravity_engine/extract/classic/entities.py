"""Entity profiles from one batch: speakers, named entities, recurring proper nouns, the
attributes and relations people state about themselves, and their atomic facts (``facts.py``).

Relations come from dependency patterns with a small predicate vocabulary (``PREDICATES``), each
stored ONCE, on the entity that is the relation's grammatical subject, and read "<entity>
<predicate> <target>": "my sister Ana" said by Caroline gives Ana sister_of Caroline, "my manager
Lena" gives Lena manager_of Priya, "our dog Biscuit" gives Tom owns_pet Biscuit, "I work at
Northwind Health" gives Priya works_at Northwind Health, "I love hiking" gives Caroline likes hiking
(a concept target: no target_id). No inverse is stored, so the graph draws each edge once.

Types: the context of a naming pattern decides over the NER guess ("my cat Miso" -> pet, "working on
Atlas" -> project, "at Porto Polytechnic" -> organization, "the model MedLLM" -> product), then a
name's own head word ("... Clinic" -> organization, "Mount ..." -> place), then NER. An entity typed
by context carries an attribute ``why`` (also its description), e.g. 'pet of Tom ("our dog Biscuit")';
consolidation lets such a type outvote NER's guesses from other batches.

Values are spans of the speaker's own words, so verification can find them in the cited utterance.

``extract_entities`` reads a batch turn by turn; its rules are in the modules below it, each of which imports only
those named before it: ``profiles.py`` (the profile book, the predicate vocabulary, the name helpers),
``references.py`` (what a pronoun, a possessive or "there" points at; types from use), ``noun_patterns.py`` and
``verb_patterns.py`` (the patterns), ``relations.py`` (every rule over one utterance) and ``replies.py`` (a reply
read against the question before it).
"""

from __future__ import annotations

import re

from ...anchors import Entity
from ..base import Batch
from ...timeparse import find_time_expressions, parse_datetime
from .answers import Answered, parsed_statements
from .facts import FACT_KEY, facts_of_doc
from .grammar import span_text, speaker_pronouns, tense_reader
from .lexicon import NOT_NAMES
from .names import SAINT_HOUSE, clean_name, full_name, looks_like_name, title_span
from .profiles import ProfileBook
from .references import named_org, person_types, personish, place_types
from .relations import read_relations
from .replies import job_in_reply, kin_echo, kin_in_reply, named_in_reply, project_in_reply
from .wordlists import word_list


NER_TYPES = {
    "PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
    "PRODUCT": "product", "WORK_OF_ART": "artifact", "EVENT": "other", "NORP": "other",
}


_NAME_JOINERS = set(word_list("entities", "_NAME_JOINERS"))


def split_run_on(text: str) -> list[str]:
    """A tagger's run-on span as the names in it: "Moorish Castle and Pena Palace" is two names,
    "Ironwood Fitness on Albany Road" too ("on" joins "Stratford-upon-Avon"-like names only when the
    next word is capitalised and the left part is one word); "Vila Nova de Gaia", "Bank of America" stay whole."""
    words = text.split()
    parts: list[list[str]] = [[]]
    for k, w in enumerate(words):
        low = w.lower()
        if low in ("and", "or", "with", "at", "near", "by", "from", "to", "for") or (
                low in ("on", "in") and len(parts[-1]) > 1):
            parts.append([])
        elif w[:1].islower() and low not in _NAME_JOINERS:
            parts.append([])
        else:
            parts[-1].append(w)
    names = [" ".join(p) for p in parts if p and p[0][:1].isupper()]
    return names if len(names) > 1 else [text]


def _part_type(span: str, name: str, j: int, ner_type: str) -> str:
    """The type of the ``j``-th name of a run-on span (``split_run_on``): the first has NER's; "the Rothay
    Hotel in Grasmere": what follows "in", "near", "at" or "on" is a place; "Moorish Castle and Pena Palace":
    a list is of one kind; "Clevedon with Jonah": what follows any other word is of no known type."""
    if j == 0:
        return ner_type
    joiner = re.search(rf"(\S+)\s+{re.escape(name)}\b", span)
    word = joiner.group(1).lower() if joiner else ""
    if word in ("in", "near", "at", "on"):
        return "place"
    return ner_type if word in ("and", "or") or word.endswith(",") else "other"


def extract_entities(batch: Batch, docs: list, answered: list | None = None) -> list[Entity]:
    """Profiles for the batch: one per speaker and per named thing, with attributes, relations and facts.

    The statements that question-answer pairs make (``answers.parsed_statements``, computed when not given)
    are read like an utterance of the answerer; what they yield cites the question and the answer."""
    book = ProfileBook(batch)
    ref = parse_datetime(batch.session_time) if batch.session_time else None
    pronouns = speaker_pronouns([u.text for u in batch.utterances], book.speakers)
    if answered is None:
        answered = parsed_statements(batch.utterances, docs)
    by_answer: dict[int, list[tuple[Answered, object]]] = {}
    for a, a_doc in answered:
        by_answer.setdefault(a.index, []).append((a, a_doc))
    for k, (utt, doc) in enumerate(zip(batch.utterances, docs)):
        book.utterance_index = k
        speaker = book.entity(utt.speaker, "person", utt.id)
        others = [s for s in book.speakers if s != utt.speaker]
        other = others[0] if len(others) == 1 else None
        in_entity: set[int] = set()
        # "Crown of the Tides": one title, which the tagger cuts in two
        titles = {span for tok in doc if (span := title_span(tok)) is not None}
        for start, end in sorted(titles):
            name = clean_name(span_text(list(doc[start:end])))
            if looks_like_name(name):
                # the tagger's type of a part ("Crown" an organisation) is no type of the whole: the heads decide
                whole = next((e.label_ for e in doc.ents if (e.start, e.end) == (start, end) and e.label_ in NER_TYPES),
                             None)
                book.entity(name, NER_TYPES[whole] if whole else "other", utt.id, doc[start].sent.text)
                in_entity.update(range(start, end))
        for ent in doc.ents:
            if any(ent.start < end and ent.end > start for start, end in titles):
                continue
            in_entity.update(range(ent.start, ent.end))
            if ent.label_ not in NER_TYPES:
                continue
            text = ent.text
            if ent[0].tag_ == "MD" and len(ent) > 1:  # "Will Ruth come?"
                text = ent[1:].text
            parts = split_run_on(clean_name(text))
            for j, name in enumerate(parts):
                name = clean_name(name)
                if looks_like_name(name) and name.lower() not in NOT_NAMES:
                    # "St Brendan's", "St Mary's": a saint's name with the possessive is a hospital, school or church
                    house = j == 0 and SAINT_HOUSE.fullmatch(text.strip()) is not None
                    book.entity(name, "organization" if house else _part_type(text, name, j, NER_TYPES[ent.label_]),
                                utt.id, ent.sent.text, why=f'an institution ("{text.strip()}")' if house else None)
        # Proper nouns the NER missed (projects, pets, nicknames); finalize keeps those that recur.
        run: list = []
        for tok in [*doc, None]:
            glued = run and run[-1].text == ":"  # "Gear:Zero" is one name, whatever the tagger makes of "Zero"
            if tok is not None and (tok.pos_ == "PROPN" or glued) and tok.i not in in_entity and \
                    tok.text[:1].isupper():
                run.append(tok)
                continue
            if tok is not None and run and tok.text == ":" and not run[-1].whitespace_ and not tok.whitespace_ and \
                    tok.i + 1 < len(doc) and doc[tok.i + 1].text[:1].isupper():
                run.append(tok)
                continue
            if run:
                name = clean_name(span_text(run))
                if looks_like_name(name) and name.lower() not in NOT_NAMES:
                    book.entity(name, "other", utt.id, run[0].sent.text)
                run = []
        place_types(book, doc, utt.id)
        person_types(book, doc, utt.id)
        if k > 0 and batch.utterances[k - 1].speaker != utt.speaker:
            named_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
            kin_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
            kin_echo(book, doc, batch.utterances[k - 1], docs[k - 1], utt.id)
            job_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
            project_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
        # after the names of this turn: "Does your brother live in Exeter?" - "Yes, Danny's ..." names the brother
        for a, a_doc in by_answer.get(k, []):
            _read_answer(book, a, a_doc, speaker, other, ref, pronouns)
        read_relations(book, doc, speaker, other, utt.id)
        last_named = -1
        for t in doc:  # a name already known as a person ("my sister Ana"), whatever NER or the tagger made of it
            if (t.pos_ == "PROPN" or t.pos_ == "NOUN" and t.text[:1].isupper()) and (
                    known := book.get(full_name(t))) is not None and known.type == "person" \
                    and known.name not in book.speakers:
                book.last_person, book.last_person_at, last_named = known.name, book.utterance_index, t.i
        for ent in doc.ents:
            name = clean_name(ent.text)
            if not looks_like_name(name) or name.lower() in NOT_NAMES:
                continue
            known = book.get(name)
            if personish(book, ent) and book.canonical(name)[0] not in book.speakers and ent.start >= last_named:
                book.last_person = book.canonical(name)[0]
                book.last_person_at = book.utterance_index
            elif known is not None and named_org(known):
                book.last_org = known.name
                book.last_org_at = book.utterance_index
        _read_facts(book, doc, utt.text, speaker, other, utt.id, ref, pronouns)
    return book.entities()


def _read_facts(book: ProfileBook, doc, text: str, speaker: Entity, other: str | None, source_id: str,
                ref, pronouns: dict[str, str]) -> None:
    spans = find_time_expressions(text, ref, tense_reader(doc)) if ref else []
    people = {e.name for e in book.entities() if e.type == "person"}
    for fact in facts_of_doc(doc, speaker.name, other, source_id, spans, pronouns.get(speaker.name, "they"), people):
        holder = speaker
        if fact.about:
            if not looks_like_name(fact.about) or fact.about.lower() in NOT_NAMES:
                continue
            holder = book.entity(fact.about, "other", source_id, fact.text)
            if holder.type not in ("person", "pet", "other"):
                continue
        book.attribute(holder, FACT_KEY, fact.text, source_id)


def _read_answer(book: ProfileBook, answered: Answered, doc, speaker: Entity, other: str | None, ref,
                 pronouns: dict[str, str]) -> None:
    """A question-answer pair's statement, read as the answerer's utterance: what it yields cites both turns
    (and counts no new mention: both turns were counted as said)."""
    before = {id(x) for e in book.entities() for x in (*e.relations, *e.attributes)
              if answered.answer_id in x.source_ids}
    book.counting = False
    try:
        place_types(book, doc, answered.answer_id)
        read_relations(book, doc, speaker, other, answered.answer_id)
        _read_facts(book, doc, answered.text, speaker, other, answered.answer_id, ref, pronouns)
    finally:
        book.counting = True
    for e in book.entities():
        for x in (*e.relations, *e.attributes):
            if id(x) not in before and answered.answer_id in x.source_ids and answered.question_id not in x.source_ids:
                x.source_ids.insert(x.source_ids.index(answered.answer_id), answered.question_id)
