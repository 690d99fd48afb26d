"""What a short answer states: the question it answers, put as the answerer's statement.

In chat much is said across two turns: "Which school will Maya attend?" - "Bruntsfield Primary." or
"Does she still live in Salthill?" - "Yes, in the same house." Neither turn alone holds the fact. Here
such a pair becomes one sentence in the answerer's voice ("Maya will attend Bruntsfield Primary", "she
still lives in Salthill"), built only from the words of the two turns; the entity patterns then read it
like any utterance and cite both turns.

Two shapes are read, only when the question is the turn's one question (or, of several, the last when it
asks "where" and the answer names a place or an organisation) and the next turn is another speaker's:

* a yes/no question about something named ("Does she ... in Salthill?", "Are you still at Acme?",
  "Have you joined the Harbor Striders?"), not a request ("Can I see it?") nor an open or a choice
  question ("any ...?", "X or Y?"), answered with a yes ("Yes", "Yeah", "Still", ...) not taken back (no
  "not", "no" or "but" in the answer's first sentence; what follows the yes may be a sentence of its own:
  "Does your brother live in Exeter?" - "Yes, Danny's been in Heavitree for years."); a name alone after
  the yes takes the place of the question's "that <noun>" ("Is she still at that practice in Canton?" -
  "Yeah, Penhallow Vets.");
* a "which/what/who/where" question answered with a fragment that holds a name or a number (no verb:
  "Bruntsfield Primary.", "At Nordfield Games."), which takes the question word's place.

The question is read by word classes rather than by its parse: the small parser often misreads
inverted questions ("Where does Raj work?" makes "Raj" an adverb), while the order "question word, auxiliary,
subject, rest" holds in every one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .names import suffix_type
from .nlp import SPACY_MODEL, parse
from .wordlists import word_list

_YES = set(word_list("answers", "_YES"))
_FRAGMENT_OPENERS = set(word_list("answers", "_FRAGMENT_OPENERS"))
_QUESTION_FILLERS = set(word_list("answers", "_QUESTION_FILLERS"))
_WH_FILLED = set(word_list("answers", "_WH_FILLED"))
_AUXILIARIES = set(word_list("answers", "_AUXILIARIES"))
_SUBJECT_POS = set(word_list("answers", "_SUBJECT_POS"))
# the answerer's voice: what the asker called "you" is "I" now, and the asker's "I" is "you"
_SWAP = {"you": "I", "your": "my", "yours": "mine", "yourself": "myself", "i": "you", "me": "you", "my": "your",
         "mine": "yours", "myself": "yourself"}
_FIRST_PERSON_BE = {"are": "am", "were": "was"}
_EXPANDED = {"'s": "is", "'re": "are", "'m": "am", "'ve": "have", "'ll": "will", "'d": "would"}
_QUESTION_ONLY = set(word_list("answers", "_QUESTION_ONLY"))  # "Have you joined it yet?" - "Yes": "I have joined it"
# questions a yes does not answer with a fact: open ("any", "anything") or a choice ("X or Y")
_OPEN_WORDS = set(word_list("answers", "_OPEN_WORDS"))
_NOT_ANSWERS = set(word_list("answers", "_NOT_ANSWERS"))
_AT_VERBS = set(word_list("answers", "_AT_VERBS"))
MAX_FRAGMENT_TOKENS = 8


@dataclass(frozen=True)
class Answered:
    """A statement the answer makes, in the answerer's voice, with the two turns it comes from."""

    text: str
    speaker: str
    question_id: str
    answer_id: str
    index: int  # of the answer in its batch


def answered_statements(utterances: list, docs: list) -> list[Answered]:
    """One statement per question-answer pair of adjacent turns that states something (see the module)."""
    out: list[Answered] = []
    speakers = {u.speaker.lower() for u in utterances}
    for k in range(1, len(utterances)):
        asked, answer = utterances[k - 1], utterances[k]
        if asked.speaker == answer.speaker:
            continue
        question, several = _only_question(docs[k - 1])
        if question is None:
            continue
        reply = _first_sentence(docs[k])
        if reply is None or several and not _names_a_place(reply):
            continue
        text = _statement(question, reply, speakers)
        if text:
            out.append(Answered(text=text, speaker=answer.speaker, question_id=asked.id, answer_id=answer.id,
                                index=k))
    return out


def parsed_statements(utterances: list, docs: list, spacy_model: str | None = None) -> list[tuple[Answered, object]]:
    """``answered_statements`` with each statement's spaCy parse (one call for the batch)."""
    found = answered_statements(utterances, docs)
    return list(zip(found, parse([a.text for a in found], spacy_model or SPACY_MODEL))) if found else []


