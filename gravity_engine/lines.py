"""Anchor lines: the unit the query path scores, packs into the prompt and turns into expansion queries.

An event is one line; an entity profile is a head ("Caroline (person)") and one line per attribute, atomic fact and
relation; a topic arc is a head ("Adoption plans, May–Aug 2023"), its summary, key facts and arc
states. Each line has the text shown in the prompt (lean: no ids, dates once
in the form people and benchmark golds write them) and the text that is embedded and searched
(self-contained: "Caroline is a counselor", "Caroline works at Acme"). The embedded texts are
encoded once at build time and stored in ``embeddings.npz`` (``lines``), so at query time a
profile's facts are ranked against the question, and the chosen ones double as expansion queries
whose vectors are already known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from .anchors import MODULES, AnchorSet, Entity, Event, Topic
from .places import regions
from .timeparse import human_date

FACT_KEY = "fact"  # an attribute whose value is a whole third-person sentence ("Caroline is a counselor")


@dataclass(frozen=True)
class AnchorLine:
    """One scorable line of an anchor; ``field`` names it inside the anchor ("attributes[3]", "what")."""

    module: str
    anchor_id: str
    field: str
    text: str  # as shown in the prompt, under the anchor's head
    search_text: str  # self-contained, for embedding and expansion
    source_ids: tuple[str, ...] = ()
    order: int = 0  # position inside the anchor (stored order), the tie-breaker and the -rrk order


def _readable(predicate: str) -> str:
    return predicate.replace("_", " ").strip()


def _strip_subject(sentence: str, name: str) -> str:
    """'Caroline is a counselor' under Caroline's head reads 'is a counselor' (saves the repeated name)."""
    s = sentence.strip()
    first = name.split()[0] if name else ""
    for prefix in (name, first):
        if prefix and s.lower().startswith(prefix.lower() + " ") and len(s) > len(prefix) + 1:
            rest = s[len(prefix) + 1:]
            if not rest.startswith(("and ", "or ", "&")):
                return rest
    return s


def entity_head(e: Entity) -> str:
    aka = f"; aka {', '.join(e.aliases[:3])}" if e.aliases else ""
    return f"{e.name} ({e.type}{aka})"


def latest_attributes(e: Entity) -> list[tuple[int, object]]:
    """Attributes with one value per key, the most recently cited one (facts are all kept): an attribute
    that changed ("lives_in: Boston" then "lives_in: Denver") shows its current value."""
    latest: dict[str, int] = {}
    for i, a in enumerate(e.attributes):
        if a.key.lower() == FACT_KEY:
            continue
        key = a.key.lower().strip()
        if key not in latest or _last_source(a.source_ids) >= _last_source(e.attributes[latest[key]].source_ids):
            latest[key] = i
    keep = set(latest.values())
    return [(i, a) for i, a in enumerate(e.attributes) if a.key.lower() == FACT_KEY or i in keep]


def _last_source(ids: list[str]) -> tuple:
    """Utterance ids sort by (session, turn) when they look like 'D3:12' or 's3-u12'; else as text."""
    if not ids:
        return (-1, -1, "")
    best = max(ids, key=_id_key)
    return _id_key(best)


def _id_key(uid: str) -> tuple:
    nums = [int(n) for n in re.findall(r"\d+", uid)]
    return (nums[0] if nums else -1, nums[-1] if len(nums) > 1 else -1, uid)


def entity_lines(e: Entity) -> list[AnchorLine]:
    out: list[AnchorLine] = []
    n = 0
    if e.description:
        out.append(AnchorLine("entities", e.id, "description", e.description, f"{e.name}: {e.description}",
                              tuple(e.source_ids[:3]), n))
        n += 1
    for i, a in latest_attributes(e):
        if a.key.lower() == FACT_KEY:
            text, search = _strip_subject(a.value, e.name), a.value
        else:
            text, search = f"{_readable(a.key)}: {a.value}", f"{e.name} {_readable(a.key)} {a.value}"
        out.append(AnchorLine("entities", e.id, f"attributes[{i}]", text, search, tuple(a.source_ids), n))
        n += 1
    for i, r in enumerate(e.relations):
        text = f"{_readable(r.predicate)} {r.target}"
        out.append(AnchorLine("entities", e.id, f"relations[{i}]", text, f"{e.name} {text}", tuple(r.source_ids), n))
        n += 1
    return out


def event_when(v: Event) -> str:
    """The event's time as people write it: '7 May 2023', 'May 2023', '2023', a range, or an honest bound."""
    if v.granularity in ("before", "after") and (v.date_end or v.date_start):
        bound = v.date_end if v.granularity == "before" else v.date_start
        return f"on or {v.granularity} {human_date(bound or v.date_start, 'day')}"
    if v.date_start:
        start = human_date(v.date_start, v.granularity)
        if v.date_end and v.date_end[:10] != v.date_start[:10] and v.granularity not in ("month", "year", "season"):
            end = human_date(v.date_end, "day")
            return f"{start} to {end}"
        return start
    if v.date_end:
        return f"on or before {human_date(v.date_end, 'day')}"
    if v.session_date:
        return f"date unknown (mentioned {human_date(v.session_date, 'day')})"
    return "date unknown"


