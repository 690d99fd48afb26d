"""Atomic facts: what a speaker says about themselves, as short third-person sentences.

"I'm a counselor" said by Caroline becomes "Caroline is a counselor", "I just started pottery"
becomes "Caroline started pottery", "My sister lives in Lisbon" becomes "Caroline's sister lives
in Lisbon", and "I joined a support group yesterday" said on 8 May 2023 becomes "Caroline joined a
support group on 7 May 2023". Each fact is one clause of the dependency parse whose subject is the
speaker (I / we / my X, or the dropped "I" of chat: "Researching adoption agencies"), reworded with
``grammar.third_person`` (I/my -> the speaker, you/your -> the other speaker when there are two),
with fillers ("just", "really") dropped and a relative date replaced by its resolved form.

Kept: clauses that carry content (a noun, proper noun or number besides the subject), at most
``MAX_FACT_WORDS`` words. Dropped: questions, hedges (might, maybe, "I think I'll ..."), conditions
("if I ..."), verbs of talk and thought ("I think so", "I mean", "I know"), and chit-chat ("I'm so
happy for you", "that's great": no first-person subject or no content).

Facts are stored as ``Attribute(key="fact", value=<sentence>)`` on the speaker's profile and become
the key facts, summaries and arc states of topics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...timeparse import TimeSpan, spell_span
from .grammar import implicit_first_person, implicit_prefix, clause_tokens, subject_of, third_person
from .names import full_name
from .wordlists import word_list

FACT_KEY = "fact"
MAX_FACT_WORDS = 16
MAX_FACTS_PER_UTTERANCE = 4

# Verbs of talk, thought and feeling: "I think so", "I mean it", "I know", "I guess".
_TELLING = set(word_list("facts", "_TELLING"))  # to the listener, in this chat
SKIP_VERBS = set(word_list("facts", "SKIP_VERBS"))
_HEDGE_HEADS = set(word_list("facts", "_HEDGE_HEADS"))
_HEDGE_AUX = set(word_list("facts", "_HEDGE_AUX"))
_HEDGE_ADV = set(word_list("facts", "_HEDGE_ADV"))
_CONDITION_MARKS = set(word_list("facts", "_CONDITION_MARKS"))
FILLER_ADV = set(word_list("facts", "FILLER_ADV"))
# Nouns that carry no content of their own: "I had a great time", "I'll do my best".
GENERIC_NOUNS = set(word_list("facts", "GENERIC_NOUNS"))
_ADJ_CHITCHAT = set(word_list("facts", "_ADJ_CHITCHAT"))
_BREAKS = set(word_list("facts", "_BREAKS"))
_INTERJECTIONS = set(word_list("facts", "_INTERJECTIONS"))
_CUT_DEPS = set(word_list("facts", "_CUT_DEPS"))


_CONTRACTION = re.compile(r"(?<=\w)'(re|ve|m|ll|d)\b", re.I)
_EXPAND = {"re": "are", "ve": "have", "m": "am", "ll": "will", "d": "had"}
_VAGUE_TIMES = set(word_list("facts", "_VAGUE_TIMES"))


@dataclass
class Fact:
    text: str
    source_id: str
    speaker: str
    score: float  # specificity: names, numbers and dates count most
    verb: str  # lemma of the clause's verb
    subject_kind: str  # "i" | "we" | "my" | "implicit" | "name"
    about: str = ""  # the named person a "name" fact is about (stored on that profile)


class _Lit:
    """A literal word group that stands in for tokens inside ``third_person`` (a spelled date)."""

    tag_ = ""
    dep_ = ""
    whitespace_ = " "

    def __init__(self, text: str, i: int):
        self.text = text
        self.lower_ = text.lower()
        self.i = i


def _is_question(sent) -> bool:
    return sent.text.rstrip().endswith("?")


def fact_subject(verb, people: set[str] | frozenset[str] = frozenset()):
    """(subject token or None, kind): I/we, "my sister", a named person, or None when the clause is not the
    speaker's. ``people``: names already known as persons ("Piotr is back at work" starts its sentence)."""
    subj = subject_of(verb)
    if subj is None:
        return None, ""
    low = subj.lower_
    if low == "i":
        return subj, "i"
    if low == "we":
        return subj, "we"
    if subj.pos_ == "NOUN" and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in subj.children):
        return subj, "my"
    # "Theo is a history teacher", "Marcus coaches at Ironwood": a named person, not the first word
    # of a sentence unless the NER calls it a person.
    if subj.pos_ == "PROPN" and subj.text[:1].isupper() and (subj.ent_type_ in ("PERSON", "") and (
            subj.i > subj.sent.start or subj.ent_type_ == "PERSON") or subj.text in people):
        return subj, "name"
    return None, ""


