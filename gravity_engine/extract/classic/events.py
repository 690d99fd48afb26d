"""Event records from one batch: clauses that carry a temporal expression, and first-person
eventive clauses ("I adopted a puppy", "we're going to Paris"), reworded in the third person.

Dates: a clause with an expression gets the expression's span, resolved against the session time
(``timeparse`` reads the sentence's tense: "in May" said with a past verb is the last May, with a
future one the next). A clause without one gets what its tense honestly says, with ``when_text``
left empty (nothing was said): "now / currently / right now / at the moment" and the progressive
give the session day; "just" with a past verb the week up to it; any other past verb the bound
"on or before the session day" (granularity "before", date_start == date_end == session day); a
future one "on or after" it (granularity "after"). Without a session time the date stays unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ...anchors import Event
from ...conversation import Utterance
from ...timeparse import TimeSpan, find_time_expressions, parse_datetime
from ..base import Batch
from .answers import parsed_statements
from .lexicon import NOT_NAMES
from .names import looks_like_name, canonical_name, clean_name
from .grammar import (FUTURE_AUX, implicit_first_person, implicit_prefix, clause_tokens, is_first_person,
                      speaker_pronouns, subject_of, tense_reader, third_person, verb_tense)
from .wordlists import word_list

EVENTIVE = set(word_list("events", "EVENTIVE"))
# Verbs of thinking and feeling: a time expression next to them rarely marks an event.
STATIVE = set(word_list("events", "STATIVE"))
# Past-tense verbs said of oneself that report talk or thought, not something that happened.
NOT_EVENTS = set(word_list("events", "NOT_EVENTS"))
_NON_AGENTS = set(word_list("events", "_NON_AGENTS"))
_NOW_WORDS = set(word_list("events", "_NOW_WORDS"))
_FILLER = re.compile(
    r"^(?:(?:by the way|anyway|btw|oh|wow|yeah|yes|well|so|and|but|also|plus|guess what|you know)\b[\s,.!-]*)+",
    re.I)
_PAST_PASSIVE_AUX = set(word_list("events", "_PAST_PASSIVE_AUX"))
_PLACEHOLDER_OBJECTS = set(word_list("events", "_PLACEHOLDER_OBJECTS"))


def span_free(spans: list[TimeSpan], verb) -> bool:
    """True when no temporal expression falls inside the verb's sentence."""
    sent = verb.sent
    return not any(sent.start_char <= s.char_start < sent.end_char for s in spans)


def _is_question(verb) -> bool:
    """A clause that asks ("Did you go?", "What did you paint?") asserts no event."""
    sent = verb.sent
    if not sent.text.rstrip().endswith("?"):
        return False
    first = next((t for t in sent if not t.is_punct and t.dep_ != "intj"), None)
    subj = subject_of(verb)
    return first is None or first.tag_ in ("WP", "WRB", "WDT", "MD") or first.pos_ == "AUX" or (
        subj is not None and subj.lower_ == "you") or verb.i > sent.end - 4


def _asks(verb) -> bool:
    """A question ``_is_question`` lets through: asked inside a sentence ("Now tell me, how did the half
    marathon go?") or without its auxiliary ("Seen any good movies lately?")."""
    sent = verb.sent
    if not sent.text.rstrip().endswith("?"):
        return False
    subj = subject_of(verb)
    return verb.i >= sent.end - 4 or any(c.i < verb.i and (c.tag_ in ("WRB", "WP", "WDT") or (
        c.dep_ == "aux" and subj is not None and c.i < subj.i)) for c in verb.children) or verb.i == sent.start


def _reply_to(batch: Batch, k: int, utt) -> Utterance | None:
    """The next turn when another speaker says it (the answer to a question of turn ``k``), else None."""
    if utt.question_id is not None or k + 1 >= len(batch.utterances):
        return None
    nxt = batch.utterances[k + 1]
    return nxt if nxt.speaker != utt.speaker else None


MAX_REPLY_WORDS = 25


