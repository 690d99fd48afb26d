"""Full names for the first names a context uses: "Lena and Marco are co-authors" in a memory, while the store
knows them as Lena Ortiz and Marco Silva.

People are introduced once by their full name and called by their first name ever after, so the lines an answer
prompt holds rarely say who "Lena" is. The store does: a person's profile has the full name and the short forms
consolidation merged into it. ``FullNames`` finds the short forms a context uses whose full name it never writes
and renders them as one small block ("## Full Names"), which the answer prompt carries with the anchors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..anchors import AnchorSet

BLOCK = "names"
TITLE = "## Full Names"  # inject.BLOCK_TITLES["names"]


@dataclass(frozen=True)
class _Person:
    full: str
    short: tuple[str, ...]  # the first name, merged into the profile as an alias ("Lena" of Lena Ortiz)


class FullNames:
    """The store's people with a full name of several words and the short names they go by."""

    def __init__(self, anchors: AnchorSet, speakers: list[str] | None = None):
        speakers_low = {s.lower() for s in (speakers or [])}
        people: list[_Person] = []
        for e in anchors.entities:
            if e.type != "person" or " " not in e.name.strip() or e.name.lower() in speakers_low:
                continue
            # the first name, when the conversation used it on its own for this person (consolidation merged it)
            first = e.name.split()[0]
            short = {a for a in e.aliases if a == first}
            short = {s for s in short if len(s) >= 2 and s.lower() not in speakers_low}
            if short:
                people.append(_Person(e.name, tuple(sorted(short))))
        # a short name two people share ("Anna" of Anna Berg and Anna Kowalski) says nobody in particular
        owners: dict[str, set[str]] = {}
        for p in people:
            for s in p.short:
                owners.setdefault(s.lower(), set()).add(p.full)
        self._people = [_Person(p.full, tuple(s for s in p.short if len(owners[s.lower()]) == 1)) for p in people]
        self._people = [p for p in self._people if p.short]
        self._patterns = {p.full: re.compile(r"\b(" + "|".join(re.escape(s) for s in p.short) + r")\b")
                          for p in self._people}

    def used_in(self, text: str) -> list[tuple[str, str]]:
        """(short name as written, full name) for each person the text calls by a short name only."""
        out = []
        for p in self._people:
            if p.full in text:
                continue
            m = self._patterns[p.full].search(text)
            if m:
                out.append((m.group(1), p.full))
        return out


def render(pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    return TITLE + "\n" + "\n".join(f"- {short}: {full}" for short, full in pairs)
