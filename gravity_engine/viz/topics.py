"""Topic arcs: readable topic titles, a clickable topic × session heat map, and one topic's arc."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import pandas as pd

from ..anchors import AnchorSet, Topic
from ..conversation import Conversation
from . import MODULE_COLORS, inline, unvalidated

TOPIC_COLOR = MODULE_COLORS["topics"]


def session_order(anchors: AnchorSet, conversation: Conversation | None) -> list[str]:
    """Session ids in conversation order (from the conversation when known, else as the arcs list them)."""
    if conversation is not None and conversation.sessions:
        return [s.id for s in conversation.sessions]
    seen: list[str] = []
    for t in anchors.topics:
        for s in t.sessions:
            if s.session_id not in seen:
                seen.append(s.session_id)
    return seen


def topic_titles(anchors: AnchorSet) -> dict[str, str]:
    """A short readable title per topic id: the topic's stored label (the classic extractor writes its own noun
    phrases ranked against the topic's centroid, ``extract/classic/topics.py``), first letter capitalised.

    Titles used to be re-derived here from the noun phrases of the key facts and arc states; a third of them
    misled on LoCoMo ("Council meeting" for flowers, a necklace, a wedding and stained glass) and the parse
    cost a second per page. ``benchmarks/topic_titles.py`` compares the two."""
    return {t.id: _capitalised(t.label) for t in anchors.topics}


def _capitalised(text: str) -> str:
    text = " ".join(str(text).split())
    return text[:1].upper() + text[1:]


def topic_subtitles(anchors: AnchorSet, n: int = 5) -> dict[str, str]:
    """The secondary line under a title: the topic's distinctive keywords, those already in the title left out."""
    out = {}
    for t in anchors.topics:
        said = {w.lower() for w in t.label.split()}
        out[t.id] = ", ".join([k for k in t.keywords if not set(k.lower().split()) <= said][:n])
    return out


def arcs_frame(anchors: AnchorSet, conversation: Conversation | None = None,
               titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per (topic, session) step of an arc: mentions, date and the state summary."""
    order = {s: i for i, s in enumerate(session_order(anchors, conversation))}
    titles = titles or {}
    rows = []
    for t in anchors.topics:
        for step in t.sessions:
            rows.append({"topic_id": t.id, "topic": titles.get(t.id, t.label), "session_id": step.session_id,
                         "session_index": order.get(step.session_id, len(order)), "date": (step.date or "")[:10],
                         "mentions": max(step.mentions, len(step.source_ids)), "state": step.state,
                         "status": t.status})
    frame = pd.DataFrame(rows, columns=["topic_id", "topic", "session_id", "session_index", "date", "mentions",
                                        "state", "status"])
    return frame.sort_values(["topic", "session_index"]).reset_index(drop=True)


@unvalidated
def heatmap_chart(arcs: pd.DataFrame, sessions: list[str], height_per_topic: int = 28,
                  selected: str | None = None) -> alt.Chart:
    """Topic × session heat map; colour is the number of mentions in that session. Clicking a cell selects
    it (selection ``cell``, fields ``topic_id`` and ``session_id``); the selected topic's row is outlined."""
    topics = list(dict.fromkeys(arcs.sort_values("session_index")["topic"]))
    data = arcs.assign(focus=arcs["topic_id"] == selected, state=arcs["state"].str.slice(0, 200))
    cell = alt.selection_point(name="cell", fields=["topic_id", "session_id"], on="click", toggle=False)
    # A fixed step per row: a plain pixel height let Streamlit squeeze the rows and drop labels.
    return alt.Chart(inline(data)).mark_rect(cornerRadius=2, cursor="pointer").encode(
        x=alt.X("session_id:N", sort=sessions, title="session", axis=alt.Axis(labelAngle=-40, labelFontSize=12)),
        y=alt.Y("topic:N", sort=topics, title=None, axis=alt.Axis(labelLimit=300, labelFontSize=13)),
        color=alt.Color("mentions:Q", scale=alt.Scale(scheme="greens"), title="mentions"),
        stroke=alt.condition("datum.focus", alt.value("#1f2933"), alt.value("white")),
        strokeWidth=alt.condition("datum.focus", alt.value(2), alt.value(1)),
        tooltip=[alt.Tooltip("topic:N"), alt.Tooltip("session_id:N", title="session"), alt.Tooltip("date:N"),
                 alt.Tooltip("mentions:Q"), alt.Tooltip("state:N", title="in this session")],
    ).add_params(cell).properties(height=alt.Step(height_per_topic))


def clicked_cell(selection: Mapping | None) -> tuple[str, str] | None:
    """The (topic_id, session_id) of a clicked heat-map cell, or None."""
    picked = (selection or {}).get("cell") or []
    if isinstance(picked, list) and picked and isinstance(picked[0], Mapping) and picked[0].get("topic_id"):
        return str(picked[0]["topic_id"]), str(picked[0].get("session_id", ""))
    return None


@unvalidated
def arc_chart(topic: Topic, sessions: list[str], focus_session: str | None = None) -> alt.LayerChart:
    """One topic across the whole conversation: mentions per session (zero where it was not discussed),
    each discussed session a point whose hover shows what the topic looked like then."""
    steps = {s.session_id: s for s in topic.sessions}
    rows = [{"session_id": sid, "order": i, "mentions": max(steps[sid].mentions, len(steps[sid].source_ids))
             if sid in steps else 0, "date": (steps[sid].date or "")[:10] if sid in steps else "",
             "state": steps[sid].state[:200] if sid in steps else "", "discussed": sid in steps,
             "focus": sid == focus_session} for i, sid in enumerate(sessions)]
    data = pd.DataFrame(rows, columns=["session_id", "order", "mentions", "date", "state", "discussed", "focus"])
    x = alt.X("session_id:N", sort=sessions, title="session", axis=alt.Axis(labelAngle=-40, labelFontSize=12))
    y = alt.Y("mentions:Q", title="mentions", axis=alt.Axis(tickMinStep=1))
    line = alt.Chart(inline(data)).mark_area(line={"color": TOPIC_COLOR}, color=TOPIC_COLOR, opacity=0.18,
                                     interpolate="monotone").encode(x=x, y=y)
    points = alt.Chart(inline(data[data["discussed"]])).mark_circle(color=TOPIC_COLOR, opacity=1).encode(
        x=x, y=y, size=alt.condition("datum.focus", alt.value(320), alt.value(110)),
        stroke=alt.condition("datum.focus", alt.value("#1f2933"), alt.value(TOPIC_COLOR)),
        tooltip=[alt.Tooltip("session_id:N", title="session"), alt.Tooltip("date:N"), alt.Tooltip("mentions:Q"),
                 alt.Tooltip("state:N", title="in this session")])
    return alt.layer(line, points).properties(height=220)


def topic_totals(anchors: AnchorSet, titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    titles = titles or {}
    rows = [{"topic": titles.get(t.id, t.label), "sessions": len(t.sessions),
             "mentions": sum(s.mentions for s in t.sessions), "status": t.status,
             "keywords": ", ".join(t.keywords[:8]), "participants": ", ".join(t.participants)}
            for t in anchors.topics]
    return pd.DataFrame(rows, columns=["topic", "sessions", "mentions", "status", "keywords", "participants"])