def _opening(text: str) -> str:
    """A reply's first sentence (two when the first is a mere "Yes!"), at most ``MAX_REPLY_WORDS`` words."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    said = sentences[0] if len(sentences[0].split()) > 2 or len(sentences) == 1 else " ".join(sentences[:2])
    words = said.split()
    return said if len(words) <= MAX_REPLY_WORDS else " ".join(words[:MAX_REPLY_WORDS]) + " ..."


def _event_tokens(verb, subj) -> list:
    """The clause of an event, made readable on its own.

    "(I want) to tell you about X" takes its governing verb; "(the painting) I made last week"
    keeps the noun it describes; "(I love it and) went there" gets its subject back.
    """
    if verb.dep_ == "xcomp" and verb.head.pos_ in ("VERB", "AUX"):
        return clause_tokens(verb.head)
    tokens = clause_tokens(verb)
    if verb.dep_ == "relcl":
        head = verb.head
        noun = [t for t in head.subtree if t.i <= head.i and t.i >= head.left_edge.i and t.dep_ != "relcl"
                and not (t.i < head.i and t.dep_ in ("prep", "pobj"))]
        return sorted({t.i: t for t in [*noun, *tokens]}.values(), key=lambda t: t.i)
    if subj is not None and all(t.i != subj.i for t in tokens) and subj.i < verb.i:
        tokens = [subj, *tokens]
    return tokens


def _tense(verb) -> str:
    aux = {c.lower_ for c in verb.children if c.dep_ in ("aux", "auxpass")}
    if not aux and verb.tag_ in ("VBG", "VB") and verb.dep_ in ("conj", "advcl", "xcomp") and verb.head.i != verb.i:
        return _tense(verb.head)  # "I was there, spending the day": the tense of the verb it hangs on
    if aux & FUTURE_AUX:
        return "future"
    if verb.lemma_ == "go" and verb.tag_ == "VBG" and any(c.dep_ == "xcomp" for c in verb.children):
        return "future"  # "I'm going to paint"
    if verb.tag_ == "VBD" or (verb.tag_ == "VBN" and aux & {"have", "'ve", "has", "had", "'d"}):
        return "past"
    if verb.tag_ == "VBN" and (aux & _PAST_PASSIVE_AUX or (not aux and verb.dep_ in ("ROOT", "conj", "ccomp"))):
        # "I got accepted", "we were married"; a bare participle heading a clause ("... and just teamed
        # up with an artist") is the parser's misreading of a simple past.
        return "past"
    if verb.tag_ == "VBG" and aux & {"am", "'m", "is", "are", "'re", "was", "were"}:
        return "progressive"
    return "present"


def _span_tokens(tokens, span: TimeSpan) -> list:
    return [t for t in tokens if t.idx < span.char_end and t.idx + len(t) > span.char_start]


def _hops(tok, verb) -> int:
    """Steps up the parse from ``tok`` to ``verb`` (99 when ``verb`` is not above it); a possessive
    on the way ("last Friday's qualifier") counts as far."""
    hops, penalty = 0, 0
    while tok.i != verb.i and hops < 12:
        if tok.dep_ == "poss" or tok.tag_ == "POS":
            penalty = 20
        if tok.head.i == tok.i:
            return 99
        tok, hops = tok.head, hops + 1
    return hops + penalty if tok.i == verb.i else 99


def _nearest_span(tokens, verb, spans: list[TimeSpan]) -> TimeSpan | None:
    """The time expression of the clause that hangs closest on its verb: "the results of last
    Friday's qualifier came out this morning" is dated this morning."""
    best, best_hops = None, 1000
    for span in spans:
        inside = _span_tokens(tokens, span)
        if inside:
            hops = min(_hops(t, verb) for t in inside)
            if hops < best_hops:
                best, best_hops = span, hops
    return best


