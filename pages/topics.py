"""Topic arcs: topics across sessions as a heat map, and each arc's states in order."""

from __future__ import annotations

import streamlit as st

from gravity_engine import studio
from gravity_engine.viz import topics as topviz
from pages._ui import load_store, md_escape, quote_table, require_store

st.title("Topic arcs")
store = require_store()
anchors = store.anchors


@st.cache_data(max_entries=8, show_spinner=False)
def _arcs(path: str, mtime: float):
    s = load_store(path, mtime)
    return topviz.arcs_frame(s.anchors, s.conversation), topviz.session_order(s.anchors, s.conversation)


if not anchors.topics:
    st.info("This store has no topic arcs (the topics module was off, or nothing was found).")
    st.stop()

arcs, sessions = _arcs(str(store.path), studio.store_mtime(store.path))
c1, c2, c3 = st.columns(3)
c1.metric("Topics", len(anchors.topics))
c2.metric("Sessions", len(sessions))
c3.metric("Ongoing", sum(t.status == "ongoing" for t in anchors.topics))

st.altair_chart(topviz.heatmap_chart(arcs, sessions), width="stretch")
st.caption("Each cell is one session of a topic's arc; darker means more mentions. Hover for the session's state.")
st.dataframe(topviz.topic_totals(anchors), hide_index=True, width="stretch")

st.subheader("Arc", anchor=False)
labels = {t.id: f"{t.label} ({len(t.sessions)} sessions, {t.status})" for t in anchors.topics}
topic_id = st.selectbox("Topic", list(labels), format_func=labels.get, key="topics_selected")
topic = next(t for t in anchors.topics if t.id == topic_id)
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
    with st.expander(md_escape(f"{step.session_id} · {step.date or 'date unknown'} · {step.mentions} mentions")):
        st.text(step.state or "(no state summary)")
        quote_table(store, step.source_ids[:50], key=f"topics_quotes_{step.session_id}")
