"""Topic arcs: topics across sessions as a clickable heat map, and each arc's states in order."""

from __future__ import annotations

import streamlit as st

from app_services import studio
from gravity_engine.viz import topics as topviz
from gravity_engine.viz import vega_spec
from app_pages._ui import load_store, md_escape, quote_table, require_store

st.title("Topic arcs")
store = require_store()
anchors = store.anchors


@st.cache_data(max_entries=8, show_spinner=False)
def _arcs(path: str, mtime: float):
    s = load_store(path, mtime)
    titles = topviz.topic_titles(s.anchors)
    return topviz.arcs_frame(s.anchors, s.conversation, titles), topviz.session_order(s.anchors, s.conversation), titles


def _step_key(topic_id: str, session_id: str) -> str:
    return f"topics_step_{topic_id}_{session_id}"


if not anchors.topics:
    st.info("This store has no topic arcs (the topics module was off, or nothing was found).")
    st.stop()

arcs, sessions, titles = _arcs(str(store.path), studio.store_mtime(store.path))
c1, c2, c3 = st.columns(3)
c1.metric("Topics", len(anchors.topics))
c2.metric("Sessions", len(sessions))
c3.metric("Ongoing", sum(t.status == "ongoing" for t in anchors.topics))

heatmap = topviz.heatmap_chart(arcs, sessions, selected=st.session_state.get("topics_selected"))
event = st.vega_lite_chart(vega_spec(heatmap), width="stretch", on_select="rerun", selection_mode="cell",
                           key="topics_heatmap")
cell = topviz.clicked_cell(event.selection)
if cell and cell != st.session_state.get("topics_last_cell"):
    st.session_state["topics_last_cell"] = cell
    st.session_state["topics_selected"], st.session_state["topics_focus_session"] = cell
    st.session_state[_step_key(*cell)] = True  # that session's expander opens
    st.rerun()  # open the clicked topic's arc at that session
st.caption("Each cell is one session of a topic's arc; darker means more mentions. Click a cell to open that "
           "topic's arc at that session; hover for the session's state. A title is the topic's own phrases closest "
           "to what its utterances say; its distinctive keywords are in the table.")
st.dataframe(topviz.topic_totals(anchors, titles), hide_index=True, width="stretch")

st.subheader("Arc", anchor=False)
labels = {t.id: f"{titles.get(t.id, t.label)} ({len(t.sessions)} sessions, {t.status})" for t in anchors.topics}
if st.session_state.get("topics_selected") not in labels:
    st.session_state.pop("topics_selected", None)
topic_id = st.selectbox("Topic", list(labels), format_func=labels.get, key="topics_selected",
                        on_change=lambda: st.session_state.pop("topics_focus_session", None))
topic = next(t for t in anchors.topics if t.id == topic_id)
focus = st.session_state.get("topics_focus_session")
st.markdown(f"#### {md_escape(titles.get(topic.id, topic.label))}")
subtitle = topviz.topic_subtitles(anchors).get(topic.id)
if subtitle:
    st.caption("Keywords: " + md_escape(subtitle))
st.vega_lite_chart(vega_spec(topviz.arc_chart(topic, sessions, focus)), width="stretch")
if topic.summary:
    st.text(topic.summary)
left, right = st.columns(2)
with left:
    st.markdown("**Key facts**")
    if topic.key_facts:
        st.dataframe([{"fact": f.text, "sources": ", ".join(f.source_ids)} for f in topic.key_facts],
                     hide_index=True, width="stretch")
    else:
        st.caption("No key facts.")
with right:
    st.markdown("**Participants and keywords**")
    st.text("Participants: " + (", ".join(topic.participants) or "–"))
    st.text("Keywords: " + (", ".join(topic.keywords) or "–"))

st.markdown("**Session by session**")
for step in topic.sessions:
    # An expander that reruns when opened draws its quotes only then: a table per session, all drawn hidden,
    # made every visit to this page slow.
    label = md_escape(f"{step.session_id} · {(step.date or 'date unknown')[:10]} · {step.mentions} mentions")
    box = st.expander(label, expanded=step.session_id == focus, key=_step_key(topic.id, step.session_id),
                      on_change="rerun")
    if box.open:
        with box:
            st.text(step.state or "(no state summary)")
            quote_table(store, step.source_ids[:50], key=f"topics_quotes_{step.session_id}")