def _split_dated_conjuncts(tokens, verb, spans: list[TimeSpan]) -> list:
    """Drop a conjoined verb that carries its own time expression from the clause: "fly out on 14
    May and come back on 21 May" is two events, each dated by its own expression."""
    if not spans:
        return tokens
    drop: set[int] = set()
    for conj in (c for c in verb.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX")):
        sub = list(conj.subtree)
        if any(_span_tokens(sub, s) for s in spans) and any(
                _span_tokens([t for t in tokens if t.i not in {x.i for x in sub}], s) for s in spans):
            drop.update(t.i for t in sub)
            drop.update(c.i for c in verb.children if c.dep_ == "cc" and verb.i < c.i < conj.i)
    if not drop:
        return tokens
    kept = [t for t in tokens if t.i not in drop]
    while kept and (kept[-1].is_punct or kept[-1].dep_ == "cc"):
        kept.pop()
    return kept


def _overlaps(tokens, span: TimeSpan) -> bool:
    return any(t.idx < span.char_end and t.idx + len(t) > span.char_start for t in tokens)


def _participants(tokens, subj, speaker: str, other: str | None, speakers: list[str]) -> list[str]:
    people: list[str] = []
    words = {t.lower_ for t in tokens}
    if is_first_person(subj) or words & {"i", "me", "my", "we", "our", "us"}:
        people.append(speaker)
    if other and words & {"you", "your"}:
        people.append(other)
    for tok in tokens:
        if tok.ent_type_ == "PERSON" and tok.ent_iob_ == "B":
            ent = next((e for e in tok.doc.ents if e.start == tok.i), None)
            if ent is not None:
                name, _ = canonical_name(clean_name(ent.text), speakers)
                if name and name not in people:
                    people.append(name)
    return people or [speaker]


def _where(tokens, verb) -> str:
    for tok in tokens:
        if tok.ent_type_ in ("GPE", "LOC", "FAC") and tok.ent_iob_ == "B":
            ent = next((e for e in tok.doc.ents if e.start == tok.i), None)
            if ent is not None:
                return clean_name(ent.text)
    for prep in (c for c in verb.children if c.dep_ == "prep" and c.lower_ in ("to", "at", "in")):
        pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN"), None)
        if pobj is not None:
            return clean_name(pobj.text)
    return ""


def _session_day(batch: Batch) -> date | None:
    when = parse_datetime(batch.session_time) if batch.session_time else None
    return when.date() if when else None


def _near_now(tokens, verb, tense: str, ref: date | None) -> tuple[str, date, date, str] | None:
    """Clauses tied to the session itself: "right now", "currently", "just" + a past verb."""
    if ref is None:
        return None
    words = [t.lower_ for t in tokens]
    text = " ".join(words)
    for phrase in ("right now", "at the moment"):
        if phrase in text:
            return phrase, ref, ref, "day"
    now_word = any(c.dep_ == "advmod" and c.lower_ in _NOW_WORDS for c in verb.children)
    if now_word and tense in ("progressive", "present"):
        word = next(c.text for c in verb.children if c.dep_ == "advmod" and c.lower_ in _NOW_WORDS)
        return word, ref, ref, "day"
    if tense == "past" and any(c.dep_ == "advmod" and c.lower_ == "just" for c in verb.children):
        return "just", ref - timedelta(days=6), ref, "range"  # the past week, today included
    return None


def extract_events(batch: Batch, docs: list, answered: list | None = None) -> list[Event]:
    """Events of the batch, one per qualifying clause, each citing its utterance; the statements of
    question-answer pairs (``answers.parsed_statements``, computed when not given) are read as the answerer's
    turn and cite both ("Where's the workshop?" - "In Toronto, on June 21.")."""
    ref = _session_day(batch)
    speakers = sorted({*batch.speakers, *(u.speaker for u in batch.utterances)})
    pronouns = speaker_pronouns([u.text for u in batch.utterances], speakers)
    events: list[Event] = []
    seen: set[str] = set()
    named = _NamedPeople(speakers, docs)
    if answered is None:
        answered = parsed_statements(batch.utterances, docs)
    turns = [(k, _Said(u.id, u.speaker, u.text), doc) for k, (u, doc) in enumerate(zip(batch.utterances, docs))]
    for a, a_doc in answered:  # read just before the answer's own turn
        at = next(i for i, t in enumerate(turns) if t[0] == a.index)
        turns.insert(at, (a.index, _Said(a.answer_id, a.speaker, a.text, question_id=a.question_id), a_doc))
    for k, utt, doc in turns:
        others = [s for s in speakers if s != utt.speaker]
        other = others[0] if len(others) == 1 else None
        spans = find_time_expressions(utt.text, ref, tense_reader(doc))
        used: set[int] = set()
        first_of_utt = len(events)
        event_spans: dict[str, tuple] = {}
        for verb in doc:
            if verb.pos_ not in ("VERB", "AUX") or verb.dep_ in ("aux", "auxpass") or verb.i in used:
                continue
            if _is_question(verb):
                continue
            subj = subject_of(verb)
            implicit = subj is None and implicit_first_person(verb)
            if (subj is None and not implicit) or (subj is not None and subj.lower_ in _NON_AGENTS):
                continue
            lemma = verb.lemma_.lower()
            tense = "progressive" if implicit and verb.tag_ == "VBG" else _tense(verb)
            lets = subj is not None and subj.lower_ == "'s" and verb.head.lemma_.lower() == "let"
            if lets:  # "Let's paint next Saturday": a plan of both speakers
                tense = "future"
            if lemma in ("do", "be", "have") and span_free(spans, verb) or (
                    lemma == "get" and verb.tag_ == "VBN" and tense == "past") or _does_a_placeholder(verb):
                continue  # "I did", "I've got guts", "guess what I did this week": no event
            tokens = _split_dated_conjuncts(_event_tokens(verb, subj), verb, spans)
            if len(tokens) < (3 if implicit else 4):
                continue
            span = _nearest_span(tokens, verb, spans)
            if span is not None:
                if lemma in STATIVE or (lemma in ("be", "have") and not any(
                        c.dep_ in ("prep", "attr", "dobj") for c in verb.children)):
                    continue
            else:
                # First-person past/future clauses are nearly always events unless the verb is one of
                # thinking, feeling or talking; what others did needs a clearly eventive verb.
                if tense not in ("past", "future", "progressive"):
                    continue
                if implicit or is_first_person(subj):
                    if lemma in STATIVE or lemma in NOT_EVENTS:
                        continue
                elif not ((subj.pos_ == "PROPN" or any(c.dep_ == "poss" and c.lower_ in ("my", "our")
                                                       for c in subj.children)) and lemma in EVENTIVE):
                    continue
            reply = None
            if _asks(verb):
                # "Now tell me, how did the half marathon go on Sunday?": no event alone; with the reply
                # ("1:31:40, a personal best!") it says what happened then
                reply = _reply_to(batch, k, utt)
                if reply is None:
                    continue
            referent = named.referent(subj, k) if subj is not None else None
            forms = {subj.i: referent} if referent else None
            if lets:
                forms = {subj.i: f"{utt.speaker} and {other or 'others'} will"}
            what = _reworded(tokens, utt.speaker, other, pronouns, forms)
            if implicit:
                what = implicit_prefix(utt.speaker, tokens[0]) + what[:1].lower() + what[1:]
                what = what[:1].upper() + what[1:]
            key = what.lower()
            if key in seen or len(what.split()) < 3:
                continue
            seen.add(key)
            used.update(t.i for t in tokens)
            people = _participants(tokens, subj, utt.speaker, other, speakers)
            if lets and other and other not in people:
                people.append(other)
            if referent:  # "she" is the one named before; the speaker only when "I"/"me"/"my" is in the clause
                mine = any(t.lower_ in ("i", "me", "my", "we", "us", "our") for t in tokens)
                people = [referent, *(p for p in people if p != referent and (p != utt.speaker or mine))]
            event = Event(
                id=f"ev-b{batch.index}-{len(events) + 1}", what=what,
                participants=people,
                where=_where(tokens, verb), session_id=batch.session_id, session_date=batch.session_time,
                source_ids=list(utt.source_ids),
            )
            if reply is not None:
                event.what = f"{what}? {reply.speaker}: {_opening(reply.text)}"
                event.source_ids.append(reply.id)
            near = None if span is not None else _near_now(tokens, verb, tense, ref)
            if span is not None:
                event.when_text = span.text
                event.date_start, event.date_end = span.start.isoformat(), span.end.isoformat()
                event.granularity = span.granularity
            elif near is not None:
                event.when_text = near[0]
                event.date_start, event.date_end, event.granularity = near[1].isoformat(), near[2].isoformat(), near[3]
            elif ref is not None:
                bound = "after" if tense == "future" else "day" if tense in ("progressive", "present") else "before"
                event.date_start = event.date_end = ref.isoformat()
                event.granularity = bound
            event_spans[event.id] = (span, verb)
            events.append(event)
        _date_by_leftover_spans(events[first_of_utt:], event_spans, spans, doc, utt, other, speakers, batch, seen,
                                events, pronouns)
        if utt.question_id is None:  # a statement's names were seen in its two turns
            named.saw(doc, k)
    _date_by_answers(batch, docs, events, seen, speakers, pronouns, ref)
    return events


RECENT_UTTERANCES = 1  # "she" with nobody named before it in its turn means a person named in the turn before


@dataclass(frozen=True)
class _Said:
    """What the event rules read: an utterance, or a question-answer statement in the answerer's voice."""

    id: str
    speaker: str
    text: str
    question_id: str | None = None  # set for a statement: it cites the question and the answer

    @property
    def source_ids(self) -> list[str]:
        return [self.id] if self.question_id is None else [self.question_id, self.id]


class _NamedPeople:
    """Who "he" or "she" as an event's doer means: the person NER names last before it in its turn, else the
    one named last in the turn before; never a speaker ("she" in a two-person chat is a third person). Nobody
    when another name comes after that person's ("How's Biscuit doing?" - "He ran four miles": the dog, whom
    NER does not call a person), or when nobody was named: the clause then stays as said."""

    def __init__(self, speakers: list[str], docs: list):
        self.speakers = speakers
        self.last: str | None = None
        self.last_at = -RECENT_UTTERANCES - 1
        # A one-word "person" opening a sentence is often a capitalised word ("Beginner's luck ..."): it counts
        # when the batch also names it inside a sentence.
        self.inside = {e.text for d in docs for e in d.ents if e.label_ == "PERSON" and e.start != e.sent.start}

    def _name(self, ent) -> str | None:
        if ent.label_ != "PERSON" or (len(ent) == 1 and ent.start == ent.sent.start and ent.text not in self.inside):
            return None
        name, _ = canonical_name(clean_name(ent.text), self.speakers)
        if not name or name in self.speakers or not looks_like_name(name) or name.lower() in NOT_NAMES:
            return None
        return name

    def _last_named(self, doc, end: int) -> str | None:
        """The person named last before token ``end``, unless another proper name follows it."""
        person, after = None, -1
        for e in doc.ents:
            if e.end <= end and (n := self._name(e)):
                person, after = n, e.end
        if person is None:
            return None
        speakers = {w.lower() for sp in self.speakers for w in sp.split()}
        later = [t for t in doc[after:end] if t.pos_ == "PROPN" and t.lower_ not in speakers]
        return None if later else person

    def referent(self, subj, k: int) -> str | None:
        if subj.lower_ not in ("he", "she"):
            return None
        before = self._last_named(subj.doc, subj.i)
        if before or any(self._name(e) for e in subj.doc.ents if e.end <= subj.i):
            return before
        return self.last if k - self.last_at <= RECENT_UTTERANCES else None

    def saw(self, doc, k: int) -> None:
        self.last, self.last_at = self._last_named(doc, len(doc)), k


_ANSWER_OPENERS = set(word_list("events", "_ANSWER_OPENERS"))


def _when_question(doc):
    """The verb a closing "When ...?" question asks about ("When do you get the keys?": get), else None."""
    asks = [s for s in doc.sents if s.text.rstrip().endswith("?")]
    if not asks:
        return None
    sent = asks[-1]  # an answer answers the last question
    when = next((t for t in sent if t.lower_ == "when" and t.tag_ == "WRB"), None)
    if when is None or when.dep_ != "advmod" or when.head.i != sent.root.i:
        return None  # "when you get there, will you call?" asks something else
    verb = when.head
    if verb.pos_ != "VERB" or when.i > verb.i or any(c.dep_ == "neg" for c in verb.children):
        return None
    return verb


def _statement_of_question(verb, subj):
    """The question's clause in statement order and the verb's statement form: "when did you ask her" ->
    tokens "you ask her" and {ask: "asked"}; "when will you start" -> "you will start". Also whether it
    speaks of the future (True), the past (False) or does not say (None)."""
    from lemminflect import getInflection  # imported here: it imports spaCy, which only an extraction needs

    do = next((c for c in verb.children if c.dep_ == "aux" and c.lemma_.lower() == "do"), None)
    subject = sorted(subj.subtree, key=lambda t: t.i)
    inside = {t.i for t in subject}
    tokens = [t for t in clause_tokens(verb) if t.lower_ != "when" and not t.is_punct and (do is None or t.i != do.i)]
    before = [t for t in tokens if t.i < subject[0].i and t.i not in inside and t.dep_ in ("aux", "auxpass")]
    after = [t for t in tokens if t.i > subject[-1].i]
    forms: dict[int, str] = {}
    future = verb_tense(verb)
    if do is not None:
        past = do.lower_ == "did"
        singular = subj.lower_ == "you" or subj.tag_ in ("NN", "NNP") or subj.lower_ in ("he", "she")
        tag = "VBD" if past else "VBZ" if singular else "VBP"
        forms[verb.i] = (getInflection(verb.lemma_.lower(), tag=tag) or (verb.text,))[0]
        future = not past  # "when do you get the keys?" asks about a plan
    return [*subject, *before, *after], forms, future


def _date_by_answers(batch: Batch, docs: list, events: list[Event], seen: set[str], speakers: list[str],
                     pronouns: dict[str, str], ref: date | None) -> None:
    """ "When do you get the keys?" - "On the 16th of August.": an answer that opens with a time expression
    dates the question's clause, which becomes an event citing both turns. The answer's own clauses say
    nothing of what happened then, and the question's tense says which 16th of August is meant."""
    if ref is None:
        return
    for k in range(1, len(batch.utterances)):
        asked, answer = batch.utterances[k - 1], batch.utterances[k]
        verb = _when_question(docs[k - 1]) if asked.speaker != answer.speaker else None
        subj = subject_of(verb) if verb is not None else None
        if subj is None or subj.lower_ in _NON_AGENTS or verb.lemma_.lower() in STATIVE | {"be", "have", "do"}:
            continue
        lead = [t for t in docs[k] if not (t.is_punct or t.lower_ in _ANSWER_OPENERS)][:3]
        tokens, forms, future = _statement_of_question(verb, subj)
        if not lead or len(tokens) < 2:
            continue
        spans = find_time_expressions(answer.text, ref, lambda _offset: future)
        span = next((s for s in spans if s.char_start <= lead[-1].idx and s.char_end > lead[0].idx), None)
        if span is None or span.text.lower() in _VAGUE_SPAN_WORDS or any(
                e.source_ids == [answer.id] and e.when_text == span.text for e in events):
            continue  # no date up front, or the answer's own clause took it ("Last week I went to ...")
        what = _reworded(tokens, asked.speaker, answer.speaker, pronouns, forms)
        if what.lower() in seen or len(what.split()) < 2:
            continue
        seen.add(what.lower())
        event = Event(id=f"ev-b{batch.index}-{len(events) + 1}", what=what,
                      participants=_participants(tokens, subj, asked.speaker, answer.speaker, speakers),
                      where=_where(tokens, verb), session_id=batch.session_id, session_date=batch.session_time,
                      source_ids=[asked.id, answer.id])
        _set_span(event, span)
        events.append(event)


def _reworded(tokens, speaker: str, other: str | None, pronouns: dict[str, str],
              forms: dict[int, str] | None = None) -> str:
    """An event's text: the clause in the third person (``third_person``), chat fillers off its front,
    capitalised."""
    what = _FILLER.sub("", third_person(tokens, speaker, other, pronouns.get(speaker, "they"), forms)).strip()
    return what[:1].upper() + what[1:]


def _hang_verb(tok):
    """The verb a token of a time expression hangs on (None when it hangs on no verb)."""
    hops = 0
    while tok is not None and hops < 8:
        if tok.pos_ in ("VERB", "AUX") and tok.dep_ not in ("aux", "auxpass"):
            return tok
        if tok.head.i == tok.i:
            return None
        tok, hops = tok.head, hops + 1
    return None


def _date_by_leftover_spans(utt_events: list[Event], event_spans: dict, spans: list[TimeSpan], doc, utt,
                            other: str | None, speakers: list[str], batch: Batch, seen: set[str],
                            events: list[Event], pronouns: dict[str, str]) -> None:
    """A time expression that dated no event of its utterance still dates something said there:
    an undated event of the same sentence takes it ("Ironwood gave me a free induction with a
    coach, it's on Thursday evening"); otherwise the clause it hangs on becomes an event of its own
    ("Registration closes in two weeks", "a PhD place starting in October")."""
    used = {id(sp) for sp, _ in event_spans.values() if sp is not None}
    for span in spans:
        if id(span) in used or span.text.lower() in _VAGUE_SPAN_WORDS:
            continue
        tok = next((t for t in doc if t.idx <= span.char_start < t.idx + len(t)), None)
        if tok is None:
            continue
        asks = tok.sent.text.rstrip().endswith("?")
        if asks and not ((verb := _hang_verb(tok)) is not None and _says_when_not_what(verb)):
            continue  # a question dates nothing, except "guess what I did this week?" before the answer
        sent = tok.sent
        undated = [e for e in utt_events if event_spans.get(e.id, (None, None))[0] is None
                   and (v := event_spans[e.id][1]) is not None and v.sent.start == sent.start]
        if len(undated) == 1:
            _set_span(undated[0], span)
            event_spans[undated[0].id] = (span, event_spans[undated[0].id][1])
            used.add(id(span))
            continue
        verb = _hang_verb(tok)
        if verb is None or verb.lemma_.lower() in STATIVE:
            continue
        if _says_when_not_what(verb):
            # "Something exciting happened last Friday. I went to a game convention ...": the next
            # sentence says what happened; its first undated event takes the date.
            following = [e for e in utt_events if event_spans.get(e.id, (None, None))[0] is None and not e.when_text
                         and (v := event_spans[e.id][1]) is not None and v.sent.start == sent.end]
            for event in following:  # "I took the first step - I applied to adoption agencies!": both
                _set_span(event, span)
                event_spans[event.id] = (span, event_spans[event.id][1])
            if following:
                used.add(id(span))
                continue
            if asks:
                continue
        tokens = clause_tokens(verb)
        if verb.dep_ in ("acl", "relcl") and verb.head.pos_ in ("NOUN", "PROPN"):
            head = verb.head
            if head.dep_ == "appos" and head.head.pos_ == "PROPN" and head.head.i < head.i:
                # "Dr. Aisha Bello, our clinical advisor, signed off on Friday": the parser hangs the verb on the
                # appositive; the one who signed is the name
                head = head.head
            noun = [t for t in head.subtree if head.left_edge.i <= t.i <= head.i and t.dep_ not in ("relcl", "acl")]
            tokens = sorted({t.i: t for t in [*noun, *tokens]}.values(), key=lambda t: t.i)
        else:
            subj = subject_of(verb)
            if subj is not None and all(t.i != subj.i for t in tokens) and subj.i < verb.i:
                tokens = [*subj.subtree, *tokens] if subj.pos_ in ("NOUN", "PROPN") else [subj, *tokens]
        tokens = [t for t in tokens if not t.is_punct or t.text in ("-", "'")]
        if len(tokens) < 3:
            continue
        what = _reworded(tokens, utt.speaker, other, pronouns)
        if what.lower() in seen or len(what.split()) < 3:
            continue
        seen.add(what.lower())
        event = Event(id=f"ev-b{batch.index}-{len(events) + 1}", what=what,
                      participants=_participants(tokens, subject_of(verb), utt.speaker, other, speakers),
                      where=_where(tokens, verb), session_id=batch.session_id, session_date=batch.session_time,
                      source_ids=list(utt.source_ids))
        _set_span(event, span)
        used.add(id(span))
        events.append(event)


_VAGUE_SPAN_WORDS = set(word_list("events", "_VAGUE_SPAN_WORDS"))
_WHEN_NOT_WHAT_VERBS = set(word_list("events", "_WHEN_NOT_WHAT_VERBS"))  # "last night was amazing", "something happened", "it went well"


def _says_when_not_what(verb) -> bool:
    """A clause that dates something without saying what: its subject is a placeholder ("something",
    "it", "last night") and its verb only reports that it was or happened."""
    lemma = verb.lemma_.lower()
    if _does_a_placeholder(verb):
        return True
    if lemma not in _WHEN_NOT_WHAT_VERBS:
        return False
    subj = subject_of(verb)
    if subj is None:  # "Last night was amazing!": the parser sees no subject, only the time
        return lemma != "go"
    return subj.lower_ in _NON_AGENTS or subj.lower_ in ("night", "week", "weekend", "day", "morning", "evening")


def _does_a_placeholder(verb) -> bool:
    """ "What I did this week", "I did something fun yesterday": doing, with no word of what."""
    return verb.lemma_.lower() == "do" and any(
        c.dep_ == "dobj" and c.lower_ in _PLACEHOLDER_OBJECTS for c in verb.children)


def _set_span(event: Event, span: TimeSpan) -> None:
    event.when_text = span.text
    event.date_start, event.date_end = span.start.isoformat(), span.end.isoformat()
    event.granularity = span.granularity
