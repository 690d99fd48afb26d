"""Entity graph: who relates to whom, filtered; pick an entity to read its profile and sources."""

from __future__ import annotations

import streamlit as st

from gravity_engine import studio
from gravity_engine.viz import graph as gviz
from gravity_engine.errors import GravityError
from pages._ui import md_escape, quote_table, require_store, store_embedder

st.title("Entity graph")
store = require_store()
anchors = store.anchors


@st.cache_data(max_entries=8, show_spinner=False)
def _graph_html(store_key: tuple, types: tuple, min_degree: int, sessions: tuple | None, search: str,
                physics: bool, co_mentions: bool) -> tuple[str, int, int]:
    s = load(store_key)
    g = gviz.build_graph(s.anchors, studio.session_by_utterance(s))
    if co_mentions:
        gviz.add_co_mentions(g, s.anchors)
    sub = gviz.filter_graph(g, types=types, min_degree=min_degree, sessions=sessions, search=search)
    return gviz.graph_html(sub, height=600, physics=physics), sub.number_of_nodes(), sub.number_of_edges()


def load(store_key: tuple):
    from pages._ui import load_store

    return load_store(*store_key)


if not anchors.entities:
    st.info("This store has no entity profiles (the entities module was off, or nothing was found).")
    st.stop()

all_types = sorted({e.type or "other" for e in anchors.entities})
sessions = studio.session_ids(store)
with st.container(border=True):
    c1, c2, c3, c4 = st.columns([3, 2, 3, 2])
    types = c1.multiselect("Entity types", all_types, default=all_types, key="graph_filter_type")
    min_degree = c2.number_input("Minimum degree", 0, 50, 0, key="graph_min_degree")
    search = c3.text_input("Search a name or alias", key="graph_search", placeholder="e.g. Priya")
    physics = c4.toggle("Physics layout", value=True, key="graph_physics")
    co_mentions = c4.toggle("Co-mentions", value=True, key="graph_co_mentions",
                            help="Dashed edges between entities cited by the same utterances (at least 2).")
    session_range = None
    if len(sessions) > 1:
        first, last = st.select_slider("Sessions", options=sessions, value=(sessions[0], sessions[-1]),
                                       key="graph_session_range")
        i, j = sessions.index(first), sessions.index(last)
        session_range = tuple(sessions[i:j + 1])

store_key = (str(store.path), studio.store_mtime(store.path))
html_doc, n_nodes, n_edges = _graph_html(store_key, tuple(types), int(min_degree), session_range, search, physics,
                                        co_mentions)
m1, m2, m3 = st.columns(3)
m1.metric("Entities shown", n_nodes, help=f"{len(anchors.entities)} in the store")
m2.metric("Edges shown", n_edges)
m3.metric("Types", len(types))
if n_nodes == 0:
    st.warning("No entity matches these filters.")
else:
    st.iframe(html_doc, height=620)
    st.caption("Node size: mentions. Colour: entity type. Labelled arrows: extracted relations; dashed lines: "
               "co-mentions. Drag to move, scroll to zoom, hover for details.")

st.subheader("Profile", anchor=False)
ranked = sorted(anchors.entities, key=lambda e: (-e.mentions, e.name.lower()))
names = {e.id: f"{e.name} ({e.type}, {e.mentions} mentions)" for e in ranked}
hits = [e.id for e in ranked if search and search.lower() in (e.name + " " + " ".join(e.aliases)).lower()]
if hits and st.session_state.get("graph_last_search") != search:
    st.session_state["graph_selected_entity"] = hits[0]  # a new search selects its best match
st.session_state["graph_last_search"] = search
entity_id = st.selectbox("Entity", [e.id for e in ranked], format_func=names.get, key="graph_selected_entity")
entity = next(e for e in ranked if e.id == entity_id)
profile = gviz.entity_profile(entity)

st.markdown(f"#### {md_escape(entity.name)}")
a, b, c = st.columns(3)
a.metric("Mentions", entity.mentions)
b.metric("First seen", entity.first_seen or "–")
c.metric("Last seen", entity.last_seen or "–")
if entity.description:
    st.text(entity.description)
if entity.aliases:
    st.text("Also called: " + ", ".join(entity.aliases))

tabs = st.tabs(["Attributes", "Relations", "Merges", "Verification", "Sources"])
with tabs[0]:
    if profile["attributes"]:
        st.dataframe(profile["attributes"], hide_index=True, width="stretch")
        pick = st.selectbox("Quote the sources of", range(len(entity.attributes)),
                            format_func=lambda i: f"{entity.attributes[i].key}: {entity.attributes[i].value}",
                            key="graph_attr_pick")
        quote_table(store, entity.attributes[pick].source_ids, key="graph_attr_quotes")
    else:
        st.caption("No attributes.")
with tabs[1]:
    if profile["relations"]:
        st.dataframe(profile["relations"], hide_index=True, width="stretch")
        pick = st.selectbox("Quote the sources of", range(len(entity.relations)),
                            format_func=lambda i: f"{entity.relations[i].predicate} {entity.relations[i].target}",
                            key="graph_rel_pick")
        quote_table(store, entity.relations[pick].source_ids, key="graph_rel_quotes")
    else:
        st.caption("No relations.")
with tabs[2]:
    if profile["merges"]:
        st.caption("Names folded into this profile during consolidation. A wrong merge can be split off: the "
                   "name gets its own profile back (a sample store is copied to your workspace first).")
        st.dataframe(profile["merges"], hide_index=True, width="stretch")
        c1, c2 = st.columns([3, 1])
        alias = c1.selectbox("Merged name", [m.alias for m in entity.merges], key="graph_unmerge_alias")
        if c2.button("Split off", key="graph_unmerge", icon=":material/call_split:"):
            try:
                target = studio.unmerge_into_workspace(store, entity.id, alias, store_embedder(store))
            except GravityError as err:
                st.error(str(err))
            else:
                st.session_state["store_path"] = str(target)
                st.rerun()
    else:
        st.caption("No merges: this profile was built from one name.")
with tabs[3]:
    if profile["checks"]:
        flagged = [c for c in profile["checks"] if not c["supported"]]
        st.metric("Unsupported fields", len(flagged), help="fields whose cited utterances do not back them")
        st.dataframe(profile["checks"], hide_index=True, width="stretch")
    else:
        st.caption("No verification results stored for this entity.")
with tabs[4]:
    quote_table(store, entity.source_ids[:200], key="graph_entity_quotes")