def hedged(verb) -> bool:
    for c in verb.children:
        if c.dep_ in ("aux", "auxpass") and c.lower_ in _HEDGE_AUX:
            return True
        if c.dep_ == "advmod" and c.lower_ in _HEDGE_ADV:
            return True
        if c.dep_ == "mark" and c.lower_ in _CONDITION_MARKS:
            return True
        if c.dep_ == "advcl" and any(g.dep_ == "mark" and g.lower_ in ("if", "unless") for g in c.children):
            return True  # "If I get the job, I'll move to Berlin"
    if verb.dep_ == "ccomp" and verb.head.lemma_.lower() in _HEDGE_HEADS:
        return True
    if verb.dep_ == "advcl" and any(c.dep_ == "mark" and c.lower_ in _CONDITION_MARKS for c in verb.children):
        return True
    # "I'd love to ...", "I would like to ...": a wish, not a fact (the profile's "wants" keeps it).
    return False


def _clause(verb, subj) -> list:
    """The verb's clause, cut to its core: no subordinate, relative or parenthetic clauses, no fillers."""
    cut: set[int] = set()
    for tok in verb.subtree:
        if tok.i == verb.i or tok.i in cut:
            continue
        head_is_verb = tok.head.i == verb.i
        if tok.dep_ in _CUT_DEPS or (tok.dep_ == "conj" and tok.pos_ in ("VERB", "AUX") and head_is_verb) or (
                tok.dep_ == "cc" and head_is_verb) or (tok.dep_ == "ccomp" and head_is_verb
                                                       and any(c.dep_ in ("nsubj", "nsubjpass") for c in tok.children)):
            cut.update(t.i for t in tok.subtree)
        elif tok.dep_ == "advmod" and tok.lower_ in FILLER_ADV and not list(tok.children):
            cut.add(tok.i)
        elif tok.dep_ == "npadvmod" and tok.lower_ in ("lol", "haha"):
            cut.add(tok.i)
    tokens = [t for t in clause_tokens(verb, max_tokens=60) if t.i not in cut]
    if subj is not None and all(t.i != subj.i for t in tokens):
        subj_tokens = [t for t in subj.subtree if t.dep_ not in ("relcl", "appos", "punct")]
        tokens = sorted([*subj_tokens, *tokens], key=lambda t: t.i)
    # The words before the last break ahead of the subject, and after the first break past the verb
    # (comma, dash, bracket), belong to another thought.
    start = (subj.left_edge.i if subj is not None else verb.i)
    before = [t.i for t in tokens if t.text in _BREAKS and t.i < start]
    if before:
        tokens = [t for t in tokens if t.i > before[-1]]
    while tokens and tokens[0].i != (subj.i if subj is not None else -1) and (
            tokens[0].pos_ == "INTJ" or tokens[0].lower_ in _INTERJECTIONS):
        tokens = tokens[1:]
    out: list = []
    for t in tokens:
        if t.text in _BREAKS and t.i > verb.i and out:
            break
        if t.text in _BREAKS or (t.is_punct and t.text in ('"', "“", "”")):
            continue
        out.append(t)
    while out and (out[-1].is_punct or out[-1].dep_ in ("cc", "prep", "det", "poss", "aux", "mark")
                   or out[-1].pos_ in ("ADP", "CCONJ", "DET", "PART") and out[-1].lower_ != "n't"):
        out.pop()
    return out


def _to_the_listener(verb, other: str | None) -> bool:
    """"to ask", "to tell you", "to tell Tom" (the listener): said in this chat; not "to ask the doc about X"."""
    told = [c for c in verb.children if c.dep_ in ("dobj", "dative", "iobj")]
    return not told or all(c.lower_ == "you" or (other is not None and c.text == other) for c in told)


def _has_content(tokens, verb, subj, time_ids: set[int]) -> float:
    """Specificity of the clause: 0 when nothing but the subject is a noun, name or number."""
    subj_ids = {t.i for t in subj.subtree} if subj is not None else set()
    score = 0.0
    for t in tokens:
        if t.i in subj_ids or t.i in time_ids or t.i == verb.i:
            continue
        if t.pos_ == "PROPN" and t.text[:1].isupper():
            score += 2.0
        elif t.pos_ == "NUM" or (t.like_num and t.pos_ != "PRON"):
            score += 1.5
        elif t.pos_ == "NOUN" and t.lemma_.lower() not in GENERIC_NOUNS and t.lower_ not in GENERIC_NOUNS:
            score += 1.0
    return score


def _chitchat_be(verb) -> bool:
    """"I'm so happy for you", "I'm sorry to hear that": an adjective of feeling, no noun phrase."""
    if verb.lemma_ != "be":
        return False
    kids = list(verb.children)
    if any(c.dep_ == "attr" for c in kids):
        return False
    acomp = next((c for c in kids if c.dep_ == "acomp"), None)
    return acomp is not None and acomp.lemma_.lower() in _ADJ_CHITCHAT