def _only_question(doc) -> tuple[object | None, bool]:
    """The turn's one question ("What are their names? And your plans?" - which does "Max and Daisy" answer?);
    of several, the last when it asks where (then True): only a named place may answer it ("Will you look for
    work in Exeter too? Where are you working now?" - "Fernhollow Insurance.")."""
    asks = [s for s in doc.sents if s.text.rstrip().endswith("?") and any(t.pos_ in ("VERB", "AUX") for t in s)]
    if len(asks) == 1:
        return asks[0], False  # "Your little brother? Is he still in Leeds?": one question
    last = _words(asks[-1]) if asks else []
    while last and (last[0].lower_ in _QUESTION_FILLERS or last[0].pos_ == "INTJ"):
        last = last[1:]
    return (asks[-1], True) if last and last[0].lower_ == "where" else (None, False)


def _names_a_place(reply) -> bool:
    """The reply names a place or an organisation (by NER or by the name's head word: "Fernhollow Insurance")
    and no person ("Luna and Oliver." answers "What are their names?", not "And where do they live?")."""
    labels = {e.label_ for e in reply.ents}
    if "PERSON" in labels:
        return False
    names = " ".join(t.text for t in reply if t.pos_ == "PROPN" or t.text[:1].isupper() and t.i > reply.start)
    return bool(labels & {"GPE", "LOC", "FAC", "ORG"}) or suffix_type(names) in ("organization", "place")


def _first_sentence(doc):
    return next(iter(doc.sents), None)


def _words(span) -> list:
    return [t for t in span if not t.is_punct and not t.is_space]


def _statement(question, reply, speakers: set[str]) -> str | None:
    words = _words(question)
    while words and (words[0].lower_ in _QUESTION_FILLERS or words[0].pos_ == "INTJ"):
        words = words[1:]
    if len(words) < 3 or any(t.lower_ in _OPEN_WORDS for t in words):
        return None  # "Do you have any goals?", "Is it X or Y?": a yes states nothing
    wh: list = []
    if words[0].tag_ in ("WDT", "WP", "WRB", "WP$"):
        if words[0].lower_ not in _WH_FILLED:
            return None  # when (dated by the events module), why, how: no fragment fills them
        wh = [words[0]]
        if words[0].lower_ in ("which", "what", "whose") and len(words) > 1 and words[1].pos_ in ("NOUN", "ADJ"):
            k = 1
            while k < len(words) and words[k].pos_ in ("NOUN", "ADJ", "PROPN") and words[k].lemma_ not in _AUXILIARIES:
                k += 1
            wh = words[:k]
    rest = words[len(wh):]
    if not rest or rest[0].lemma_.lower() not in _AUXILIARIES or rest[0].tag_ not in (
            "MD", "VBZ", "VBP", "VBD", "VB"):
        return None
    aux, rest = rest[0], rest[1:]
    subject = []
    for t in rest:
        # "Where does Raj work?": the small tagger makes "Raj" an adverb; a capitalised word is part of a name
        if t.pos_ not in _SUBJECT_POS and t.tag_ not in ("POS", "PRP$") and not (
                t.text[:1].isupper() and t.pos_ not in ("VERB", "AUX", "ADP", "CCONJ")):
            break
        if subject and t.pos_ == "PRON" and t.tag_ != "PRP$" and subject[-1].tag_ != "POS":
            break  # "Is it you ...": one pronoun is the whole subject
        subject.append(t)
        if t.pos_ == "PRON" and t.tag_ != "PRP$":
            break
    rest = [t for t in rest[len(subject):] if t.lower_ not in _QUESTION_ONLY]
    if not subject or subject[-1].tag_ in ("PRP$", "POS", "DET"):
        return None
    if wh:
        fill = _fragment(reply, speakers)
        if fill is None:
            return None
        if wh[0].lower_ == "where" and fill[0].pos_ != "ADP":
            # "Where are you working now?" - "Fernhollow Insurance.": one works at a place, lives in it
            at = any(t.lemma_.lower() in _AT_VERBS for t in rest)
            fill = ["at" if at else "in", *(t.text for t in fill)]
        else:
            fill = [fill[0].text.lower() if fill[0].pos_ == "ADP" else fill[0].text, *(t.text for t in fill[1:])]
    elif _affirmed(reply) and (named := _name_for_the_noun(rest, reply)) is not None:
        rest, fill = named, []
    elif not _affirmed(reply) or (aux.tag_ == "MD" and subject[0].lower_ in ("you", "i", "we")) or not any(
            t.text[:1].isupper() and t.lower_ not in speakers and t.lower_ != "i" for t in [*subject, *rest]):
        # "Could you tell me more?", "Can I see a picture?": a request granted, not a fact; and a yes files a
        # fact only about something named ("Do you use that computer for gaming?" - "Yep!" is small talk)
        return None
    else:
        fill = []
    return _assemble(aux, subject, rest, fill, where=bool(wh) and wh[0].lower_ == "where")


