"""What one speaker calls the other: "Hey Jo!", "Thanks, Mell!" to Joanna and Melanie are their names, not two more
people. Consolidation already merges a nickname that starts a speaker's name ("Mel"); this reads the ones it cannot
(two letters, a doubled letter, "Debs") from how they are said: only ever by the other speaker, only ever to address
them."""

from __future__ import annotations

import re

from ...anchors import AnchorSet
from ...conversation import Conversation
from ...merging import name_key, record_merge
from .lexicon import KIN
from .profiles import KIN_NAMES
from .wordlists import word_list

# Words a greeting, a thank-you or a reaction opens with before the name it is said to ("Wow Jo, ...").
VOCATIVE_LEADS = word_list("entities", "VOCATIVE_LEADS")
_LEADS = "|".join(map(re.escape, VOCATIVE_LEADS))
SHARED_START = 2  # letters a nickname shares with the start of the name it stands for ("Ev" for Evan)


def _addressed(text: str, name: str) -> bool:
    """Whether ``name`` is said to someone here: at the start, after a greeting word or a comma, and closed by
    punctuation ("Hey Jo!", "Sounds great, Jo!", "Thanks Mell, ..."); not "Jo said", "with Jo"."""
    n = re.escape(name)
    return re.search(rf"(?:^|[.!?]\s+|,\s*|\b(?:{_LEADS})\s+){n}\s*(?:[,!?.]|$)", text, re.IGNORECASE) is not None


def merge_speaker_nicknames(anchors: AnchorSet, conversation: Conversation) -> int:
    """In a two-person chat, a one-word person name that only the other speaker says, always to address someone,
    and that starts as a speaker's name starts, becomes that speaker's alias (recorded, so it can be undone).
    Returns how many were merged."""
    if len(conversation.speakers) != 2:
        return 0
    speakers = {name_key(s): s for s in conversation.speakers}
    profiles = {name_key(e.name): e for e in anchors.entities if name_key(e.name) in speakers}
    targets = {name_key(r.target) for e in anchors.entities for r in e.relations}
    utterances = list(conversation.utterances())
    merged: set[int] = set()
    for e in anchors.entities:
        key = name_key(e.name)
        if e.type != "person" or " " in key or key in speakers or key in KIN or key in KIN_NAMES or e.relations \
                or key in targets:
            continue
        said = [u for u in utterances if re.search(rf"\b{re.escape(e.name)}\b", u.text, re.IGNORECASE)]
        by = {u.speaker for u in said}
        if not said or len(by) != 1 or not all(_addressed(u.text, e.name) for u in said):
            continue
        other = next(s for s in conversation.speakers if s not in by)
        target = profiles.get(name_key(other))
        if target is None or name_key(other)[:SHARED_START] != key[:SHARED_START]:
            continue
        record_merge(target, e, f"what {next(iter(by))} calls them")
        merged.add(id(e))
    anchors.entities = [e for e in anchors.entities if id(e) not in merged]
    return len(merged)