def facts_of_doc(doc, speaker: str, other: str | None, source_id: str,
                 spans: list[TimeSpan] | None = None, pronoun: str = "they",
                 people: set[str] | frozenset[str] = frozenset()) -> list[Fact]:
    """The facts one utterance states about its speaker (at most MAX_FACTS_PER_UTTERANCE, most specific)."""
    spans = spans or []
    found: list[Fact] = []
    seen: set[str] = set()
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX") or verb.dep_ in ("aux", "auxpass", "xcomp", "relcl", "amod",
                                                             "pcomp", "csubj", "prep", "compound"):
            continue
        if verb.dep_ == "acl" and not any(c.dep_ == "nsubj" for c in verb.children):
            continue  # "a dog called Rufus"; but "Big news: I signed with ..." is a clause of its own
        if _is_question(verb.sent):
            continue
        subj, kind = fact_subject(verb, people)
        if subj is None:
            if not implicit_first_person(verb):
                continue
            kind = "implicit"
        lemma = verb.lemma_.lower()
        if lemma in SKIP_VERBS or hedged(verb) or _chitchat_be(verb):
            continue
        if verb.dep_ == "conj" and verb.head.lemma_.lower() in SKIP_VERBS:
            continue
        if any(c.dep_ == "xcomp" and c.lemma_.lower() in _TELLING and _to_the_listener(c, other)
               for c in verb.children):
            continue  # "I've been waiting all weekend to ask", "I wanted to tell you on a proper call": talk
        tokens = _clause(verb, subj)
        if len(tokens) < 2:
            continue
        time_ids: set[int] = set()
        dated: TimeSpan | None = None
        for span in spans:
            inside = [t for t in tokens if t.idx < span.char_end and t.idx + len(t) > span.char_start]
            if inside:
                time_ids.update(t.i for t in inside)
                dated = dated or span
        score = _has_content(tokens, verb, subj, time_ids)
        if score <= 0:
            continue
        if dated is not None and dated.text.lower() in _VAGUE_TIMES:
            tokens = [t for t in tokens if t.i not in time_ids]
            dated = None
        elif dated is not None:
            tokens = _with_date(tokens, time_ids, dated)
        if getattr(tokens[0], "lower_", "") in ("why", "how") and len(tokens) > 3:
            tokens = tokens[1:]  # "That's why I love being a mom": the fact is that she does
        elif getattr(tokens[0], "tag_", "") in ("WRB", "WP", "WDT"):
            continue  # "guess what I had for dessert", "whenever I need a reset": part of a clause, not a fact
        words = sum(1 for t in tokens if not getattr(t, "is_punct", False))
        if words > MAX_FACT_WORDS + 4:
            continue
        if words > MAX_FACT_WORDS:
            tokens = _trim(tokens[:MAX_FACT_WORDS + 1])
            if not tokens:
                continue
        text = third_person(tokens, speaker, other, pronoun)
        if kind == "implicit":
            text = implicit_prefix(speaker, tokens[0]) + text[:1].lower() + text[1:]
        text = _CONTRACTION.sub(lambda m: " " + _EXPAND[m.group(1).lower()], text)
        text = text[:1].upper() + text[1:]
        key = text.lower()
        if key in seen or len(text.split()) < 3:
            continue
        seen.add(key)
        about = ""
        if kind == "name":
            about = full_name(subj)
            if about.lower() in (speaker.lower(), (other or "").lower()) or not about:
                continue  # what the listener did is asked or praised; the speaker is "I"
        found.append(Fact(text=text, source_id=source_id, speaker=speaker, score=score + (1.0 if dated else 0.0),
                          verb=lemma, subject_kind=kind, about=about))
    found.sort(key=lambda f: -f.score)
    return found[:MAX_FACTS_PER_UTTERANCE]


def _with_date(tokens: list, time_ids: set[int], span: TimeSpan) -> list:
    """The clause with its time expression replaced by the resolved date, placed at the end."""
    drop = set(time_ids)
    keep_prep = None
    first = min(time_ids)
    for t in tokens:
        # "on Saturday", "in May", "since 2021": the preposition goes with the expression
        if t.dep_ == "prep" and any(c.i in time_ids for c in t.children) and t.i < first:
            if t.lower_ in ("since", "until", "till", "before", "after", "by"):
                keep_prep = t.lower_
            drop.add(t.i)
    rest = [t for t in tokens if t.i not in drop]
    while rest and (rest[-1].pos_ in ("ADP", "CCONJ", "DET") or rest[-1].is_punct):
        rest.pop()
    spelled = spell_span(span)
    if keep_prep:
        spelled = keep_prep + " " + spelled.split(" ", 1)[1] if spelled.startswith(("on ", "in ")) else spelled
    if not rest:
        return tokens
    return [*rest, _Lit(spelled, rest[-1].i + 1000)]


def _trim(tokens: list) -> list:
    while tokens and getattr(tokens[-1], "pos_", "NOUN") not in ("NOUN", "PROPN", "NUM"):
        tokens.pop()
    return tokens