def _join_new(*parts: str) -> str:
    """Join parts, skipping any already said by an earlier part (an event's 'what' often names its people)."""
    out: list[str] = []
    for part in parts:
        if part and part.lower() not in " ".join(out).lower():
            out.append(part)
    return " ".join(out)


def event_line(v: Event) -> AnchorLine:
    """Shown as '7 May 2023: Caroline: went to ...'; searched as the method's event query: participants,
    action and the time as said ('Caroline went to the LGBTQ support group yesterday')."""
    who = ", ".join(p for p in v.participants if p.lower() not in v.what.lower())
    what = f"{who}: {v.what}" if who else v.what
    text = f"{event_when(v)}: {what}"
    if v.where and v.where.lower() not in v.what.lower():
        text += f" (at {v.where})"
    when = v.when_text or human_date(v.date_start, v.granularity)
    return AnchorLine("events", v.id, "what", text, _join_new(who, v.what, when), tuple(v.source_ids), 0)


def topic_span(t: Topic) -> str:
    dates = sorted(s.date[:10] for s in t.sessions if s.date)
    if not dates:
        return ""
    first, last = human_date(dates[0], "month"), human_date(dates[-1], "month")
    return first if first == last else f"{first} to {last}"


def topic_head(t: Topic) -> str:
    span = topic_span(t)
    return f"{t.label}" + (f" ({span})" if span else "")


def topic_lines(t: Topic) -> list[AnchorLine]:
    out: list[AnchorLine] = []
    n = 0
    if t.summary:
        out.append(AnchorLine("topics", t.id, "summary", t.summary, f"{t.label}: {t.summary}", tuple(t.source_ids[:3]), n))
        n += 1
    for i, f in enumerate(t.key_facts):
        out.append(AnchorLine("topics", t.id, f"key_facts[{i}]", f.text, f.text, tuple(f.source_ids), n))
        n += 1
    for i, s in enumerate(t.sessions):
        if s.state:
            when = human_date(s.date, "day") if s.date else s.session_id
            out.append(AnchorLine("topics", t.id, f"sessions[{i}]", f"{when}: {s.state}", f"{t.label} {when}: {s.state}",
                                  tuple(s.source_ids[:3]), n))
            n += 1
    return out


def anchor_lines(module: str, anchor) -> list[AnchorLine]:
    if module == "entities":
        return entity_lines(anchor)
    if module == "events":
        return [event_line(anchor)]
    return topic_lines(anchor)


def anchor_head(module: str, anchor) -> str:
    if module == "entities":
        return entity_head(anchor)
    if module == "topics":
        return topic_head(anchor)
    return ""


def with_regions(lines: list[AnchorLine], anchors: AnchorSet) -> list[AnchorLine]:
    """Each line that names a located place says where it lies, once, after the name it is part of: "booked
    tickets to Toronto (Canada)", "run the Berlin Marathon (Germany)" (``places.py``; the place's own profile
    already says it, and a line that names the country or state already is left as it is)."""
    where = regions(anchors)
    if not where:
        return lines
    own = {e.id for e in anchors.entities if e.name in where}
    names = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(where, key=len, reverse=True)) + r")\b"
                       r"((?:\s+[A-Z][\w'’-]*)*)")

    def located(text: str) -> str:
        said: set[str] = set()

        def insert(m: re.Match) -> str:
            region = where[m.group(1)]
            if m.group(1) in said or region.split(",")[0].lower() in text.lower():
                return m.group(0)
            said.add(m.group(1))
            return f"{m.group(0)} ({region})"

        return names.sub(insert, text)

    return [ln if ln.anchor_id in own else replace(ln, text=located(ln.text), search_text=located(ln.search_text))
            for ln in lines]


@dataclass
class LineTable:
    """Every line of every anchor (an event is one line), in module and anchor order, with the rows of
    each anchor's lines."""

    lines: list[AnchorLine] = field(default_factory=list)
    by_anchor: dict[str, np.ndarray] = field(default_factory=dict)  # anchor id -> row indices into ``lines``

    @classmethod
    def build(cls, anchors: AnchorSet) -> LineTable:
        lines: list[AnchorLine] = []
        by_anchor: dict[str, np.ndarray] = {}
        for module in MODULES:
            for a in anchors.module(module):
                start = len(lines)
                lines += anchor_lines(module, a)
                by_anchor[a.id] = np.arange(start, len(lines), dtype=np.int64)
        return cls(lines=with_regions(lines, anchors), by_anchor=by_anchor)

    def keys(self) -> list[str]:
        """One stable key per line (anchor id + field), stored beside the matrix to check row order."""
        return [f"{ln.anchor_id}/{ln.field}" for ln in self.lines]

    def search_texts(self) -> list[str]:
        return [ln.search_text for ln in self.lines]
