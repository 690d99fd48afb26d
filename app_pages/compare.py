"""Compare builds: two stores of one conversation side by side (added, removed, changed per module, with sources),
and optionally their measures and the anchors each injects for chosen questions."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_services import studio
from gravity_engine.curate.diff import compare_measures, compare_prompts, diff_stores
from gravity_engine.curate.edits import load_raw
from gravity_engine.errors import GravityError
from app_pages._ui import load_store, md_escape, quote_table, require_store, selectable_hosts, store_embedder

st.title("Compare builds")
current = require_store()

paths = [str(p) for p in studio.available_stores()]
if str(current.path) not in paths:
    paths.insert(0, str(current.path))
labels = {p: studio.store_label(Path(p)) + (f" · {studio.conversation_id_of(p)}" if studio.conversation_id_of(p)
                                             else "") for p in paths}
if st.session_state.get("compare_for") != str(current.path):  # a new current store: pick its pair again
    st.session_state["compare_for"] = str(current.path)
    st.session_state["compare_a"], st.session_state["compare_b"] = studio.compare_pair(paths, str(current.path))
    st.session_state["compare_a_raw"] = st.session_state["compare_a"] == st.session_state["compare_b"]


def _follow_picks() -> None:
    # The same store on both sides compares it with itself as built (its edits); two stores, as they are.
    st.session_state["compare_a_raw"] = st.session_state["compare_a"] == st.session_state["compare_b"]


c1, c2 = st.columns(2)
a_path = c1.selectbox("A", paths, key="compare_a", format_func=labels.get, on_change=_follow_picks)
b_path = c2.selectbox("B", paths, key="compare_b", format_func=labels.get, on_change=_follow_picks)
a_raw = c1.toggle("A as built (without its edits)", key="compare_a_raw",
                  help="Compare a store with itself as built to see what its edits changed.")
if a_path == b_path and studio.compare_pair(paths, b_path)[0] == b_path:
    st.caption("No other build of this conversation is open: A is the store as built, B with its edits. Build the "
               "conversation again (another extractor or settings) to compare two builds.")
elif studio.conversation_id_of(a_path) != studio.conversation_id_of(b_path):
    st.warning("A and B are builds of different conversations: most anchors will show as added or removed.",
               icon=":material/compare_arrows:")


@st.cache_data(max_entries=8, show_spinner="Comparing…")
def _diff(a: str, a_mtime: float, raw: bool, b: str, b_mtime: float):
    sa = load_raw(a) if raw else load_store(a, a_mtime)
    return diff_stores(sa, load_store(b, b_mtime), a_label=labels.get(a, a) + (" as built" if raw else ""),
                       b_label=labels.get(b, b))


def _store_a():
    return load_raw(a_path) if a_raw else load_store(a_path, studio.store_mtime(a_path))


try:
    result = _diff(a_path, studio.store_mtime(a_path), a_raw, b_path, studio.store_mtime(b_path))
    store_b = load_store(b_path, studio.store_mtime(b_path))
except GravityError as err:
    st.error(md_escape(err))
    st.stop()

for note in result.notes:
    st.warning(md_escape(note))
st.caption(f"A = {md_escape(result.a_label)} · B = {md_escape(result.b_label)}. Anchors pair by stable keys: entity names, "
           "event text + date + source, topic labels and sources.")
st.dataframe(result.summary_rows(), hide_index=True, width="stretch", key="compare_summary")
cols = st.columns(3)
for col, row in zip(cols, result.summary_rows()):
    col.metric(row["module"].capitalize(), f"+{row['added']} −{row['removed']} ~{row['changed']}",
               help=f"{row['unchanged']} unchanged")

tabs = st.tabs([m.capitalize() for m in result.modules])
for tab, (module, md) in zip(tabs, result.modules.items()):
    with tab:
        if not (md.added or md.removed or md.changed):
            st.caption(f"No difference: {md.unchanged} anchors are the same in A and B.")
            continue
        left, right = st.columns(2)
        for col, title, listed, name in ((left, "Only in A", md.removed, "removed"),
                                         (right, "Only in B", md.added, "added")):
            col.markdown(f"**{title}** ({len(listed)})")
            if listed:
                col.dataframe([{"anchor": s.name, "detail": s.detail, "sources": ", ".join(s.source_ids[:4])}
                               for s in listed], hide_index=True, width="stretch", key=f"compare_{name}_{module}")
            else:
                col.caption("none")
        st.markdown(f"**Changed** ({len(md.changed)})")
        if md.changed:
            st.dataframe([{"anchor": c.a.name, "matched by": c.matched_by, "field": f.field, "A": f.before,
                           "B": f.after} for c in md.changed for f in c.changes], hide_index=True, width="stretch",
                         key=f"compare_changed_{module}")
        sides = ([("A", s) for s in md.removed] + [("B", s) for s in md.added]
                 + [("A and B", c.b) for c in md.changed])
        if sides:
            pick = st.selectbox("Quote the sources of", range(len(sides)), key=f"compare_pick_{module}",
                                format_func=lambda i: f"{sides[i][0]}: {sides[i][1].name[:90]}")
            side = sides[pick][1]
            st.markdown(f"{md_escape(sides[pick][0])}: **{md_escape(side.name)}** ({md_escape(side.detail)})")
            quoted = store_b if sides[pick][0] != "A" else load_store(a_path, studio.store_mtime(a_path))
            quote_table(quoted, side.source_ids[:20], key=f"compare_quotes_{module}")

st.subheader("Effect on answers", anchor=False)
with st.form("compare_prompts"):
    questions = st.text_area("Questions (one a line): the anchors each store injects", key="compare_questions",
                             placeholder="When did Priya start at Northwind Health?")
    if st.form_submit_button("Show injected anchors") and questions.strip():
        try:
            rows = compare_prompts(_store_a(), store_b, [q for q in questions.splitlines() if q.strip()],
                                   embedder=store_embedder(store_b))
        except GravityError as err:
            st.error(md_escape(err))
            rows = []
        for r in rows:
            st.markdown(f"**{md_escape(r['question'])}**" + (" — the same anchors" if r["same"] else ""))
            ca, cb = st.columns(2)
            ca.text(r["a"] or "(nothing injected)")
            cb.text(r["b"] or "(nothing injected)")

conv = store_b.conversation
n_questions = len(conv.questions) if conv is not None else 0
if n_questions:
    with st.form("compare_measures"):
        c1, c2 = st.columns(2)
        hosts = selectable_hosts() or ["dense"]
        host = c1.selectbox("Host", hosts, index=hosts.index("dense") if "dense" in hosts else 0, key="compare_host")
        limit = c2.number_input("Questions (at most)", 1, n_questions, min(n_questions, 200), key="compare_limit")
        if st.form_submit_button(f"Measure both on the conversation's {n_questions} questions"):
            try:
                with st.spinner("Measuring A and B…"):
                    measures = compare_measures(_store_a(), store_b, "locomo", host, embedder=store_embedder(store_b),
                                                limit=int(limit))
            except GravityError as err:
                st.error(md_escape(err))
            else:
                st.dataframe([{"category": r["category"], "n": r["n"],
                               **{f"{k} {s}": r[f"{k}_{s}"] for k in ("coverage_gravity", "recall_expanded",
                                                                         "temporal_grounding") for s in ("a", "b", "change")}}
                              for r in measures], hide_index=True, width="stretch", key="compare_measures_table")
else:
    st.caption("Measures need benchmark questions with the conversation (a LoCoMo build has them).")
