"""The event timeline: a table of events and an altair chart on a real time axis.

Events without a resolved date cannot sit on a time axis; ``events_frame`` keeps them with
``resolved=False`` so the page lists them apart instead of guessing a position.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..anchors import AnchorSet

COLOR_FIELDS = {"participant": "participant", "topic": "topic", "session": "session_id"}


def events_frame(anchors: AnchorSet) -> pd.DataFrame:
    """One row per event: what, who, the raw expression, the resolved range and the date it was resolved against."""
    topics = {t.id: t.label for t in anchors.topics}
    rows = []
    for v in anchors.events:
        start = pd.to_datetime(v.date_start, errors="coerce", utc=True) if v.date_start else pd.NaT
        end = pd.to_datetime(v.date_end, errors="coerce", utc=True) if v.date_end else pd.NaT
        if pd.isna(end):
            end = start
        rows.append({
            "id": v.id, "what": v.what, "participants": ", ".join(v.participants),
            "participant": v.participants[0] if v.participants else "(nobody named)",
            "when_text": v.when_text, "date_start": start, "date_end": end, "granularity": v.granularity,
            "session_id": v.session_id, "session_date": v.session_date or "",
            "topic": topics.get(v.topic_id or "", "(no topic)"), "where": v.where,
            "causes": ", ".join(v.causes), "follows": ", ".join(v.follows),
            "sources": ", ".join(v.source_ids),
            "resolved": not pd.isna(start) and v.granularity != "unknown",
        })
    cols = ["id", "what", "participants", "participant", "when_text", "date_start", "date_end", "granularity",
            "session_id", "session_date", "topic", "where", "causes", "follows", "sources", "resolved"]
    frame = pd.DataFrame(rows, columns=cols)
    frame["resolved"] = frame["resolved"].astype(bool)
    return frame.sort_values(["date_start", "id"], na_position="last").reset_index(drop=True)


def links_frame(events: pd.DataFrame) -> pd.DataFrame:
    """Causal and 'follows' links between two dated events, as segments from one event to the other."""
    dated = events[events["resolved"]].set_index("id")
    rows = []
    for eid, row in dated.iterrows():
        for kind, col in (("causes", "causes"), ("follows", "follows")):
            for other in filter(None, (x.strip() for x in row[col].split(","))):
                if other in dated.index:
                    o = dated.loc[other]
                    rows.append({"kind": kind, "x": row["date_start"], "x2": o["date_start"],
                                 "y": row["participant"], "y2": o["participant"], "from": eid, "to": other})
    return pd.DataFrame(rows, columns=["kind", "x", "x2", "y", "y2", "from", "to"])


def conversation_span(events: pd.DataFrame, margin_days: int = 45) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The sessions' own time range plus a margin: the default view, so that one "back in 2019" event
    does not squeeze months of conversation into a few pixels."""
    times = pd.to_datetime(events["session_date"], errors="coerce").dropna()
    if times.empty:
        return None
    margin = pd.Timedelta(days=margin_days)
    return times.min().tz_localize(None).normalize() - margin, times.max().tz_localize(None).normalize() + margin


def timeline_chart(events: pd.DataFrame, color_by: str = "participant", height: int = 360,
                   domain: tuple[pd.Timestamp, pd.Timestamp] | None = None) -> alt.Chart:
    """Resolved events on a time axis: a bar for each date range, a point for single days, one lane per participant.
    ``domain`` fixes the visible range (marks outside it are clipped; the chart still pans and zooms)."""
    field = COLOR_FIELDS.get(color_by, "participant")
    data = events[events["resolved"]].copy()
    data["date_start"] = data["date_start"].dt.tz_localize(None)
    data["date_end"] = data["date_end"].dt.tz_localize(None)
    tooltip = [alt.Tooltip("what:N", title="event"), alt.Tooltip("participants:N"),
               alt.Tooltip("when_text:N", title="as said"), alt.Tooltip("date_start:T", title="from"),
               alt.Tooltip("date_end:T", title="to"), alt.Tooltip("session_date:N", title="resolved against"),
               alt.Tooltip("id:N")]
    scale = alt.Scale(domain=[domain[0].isoformat(), domain[1].isoformat()]) if domain else alt.Undefined
    base = alt.Chart(data).encode(
        x=alt.X("date_start:T", title="date", scale=scale),
        y=alt.Y("participant:N", title=None),
        color=alt.Color(f"{field}:N", title=color_by, legend=alt.Legend(orient="bottom", columns=4)),
        tooltip=tooltip,
    )
    bars = base.mark_bar(height=10, opacity=0.55, cornerRadius=3, clip=True).encode(x2="date_end:T")
    points = base.mark_circle(size=110, opacity=0.9, clip=True)
    layers = [bars, points]
    links = links_frame(events)
    if not links.empty:
        links["x"] = links["x"].dt.tz_localize(None)
        links["x2"] = links["x2"].dt.tz_localize(None)
        layers.insert(0, alt.Chart(links).mark_rule(strokeDash=[4, 3], color="#7b8794", clip=True).encode(
            x="x:T", x2="x2:T", y="y:N", y2="y2:N", tooltip=["kind:N", "from:N", "to:N"]))
    return alt.layer(*layers).properties(height=height).interactive(bind_y=False)
