"""Full names for the first names a context uses: "Lena and Marco are co-authors" in a memory, while the store
knows them as Lena Ortiz and Marco Silva.

People are introduced once by their full name and called by their first name ever after, so the lines an answer
prompt holds rarely say who "Lena" is. The store does: a person's profile has the full name and the short forms
consolidation merged into it. ``FullNames`` finds the short forms a context uses whose full name it never writes
and renders them as one small block ("## Full Names"), which the answer prompt carries with the anchors.
"""

from __future__ import annotations

import re

from ..anchors import AnchorSet
from .inject import BLOCK_TITLES

BLOCK = "names"
TITLE = f"## {BLOCK_TITLES[BLOCK]}"


class FullNames:
    """The store's people with a full name of several words whose first name the conversation also used alone
    (consolidation merged it into the profile as an alias: "Lena" of Lena Ortiz)."""

    def __init__(self, anchors: AnchorSet, speakers: list[str] | None = None):
        speakers_low = {s.lower() for s in (speakers or [])}
        by_first: dict[str, list[str]] = {}
        for e in anchors.entities:
            first = e.name.split()[0] if e.name.strip() else ""
            if e.type == "person" and " " in e.name.strip() and e.name.lower() not in speakers_low and \
                    first in e.aliases and len(first) >= 2 and first.lower() not in speakers_low:
                by_first.setdefault(first, []).append(e.name)
        # a first name two people share ("Anna" of Anna Berg and Anna Kowalski) says nobody in particular
        self._people = [(first, fulls[0]) for first, fulls in by_first.items() if len(fulls) == 1]
        self._patterns = {first: re.compile(rf"\b{re.escape(first)}\b") for first, _ in self._people}

    def used_in(self, text: str) -> list[tuple[str, str]]:
        """(first name, full name) for each person the text calls by the first name only."""
        return [(first, full) for first, full in self._people
                if full not in text and self._patterns[first].search(text)]


def render(pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    return TITLE + "\n" + "\n".join(f"- {short}: {full}" for short, full in pairs)