def _fragment(reply, speakers: set[str]) -> list | None:
    words = _words(reply)
    while words and (words[0].lower_ in _FRAGMENT_OPENERS or words[0].pos_ == "INTJ"):
        words = words[1:]
    if not words or len(words) > MAX_FRAGMENT_TOKENS or any(t.pos_ in ("VERB", "AUX") for t in words):
        return None
    if any(t.lower_ in _NOT_ANSWERS or t.lower_ in _YES or t.lower_ in speakers for t in words):
        return None  # "Thanks, Melanie!": a reply to the asker, not the answer
    # a name or a number: "What did you think?" - "Great film." is an opinion, not a fact to file
    if not any(t.pos_ == "PROPN" or (t.pos_ == "NUM" and t.lower_ != "one") for t in words) or words[0].pos_ == "PRON":
        return None
    return words


_DEMONSTRATIVES = set(word_list("answers", "_DEMONSTRATIVES"))


def _name_for_the_noun(rest: list, reply) -> list | None:
    """"Is she still at that practice in Canton?" - "Yeah, Penhallow Vets.": the name after the yes takes the place
    of the noun it answers ("she is still at Penhallow Vets in Canton"); None unless the yes is followed by a name
    alone and the question has one "at/for/with that <noun>"."""
    words = _words(reply)[1:]
    if not words or len(words) > 5 or not all(t.pos_ == "PROPN" or t.text[:1].isupper() and t.pos_ in ("NOUN", "ADJ")
                                              for t in words) or words[-1].i + 1 < reply.end and \
            not reply.doc[words[-1].i + 1].is_punct:
        return None
    slots = [i for i in range(len(rest) - 2) if rest[i].pos_ == "ADP" and rest[i].lower_ in ("at", "for", "with")
             and rest[i + 1].lower_ in _DEMONSTRATIVES and rest[i + 2].pos_ == "NOUN"]
    if len(slots) != 1:
        return None
    i = slots[0]
    end = i + 3
    while end < len(rest) and rest[end].pos_ == "NOUN" and rest[end - 1].pos_ == "NOUN":
        end += 1
    return [*rest[:i + 1], *words, *rest[end:]]


def _affirmed(reply) -> bool:
    """A yes: "Yes!", "Yep, fourth year of medicine.", "Yes, Danny's been in Heavitree for years." - not a yes
    taken back ("Yes, but not any more", "Yeah, no")."""
    words = _words(reply)
    return bool(words) and words[0].lower_ in _YES and not any(
        t.dep_ == "neg" or t.lower_ in ("no", "not", "never", "but", "although", "though") for t in words)


def _assemble(aux, subject: list, rest: list, fill: list[str], where: bool) -> str:
    """subject + auxiliary (do-support dropped, its tense moved to the verb) + the rest, the fill after the
    verb (a place) or at the end (what the question word asked for)."""
    from lemminflect import getInflection  # imported here: it imports spaCy, which only an extraction needs

    said = [_swap(t) for t in subject]
    first_person = len(subject) == 1 and subject[0].lower_ == "you"
    last = subject[-1]
    singular = not first_person and (last.tag_ in ("NN", "NNP") or last.lower_ in ("he", "she", "it") or (
        last.text[:1].isupper() and last.tag_ not in ("NNS", "NNPS") and last.lower_ != "i"))
    out = list(said)
    verb_at = next((i for i, t in enumerate(rest) if t.pos_ == "VERB"), None)
    tail = [_swap(t) for t in rest]
    if aux.lemma_.lower() == "do":
        if verb_at is None:
            return ""
        verb = rest[verb_at]
        tag = "VBD" if aux.tag_ == "VBD" else "VBZ" if singular else "VBP"
        tail[verb_at] = (getInflection(verb.lemma_.lower(), tag=tag) or (verb.text,))[0]
    else:
        form = _EXPANDED.get(aux.lower_, aux.lower_)  # "the workshop's in Toronto" parses as a possessive
        if first_person:
            form = _FIRST_PERSON_BE.get(form, form)
        out.append(form)
    if fill and where:
        at = (verb_at + 1) if verb_at is not None else 0
        while at < len(rest) and rest[at].dep_ == "prt":
            at += 1
    else:
        at = len(rest)  # "What did you get up to yesterday?": the answer before "yesterday"
        while at > 0 and (rest[at - 1].ent_type_ in ("DATE", "TIME") or rest[at - 1].pos_ == "ADV"):
            at -= 1
    tail[at:at] = fill
    return " ".join([*out, *tail]).replace(" 's", "'s").replace(" n't", "n't")


def _swap(tok) -> str:
    if tok.lower_ == "you" and tok.dep_ in ("dobj", "pobj", "dative", "iobj"):
        return "me"
    return _SWAP.get(tok.lower_, tok.text)
