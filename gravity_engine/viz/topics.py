"""Topic arcs: a topic × session table of mentions and its heat map."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..anchors import AnchorSet
from ..conversation import Conversation
from . import MODULE_COLORS


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


def arcs_frame(anchors: AnchorSet, conversation: Conversation | None = None) -> pd.DataFrame:
    """One row per (topic, session) step of an arc: mentions, date and the state summary."""
    order = {s: i for i, s in enumerate(session_order(anchors, conversation))}
    rows = []
    for t in anchors.topics:
        for step in t.sessions:
            rows.append({"topic_id": t.id, "topic": t.label, "session_id": step.session_id,
                         "session_index": order.get(step.session_id, len(order)), "date": step.date or "",
                         "mentions": max(step.mentions, len(step.source_ids)), "state": step.state,
                         "status": t.status})
    frame = pd.DataFrame(rows, columns=["topic_id", "topic", "session_id", "session_index", "date", "mentions",
                                        "state", "status"])
    return frame.sort_values(["topic", "session_index"]).reset_index(drop=True)


def heatmap_chart(arcs: pd.DataFrame, sessions: list[str], height_per_topic: int = 26) -> alt.Chart:
    """Topic × session heat map; colour intensity is the number of mentions in that session."""
    topics = list(dict.fromkeys(arcs.sort_values("session_index")["topic"]))
    # A fixed step per row: a plain pixel height let Streamlit squeeze the rows and drop labels.
    return alt.Chart(arcs).mark_rect(cornerRadius=2, stroke="white", strokeWidth=1).encode(
        x=alt.X("session_id:N", sort=sessions, title="session", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("topic:N", sort=topics, title=None, axis=alt.Axis(labelLimit=260)),
        color=alt.Color("mentions:Q", scale=alt.Scale(scheme="greens"), title="mentions"),
        tooltip=["topic:N", "session_id:N", "date:N", "mentions:Q", "state:N"],
    ).properties(height=alt.Step(height_per_topic))


def topic_totals(anchors: AnchorSet) -> pd.DataFrame:
    rows = [{"topic": t.label, "sessions": len(t.sessions), "mentions": sum(s.mentions for s in t.sessions),
             "status": t.status, "keywords": ", ".join(t.keywords[:8]), "participants": ", ".join(t.participants)}
            for t in anchors.topics]
    return pd.DataFrame(rows, columns=["topic", "sessions", "mentions", "status", "keywords", "participants"])


TOPIC_COLOR = MODULE_COLORS["topics"]
