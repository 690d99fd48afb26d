"""Temporal grounding (LoCoMo category 2): does an injected event carry the gold's date, and if not, where was
the question lost?

A question is grounded when its gold date lies in the resolved date range of an injected event, counting only events
whose range is at most 6 days wider than the gold period (a "2023" event does not ground "7 May 2023"); gold answers
with no parseable date are left out. The gold period is read as the coverage rule reads it (``coverage``: "the week
before 9 June 2023" is 2..8 June, not 9 June), else by the time grammar against the question's reference time. Each
such question also gets the **stage** that lost it (``TEMPORAL_STAGES``, the first that fails): "no event" (no event
of the store grounds it or cites its evidence), "wrong date" (an event cites the evidence, none grounds the gold),
"not selected" (a grounding event is in the store, not among the selected events), "not packed" (selected, its line
left out under the budget), or "grounded".
"""

from __future__ import annotations

from datetime import date

from ..query.inject import InjectedContext
from ..query.pipeline import GravityResult
from ..timeparse import find_time_expressions
from .coverage import DateSpan, gold_date, gold_parts

def gold_spans(gold: str, reference: date | None) -> list[DateSpan]:
    """The periods a temporal gold names: read as the coverage rule reads a date ("the week before 9 June
    2023" is 2..8 June), else by the time grammar against ``reference`` ("last May", "2022")."""
    periods = [p for p in (gold_date(part) for part in gold_parts(gold)) if p is not None and p.has_year]
    if periods:
        return periods

    return [DateSpan(s.start, s.end, True) for s in find_time_expressions(gold, reference)]

def _grounds(ev, spans: list[DateSpan]) -> bool:
    """An event's resolved range overlaps a gold period and is at most 6 days wider than it (bounds never count)."""
    if not ev.date_start or ev.granularity in ("before", "after"):
        return False
    try:
        s = date.fromisoformat(ev.date_start[:10])
        e = date.fromisoformat((ev.date_end or ev.date_start)[:10])
    except ValueError:
        return False
    return any((e - s).days <= (g.end - g.start).days + 6 and s <= g.end and e >= g.start for g in spans)

def grounded(gold: str, reference: date | None, events) -> bool | None:
    spans = gold_spans(gold, reference)
    if not spans:
        return None
    return any(_grounds(ev, spans) for ev in events)

# Where a temporal question was lost, from the extractor to the prompt (the first stage that fails).
GROUNDED, NOT_PACKED, NOT_SELECTED, WRONG_DATE, NO_EVENT = (
    "grounded", "not packed", "not selected", "wrong date", "no event")

TEMPORAL_STAGES = (GROUNDED, NOT_PACKED, NOT_SELECTED, WRONG_DATE, NO_EVENT)

def temporal_stage(gold: str, reference: date | None, evidence: list[str], store_events, selected, injected) -> str | None:
    """The stage that lost a temporal question (``TEMPORAL_STAGES``), None when the gold names no date."""
    spans = gold_spans(gold, reference)
    if not spans:
        return None
    for stage, events in ((GROUNDED, injected), (NOT_PACKED, selected), (NOT_SELECTED, store_events)):
        if any(_grounds(ev, spans) for ev in events):
            return stage
    cited = set(evidence)
    return WRONG_DATE if any(cited & set(ev.source_ids) for ev in store_events) else NO_EVENT

def injected_events(g: GravityResult, context: InjectedContext | None = None) -> list:
    """The event anchors whose lines are in the injected context (``context``: what the prompt holds, when the
    budget packed it again after the memories were known; otherwise Gravity's own packing)."""
    shown = set((context or g.context).anchor_ids.get("events", []))
    return [a for a in g.selected.get("events", []) if a.id in shown]
