"""Home: what Gravity is, the loaded conversation and anchor store, counts, and shortcuts."""

from __future__ import annotations

import streamlit as st

from app_services import studio
from app_pages._ui import badge, md_escape, md_table, require_store

st.title("Gravity Studio")
st.markdown(
    "Gravity reads a long conversation once and writes three small knowledge bases beside it: "
    "**entity profiles**, **event records** with absolute dates, and **topic arcs** across sessions. "
    "At question time it picks the anchors that fit, expands the query from them, and adds them to any "
    "memory system's answer prompt as a supplement to its own retrieved memories. "
    "Every anchor cites the utterances it came from, so each field can be checked."
)

store = require_store()
anchors = store.anchors
info = anchors.built_with
conv = store.conversation

st.subheader(f"Loaded: {md_escape(anchors.conversation_id or 'conversation')}", anchor=False)
counts = anchors.counts()
cols = st.columns(6)
cols[0].metric("Sessions", len(conv.sessions) if conv else len(info.sessions))
cols[1].metric("Utterances", conv.n_utterances() if conv else "–")
cols[2].metric("Speakers", len(conv.speakers) if conv else "–")
cols[3].metric("Entities", counts["entities"])
cols[4].metric("Events", counts["events"])
cols[5].metric("Topics", counts["topics"])
st.html(" ".join(badge(m, f"{counts[m]} {m}") for m in ("entities", "events", "topics")))

left, right = st.columns([3, 2])
with left:
    st.markdown("#### Built with")
    verification = store.report.get("verification") or {}
    share = (verification.get("share") if isinstance(verification, dict)
             else None)
    rows = {
        "backend": info.backend,
        "LLM model": info.llm_model or "— (no LLM)",
        "embedding model": f"{info.embedding_model} ({info.embedding_dim} dims)",
        "batch size": str(info.batch_size),
        "modules": ", ".join(info.modules),
        "built at": info.built_at,
        "build time": f"{info.duration_s:.1f} s",
        "fields verified": f"{share:.0%}" if isinstance(share, (int, float)) else "not verified",
        "store folder": str(store.path),
    }
    st.caption(f"Store folder: {md_escape(store.path)} · the app keeps its caches and the stores it builds or "
               f"imports in {md_escape(studio.gravity_home())} (set GRAVITY_HOME to move them)")
    st.markdown(md_table([{"": k, "value": v} for k, v in rows.items()]))
with right:
    st.markdown("#### Go to")
    st.page_link("app_pages/graph.py", label="Entity graph: who relates to whom", icon=":material/hub:")
    st.page_link("app_pages/timeline.py", label="Event timeline: what happened when", icon=":material/timeline:")
    st.page_link("app_pages/topics.py", label="Topic arcs: themes across sessions",
                 icon=":material/stacked_line_chart:")
    st.page_link("app_pages/playground.py", label="Query playground: ask with and without Gravity",
                 icon=":material/manage_search:")
    st.page_link("app_pages/build.py", label="Build anchors from your own conversation", icon=":material/construction:")
    st.page_link("app_pages/data.py", label="Export or import a store", icon=":material/folder_zip:")

if conv is not None:
    st.markdown("#### Sessions")
    st.markdown(md_table(
        [{"session": s.id, "date": s.timestamp_text or s.timestamp or "unknown", "utterances": len(s.utterances),
          "first line": (f"{s.utterances[0].speaker}: {s.utterances[0].text}"[:140] if s.utterances else "")}
         for s in conv.sessions]))
    if conv.warnings:
        with st.expander(f"Loader notes ({len(conv.warnings)})"):
            for w in conv.warnings[:50]:
                st.text(w)
