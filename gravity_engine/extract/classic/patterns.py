"""Relation patterns over the dependency parse, written for spaCy's ``DependencyMatcher``.

Each pattern names the tokens a relation needs (who, the target, the words that make it one) and
``relation_matches`` yields them per sentence; ``verb_patterns.py`` turns a match into a relation with its
evidence, resolving "I", "you", "he"/"she" and names as it does for every other pattern:

* ``employed_at``: "I've been at Marchetti Architects for two years", "I was at Copperleaf for five years",
  "He's been at Loxley Brewery nearly two years" (being at an organisation for a stretch of time is working
  there; a visit has no duration);
* ``tenure``: "Eleven years at Pellow & Garth this spring" (a stretch at an organisation, said without a verb:
  the speaker's own, or that of the person the other speaker just asked about: "Where was Jordan before?");
* ``member_at``: "my membership at Northern Edge", "our membership of the Harbor Striders";
* ``colleague``: "I'm pairing with a designer called Wojtek", "I work with Dana on the audit";
* ``friend_made``: "She's made a friend, Isla", "I met a friend called Jo at the gym";
* ``job_taken``: "He got a job at Lir Robotics", "Ana landed a role with Acme" (the possessive "my job at"
  is ``noun_patterns.job_patterns``);
* ``job_in``: "I've accepted a job in Edinburgh" (where one works is where one lives, as for "a barista in
  Hamburg").

The matcher is built once per spaCy vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from .wordlists import word_list

DURATION_PREPS = word_list("patterns", "DURATION_PREPS")
TENURE_NOUNS = word_list("patterns", "TENURE_NOUNS")  # not weeks or days: "two weeks at Mum's" is a stay
COLLEAGUE_VERBS = word_list("patterns", "COLLEAGUE_VERBS")
FRIEND_VERBS = word_list("patterns", "FRIEND_VERBS")
JOB_VERBS = word_list("patterns", "JOB_VERBS")
JOB_NOUNS = word_list("patterns", "JOB_NOUNS")

_PROPN = {"POS": "PROPN"}
PATTERNS: dict[str, list[list[dict]]] = {
    "employed_at": [[
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": "be"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": "nsubj"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "prep", "RIGHT_ATTRS": {"DEP": "prep", "LOWER": "at"}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj", **_PROPN}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "since",
         "RIGHT_ATTRS": {"DEP": "prep", "LOWER": {"IN": DURATION_PREPS}}},
    ], [
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": "be"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject",
         "RIGHT_ATTRS": {"DEP": {"IN": ["nsubj", "nsubjpass"]}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "prep", "RIGHT_ATTRS": {"DEP": "prep", "LOWER": "at"}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj", **_PROPN}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "since",
         "RIGHT_ATTRS": {"DEP": "npadvmod", "LEMMA": {"IN": TENURE_NOUNS}}},
    ]],
    "tenure": [[
        {"RIGHT_ID": "noun", "RIGHT_ATTRS": {"LEMMA": {"IN": TENURE_NOUNS}, "TAG": "NNS"}},
        {"LEFT_ID": "noun", "REL_OP": ">", "RIGHT_ID": "count", "RIGHT_ATTRS": {"DEP": "nummod"}},
        {"LEFT_ID": "noun", "REL_OP": ">", "RIGHT_ID": "prep", "RIGHT_ATTRS": {"DEP": "prep", "LOWER": "at"}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj", **_PROPN}},
    ]],
    "member_at": [[
        {"RIGHT_ID": "noun", "RIGHT_ATTRS": {"LEMMA": "membership"}},
        {"LEFT_ID": "noun", "REL_OP": ">", "RIGHT_ID": "prep",
         "RIGHT_ATTRS": {"DEP": "prep", "LOWER": {"IN": ["at", "of", "with", "in"]}}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj"}},
    ]],
    # "I need to cancel my membership at Northern Edge": "at" hangs on the verb
    "member_at_verb": [[
        {"RIGHT_ID": "noun", "RIGHT_ATTRS": {"LEMMA": "membership", "DEP": "dobj"}},
        {"LEFT_ID": "noun", "REL_OP": "<", "RIGHT_ID": "verb", "RIGHT_ATTRS": {"POS": "VERB"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "prep",
         "RIGHT_ATTRS": {"DEP": "prep", "LOWER": {"IN": ["at", "of", "with", "in"]}}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj"}},
    ]],
    "colleague": [[
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": {"IN": COLLEAGUE_VERBS}, "POS": "VERB"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": {"IN": ["nsubj", "nsubjpass"]}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "prep", "RIGHT_ATTRS": {"DEP": "prep", "LOWER": "with"}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj"}},
    ]],
    "friend_made": [[
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": {"IN": FRIEND_VERBS}}},
        # "She's made a friend": the small parser reads it as a passive
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": {"IN": ["nsubj", "nsubjpass"]}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "target",
         "RIGHT_ATTRS": {"DEP": "dobj", "LEMMA": {"IN": ["friend", "pal", "buddy", "mate"]}}},
    ]],
    # "at Lir Robotics" hangs on "job" or, as often, on "got": the same nodes, two attachments
    "job_taken": [[
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": {"IN": JOB_VERBS}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": {"IN": ["nsubj", "nsubjpass"]}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "noun", "RIGHT_ATTRS": {"DEP": "dobj", "LEMMA": {"IN": JOB_NOUNS}}},
        {"LEFT_ID": attached_to, "REL_OP": ">", "RIGHT_ID": "prep",
         "RIGHT_ATTRS": {"DEP": "prep", "LOWER": {"IN": ["at", "with", "for"]}}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj", **_PROPN}},
    ] for attached_to in ("noun", "verb")],
    "job_in": [[
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"LEMMA": {"IN": JOB_VERBS}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": {"IN": ["nsubj", "nsubjpass"]}}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "noun", "RIGHT_ATTRS": {"DEP": "dobj", "LEMMA": {"IN": JOB_NOUNS}}},
        {"LEFT_ID": attached_to, "REL_OP": ">", "RIGHT_ID": "prep", "RIGHT_ATTRS": {"DEP": "prep", "LOWER": "in"}},
        {"LEFT_ID": "prep", "REL_OP": ">", "RIGHT_ID": "target", "RIGHT_ATTRS": {"DEP": "pobj", **_PROPN}},
    ] for attached_to in ("noun", "verb")],
}


@lru_cache(maxsize=4)
def _matcher(vocab):
    from spacy.matcher import DependencyMatcher

    matcher = DependencyMatcher(vocab)
    for label, patterns in PATTERNS.items():
        matcher.add(label, patterns)
    return matcher


# Words without which no pattern can match: most utterances have none, and skipping the matcher there keeps
# the classic build as fast as it was.
_TRIGGERS = frozenset({"membership", "friend", "pal", "buddy", "mate", *JOB_NOUNS, *(n + "s" for n in JOB_NOUNS)})


_STRETCH_WORDS = frozenset({*DURATION_PREPS, *TENURE_NOUNS, *(n + "s" for n in TENURE_NOUNS)})


def _may_match(doc) -> bool:
    words = {t.lower_ for t in doc}
    return bool(words & _TRIGGERS) or ("at" in words and bool(words & _STRETCH_WORDS)) or "with" in words


def relation_matches(doc) -> Iterator[tuple[str, dict[str, object]]]:
    """(pattern label, {role: token}) for every match in a parsed utterance, in text order; questions
    ("Are you still at Acme?") state nothing and are skipped."""
    if not _may_match(doc):
        return
    matcher = _matcher(doc.vocab)
    seen: set[tuple[str, int]] = set()
    for match_id, token_ids in sorted(matcher(doc), key=lambda m: m[1]):
        label = doc.vocab.strings[match_id]
        names = [p["RIGHT_ID"] for p in PATTERNS[label][0]]
        tokens = {name: doc[i] for name, i in zip(names, token_ids)}
        if tokens[names[0]].sent.text.rstrip().endswith("?") or (label, token_ids[-1]) in seen:
            continue
        seen.add((label, token_ids[-1]))
        yield label, tokens
