"""Event timeline: events on a real time axis, unresolved dates listed apart, sources on demand."""

from __future__ import annotations

import streamlit as st

from gravity_engine import studio
from gravity_engine.viz import timeline as tviz
from pages._ui import load_store, quote_table, require_store

st.title("Event timeline")
store = require_store()


@st.cache_data(max_entries=8, show_spinner=False)
def _events(path: str, mtime: float):
    return tviz.events_frame(load_store(path, mtime).anchors)


events = _events(str(store.path), studio.store_mtime(store.path))
if events.empty:
    st.info("This store has no event records (the events module was off, or nothing was found).")
    st.stop()

resolved = events[events["resolved"]]
unresolved = events[~events["resolved"]]
c1, c2, c3, c4 = st.columns(4)
c1.metric("Events", len(events))
c2.metric("On the time axis", len(resolved))
c3.metric("Unresolved dates", len(unresolved))
c4.metric("Linked (causes/follows)", int(((events["causes"] != "") | (events["follows"] != "")).sum()))

with st.container(border=True):
    f1, f2, f3 = st.columns([2, 3, 1.4])
    color_by = f1.radio("Colour by", list(tviz.COLOR_FIELDS), horizontal=True, key="timeline_color_by")
    whole = f3.toggle("Whole range", value=False, key="timeline_whole_range",
                      help="Off: the sessions' own months. On: every resolved date, however far back.")
    people = sorted({p.strip() for ps in events["participants"] for p in ps.split(",") if p.strip()})
    chosen = f2.multiselect("Participants", people, default=[], key="timeline_participants",
                            placeholder="all participants")

shown = events
if chosen:
    shown = events[events["participants"].apply(lambda s: any(p in s.split(", ") for p in chosen))]

if shown["resolved"].any():
    span = None if whole else tviz.conversation_span(events)
    st.altair_chart(tviz.timeline_chart(shown, color_by=color_by, domain=span), width="stretch")
    st.caption("Points mark the start of each event, bars its resolved range; dashed lines link causes and "
               "follow-ups. Hover for the expression as said and the session date it was resolved against.")
else:
    st.warning("None of the selected events has a resolved date.")

table_cols = ["id", "date_start", "date_end", "granularity", "when_text", "session_date", "participants", "what",
              "topic", "causes", "follows"]
tab_all, tab_unresolved = st.tabs([f"All events ({len(shown)})", f"Unresolved or ambiguous ({len(unresolved)})"])
with tab_all:
    st.dataframe(shown[table_cols], hide_index=True, width="stretch",
                 column_config={"date_start": st.column_config.DateColumn("from"),
                                "date_end": st.column_config.DateColumn("to"),
                                "when_text": "as said", "session_date": "resolved against"})
with tab_unresolved:
    if unresolved.empty:
        st.success("Every event has a resolved date.")
    else:
        st.caption("These events carry a time expression that could not be pinned to a date; they are kept as "
                   "said, never guessed.")
        st.dataframe(unresolved[["id", "when_text", "session_id", "session_date", "participants", "what"]],
                     hide_index=True, width="stretch")

st.subheader("Sources", anchor=False)
by_id = {v.id: v for v in store.anchors.events}
labels = {r.id: f"{r.date_start.date() if r.resolved else (r.when_text or 'undated')} · {r.what[:80]}"
          for r in shown.itertuples()}
event_id = st.selectbox("Event", list(labels), format_func=labels.get, key="timeline_selected_event")
if event_id:
    ev = by_id[event_id]
    st.text(ev.compact_text())
    quote_table(store, ev.source_ids, key="timeline_quotes")
    flagged = [c for c in ev.checks if not c.supported]
    if flagged:
        st.warning("Unsupported fields: " + ", ".join(c.field for c in flagged))
