"""Event timeline: a lane per person on a real time axis, topic lanes, search, suspicious dates flagged."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_services import studio
from gravity_engine.viz import timeline as tviz
from gravity_engine.viz import vega_spec
from gravity_engine.viz import topics as topviz
from app_pages._ui import load_store, md_escape, quote_table, require_store

st.title("Event timeline")
store = require_store()


@st.cache_data(max_entries=8, show_spinner=False)
def _timeline(path: str, mtime: float):
    s = load_store(path, mtime)
    speakers = s.conversation.speakers if s.conversation else []
    return (tviz.events_frame(s.anchors, speakers), tviz.supported_links(s.anchors, s.conversation),
            topviz.topic_titles(s.anchors))


@st.cache_data(max_entries=16, show_spinner=False)
def _chart_spec(path: str, mtime: float, marks: pd.DataFrame, span, topic_mode: str, show_links: bool, labels: bool,
                searching: bool, density: bool) -> dict:
    # the chart of the same view is the same in every session: a new tab on a store draws without building it
    # again (0.2-0.45 s of altair on a 268-event timeline)
    s = load_store(path, mtime)
    _, links, titles = _timeline(path, mtime)
    topic_marks = (tviz.topic_lanes_frame(s.anchors, titles, span, collapsed=topic_mode == "one")
                   if topic_mode != "off" else None)
    return vega_spec(tviz.timeline_chart(marks, topic_marks, links=links if show_links else None, domain=span,
                                         labels=labels, searching=searching, density=density))


events, links, titles = _timeline(str(store.path), studio.store_mtime(store.path))
if events.empty:
    st.info("This store has no event records (the events module was off, or nothing was found).")
    st.stop()

resolved = events[events["resolved"]]
unresolved = events[~events["resolved"]]
suspicious = events[events["suspicious"] != ""]
n_linked = int(((events["causes"] != "") | (events["follows"] != "")).sum())
c1, c2, c3, c4, c5 = st.columns(5)
c1.metric("Events", len(events))
c2.metric("On the time axis", len(resolved))
c3.metric("Unresolved dates", len(unresolved))
c4.metric("Suspicious dates", len(suspicious), help="Far from the session they were said in, or in another year "
                                                   "when nobody said a year. Flagged in red, never hidden.")
c5.metric("Links with evidence", len(links), help=f"{n_linked} events carry cause/follow links; only the links "
                                                   "whose cited utterances show them are drawn.")

person_names = sorted({p for ps in events["people"] for p in ps.split(", ") if p})
person_ids = {e.id for e in store.anchors.entities if (e.type or "").lower() == "person"}
others = sorted((e for e in store.anchors.entities if e.id not in person_ids), key=lambda e: e.name.lower())
with st.container(border=True):
    f1, f2, f3 = st.columns([3, 3, 3])
    search = f1.text_input("Search events", key="timeline_search", placeholder="e.g. marathon, yesterday, Berlin")
    chosen = f2.multiselect("People", person_names, default=[], key="timeline_participants",
                            placeholder="every person")
    entity_names = {e.id: e.name for e in others}
    chosen_entities = f3.multiselect("Mentioning", list(entity_names), format_func=entity_names.get,
                                     key="timeline_entities", placeholder="any place, organisation, thing…")
    t1, t2, t3, t4, t5 = st.columns([2, 4, 2, 1.5, 1.5])
    whole = t1.toggle("Whole range", value=False, key="timeline_whole_range",
                      help="Off: the sessions' own months, with earlier or later events on the edges. "
                           "On: every resolved date at its place, however far back.")
    n_topics = len(store.anchors.topics)
    topic_modes = {"each": "one per topic", "one": "all in one", "off": "none"}
    topic_mode = t2.segmented_control(
        "Topic lanes", list(topic_modes), format_func=topic_modes.get, key="timeline_topic_mode",
        default="one" if n_topics > tviz.COLLAPSE_TOPICS_ABOVE else "each",
        help="The sessions in which each topic was discussed; many topics start folded into one lane "
             "(hover a square for the topics of that session).") or "off"
    show_links = t3.toggle("Links with evidence", value=True, key="timeline_links")

shown = events
if chosen:
    shown = shown[shown["people"].apply(lambda s: any(p in s.split(", ") for p in chosen))]
if chosen_entities:
    by_id = {e.id: e for e in others}
    names = [n for eid in chosen_entities for n in [by_id[eid].name, *by_id[eid].aliases]]
    shown = shown[tviz.mentions_mask(shown, names)]
match = tviz.search_mask(shown, search)
searching = bool(search.strip())

span = None if whole else tviz.conversation_span(events)
marks = tviz.lanes_frame(shown, span, match)
labels = t4.toggle("Labels", value=len(marks) <= 60, key="timeline_labels",
                   help="Short labels beside the points where they fit, the most-cited events first (hover a point "
                        "for its whole list; zoom in for room).")
density = t5.toggle("Density", value=len(shown) > tviz.DENSITY_ABOVE, key="timeline_density",
                    help="A strip per person and week, darker with more events, instead of a point per day.")
if searching:
    st.caption(f"{int(match.sum())} of {len(shown)} events match “{md_escape(search.strip())}”; the others are faded.")
if not marks.empty:
    spec = _chart_spec(str(store.path), studio.store_mtime(store.path), marks, span, topic_mode, show_links, labels,
                       searching, density)
    event = st.vega_lite_chart(spec, width="stretch", on_select="rerun", selection_mode="event",
                               key="timeline_chart")
    clicked = tviz.clicked_events(event.selection)
    if clicked and clicked != st.session_state.get("timeline_last_click"):
        st.session_state["timeline_last_click"] = clicked
        st.session_state["timeline_selected_event"] = clicked[0]
        st.rerun()  # open the clicked day's first event in Sources
    outside = int((marks["outside"] != "").sum())
    st.caption("A lane per person (the speakers, and people typed person with at least "
               f"{tviz.MIN_LANE_EVENTS} events; the rest share '{tviz.OTHER_PEOPLE}'); a point per day, bigger when "
               "several events share it (hover for the list), bars for resolved ranges, triangles for 'on or before' "
               "and 'on or after'; close days share a lane in sub-rows. Click a point to read its sources below. Red "
               "rings: dates to check. Dashed lines: cause/follow links whose utterances show them. Drag to pan, "
               "scroll to zoom."
               + (f" {outside} points lie outside the range shown and sit on its edge; turn on 'Whole range' to "
                  "place them." if outside else ""))
else:
    st.warning("None of the selected events has a resolved date.")

table_cols = ["id", "date_start", "date_end", "granularity", "when_text", "session_date", "participants", "what",
              "topic", "suspicious"]
config = {"date_start": st.column_config.DateColumn("from"), "date_end": st.column_config.DateColumn("to"),
          "when_text": "as said", "session_date": "resolved against", "suspicious": "check the date"}
listed = shown[match] if searching else shown
tab_all, tab_flag, tab_unresolved, tab_links = st.tabs([
    f"{'Matching' if searching else 'All'} events ({len(listed)})", f"Suspicious dates ({len(suspicious)})",
    f"Unresolved or ambiguous ({len(unresolved)})", f"Links with evidence ({len(links)})"])
with tab_all:
    st.dataframe(listed[table_cols], hide_index=True, width="stretch", column_config=config)


def checked_list(frame, columns: list[str], none_left: str, caption: str) -> None:
    """A tab of events a person should check: a success line when there are none."""
    if frame.empty:
        st.success(none_left)
        return
    st.caption(caption)
    st.dataframe(frame[columns], hide_index=True, width="stretch", column_config=config)


with tab_flag:
    checked_list(suspicious, ["id", "date_start", "when_text", "session_date", "suspicious", "what"],
                 "No resolved date is far from its session or in an unexpected year.",
                 "Dates far from the session they were said in, or in another year when nobody said a year: "
                 "often a misread expression. They stay on the timeline with a red ring.")
with tab_unresolved:
    checked_list(unresolved, ["id", "when_text", "session_id", "session_date", "participants", "what"],
                 "Every event has a resolved date.",
                 "These events carry a time expression that could not be pinned to a date; they are kept as "
                 "said, never guessed.")
with tab_links:
    if links.empty:
        st.caption(f"No cause/follow link has evidence in its utterances ({n_linked} events carry links).")
    else:
        st.dataframe(links, hide_index=True, width="stretch",
                     column_config={"evidence": st.column_config.TextColumn("evidence", width="large")})

st.subheader("Sources", anchor=False)
by_id = {v.id: v for v in store.anchors.events}
pool = listed if not listed.empty else shown
clicked_ids = [i for i in st.session_state.get("timeline_last_click", []) if i not in set(pool["id"])]
if clicked_ids:  # a faded point (outside the search) was clicked: it can still be opened
    pool = pd.concat([pool, events[events["id"].isin(clicked_ids)]])
labels_by_id = {r.id: f"{r.date_start.date() if r.resolved else (r.when_text or 'undated')} · {r.what[:80]}"
                for r in pool.itertuples()}
if searching and st.session_state.get("timeline_last_search") != search and labels_by_id:
    # A new search opens its first match, one that says the words itself before one only in a topic of that name.
    st.session_state["timeline_selected_event"] = tviz.best_match(pool, search) or next(iter(labels_by_id))
st.session_state["timeline_last_search"] = search
if st.session_state.get("timeline_selected_event") not in labels_by_id:
    st.session_state.pop("timeline_selected_event", None)
event_id = st.selectbox("Event", list(labels_by_id), format_func=labels_by_id.get, key="timeline_selected_event")
if event_id:
    ev = by_id[event_id]
    st.text(ev.compact_text())
    row = events[events["id"] == event_id]
    if not row.empty and row["suspicious"].iloc[0]:
        st.warning("Check this date: " + md_escape(row["suspicious"].iloc[0]))
    quote_table(store, ev.source_ids, key="timeline_quotes")
    flagged = [c for c in ev.checks if not c.supported]
    if flagged:
        st.warning("Unsupported fields: " + ", ".join(c.field for c in flagged))
