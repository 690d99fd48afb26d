"""Who is mentioned with whom: entity pairs cited by the same utterances, weighted by how often, with the
utterances. Computed from what a store holds (entities' source ids, the utterances' speakers), no model.

Extracted relations are few on a long conversation; co-mentions show who appears with whom, so the entity
graph stays informative with whatever relations there are. A speaker counts as mentioned by every
utterance they say: "Caroline: my cat Oliver ..." puts Caroline with Oliver.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .anchors import AnchorSet
from .conversation import Conversation
from .store import ANCHORS_FILE, AnchorStore

SPEAKER_PREFIX = "speaker:"


@dataclass(frozen=True)
class CoMention:
    a: str  # entity id (or ``speaker:<name>`` for a speaker with no entity), a < b
    b: str
    weight: int  # utterances citing both
    utterance_ids: tuple[str, ...]


def speaker_ids(anchors: AnchorSet, speakers: list[str]) -> dict[str, str]:
    """Each speaker's entity id (by name or alias, case-insensitive), else ``speaker:<name>``."""
    by_name: dict[str, str] = {}
    for e in anchors.entities:
        for n in [e.name, *e.aliases]:
            by_name.setdefault(n.lower(), e.id)
    return {s: by_name.get(s.lower(), SPEAKER_PREFIX + s) for s in speakers}


def speakers_of(conversation: Conversation) -> list[str]:
    """The conversation's speakers: as it names them, else in the order they first speak."""
    return list(conversation.speakers) or list(dict.fromkeys(u.speaker for u in conversation.utterances()))


def co_mentions(anchors: AnchorSet, conversation: Conversation | None = None, *, min_weight: int = 2,
                with_speakers: bool = True) -> list[CoMention]:
    """Every pair of entities cited together by at least ``min_weight`` utterances, heaviest first.
    ``with_speakers``: an utterance also mentions its speaker (needs ``conversation``)."""
    cited: dict[str, set[str]] = defaultdict(set)
    for e in anchors.entities:
        for sid in e.source_ids:
            cited[sid].add(e.id)
    if with_speakers and conversation is not None:
        who = speaker_ids(anchors, speakers_of(conversation))
        for u in conversation.utterances():
            if u.id in cited and u.speaker in who:
                cited[u.id].add(who[u.speaker])
    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for sid, ids in cited.items():
        ordered = sorted(ids)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                pairs[(a, b)].append(sid)
    out = [CoMention(a, b, len(sids), tuple(sorted(sids))) for (a, b), sids in pairs.items() if len(sids) >= min_weight]
    return sorted(out, key=lambda c: (-c.weight, c.a, c.b))


@lru_cache(maxsize=8)
def _cached(path: str, mtime: float, min_weight: int, with_speakers: bool) -> tuple[CoMention, ...]:
    store = AnchorStore.load(path)
    return tuple(co_mentions(store.anchors, store.conversation, min_weight=min_weight, with_speakers=with_speakers))


def store_co_mentions(path: str | Path, *, min_weight: int = 2, with_speakers: bool = True) -> list[CoMention]:
    """:func:`co_mentions` of the store at ``path``, computed once per store version (its anchors.json mtime)."""
    anchors_file = Path(path) / ANCHORS_FILE
    mtime = anchors_file.stat().st_mtime if anchors_file.is_file() else 0.0
    return list(_cached(str(path), mtime, min_weight, with_speakers))
