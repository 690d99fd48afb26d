"""Entity graph: who relates to whom, filtered; pick an entity to read its profile and sources."""

from __future__ import annotations

import streamlit as st

from app_pages._entity_graph import entity_graph
from app_pages._ui import load_store, md_escape, quote_table, require_store, store_embedder
from app_services import studio
from gravity_engine.errors import GravityError
from gravity_engine.viz import graph as gviz

st.title("Entity graph")
store = require_store()
anchors = store.anchors


def fields_with_sources(rows: list, fields: list, label, key: str, empty: str) -> None:
    """A profile's fields as a table, and the utterances behind the one picked."""
    if not rows:
        st.caption(empty)
        return
    st.dataframe(rows, hide_index=True, width="stretch")
    pick = st.selectbox("Quote the sources of", range(len(fields)), format_func=lambda i: label(fields[i]),
                        key=f"{key}_pick")
    quote_table(store, fields[pick].source_ids, key=f"{key}_quotes")


@st.cache_data(max_entries=8, show_spinner=False)
def _explore(path: str, mtime: float, co_mentions: bool):
    # The graph, its merged edges and the layout are computed once per store and edge set, then filtered.
    s = load_store(path, mtime)
    return gviz.explore_data(s.anchors, studio.session_by_utterance(s), co_mentions=co_mentions,
                             conversation=s.conversation)


if not anchors.entities:
    st.info("This store has no entity profiles (the entities module was off, or nothing was found).")
    st.stop()

# Another page (Review, a shared link) may ask for one entity: by session state (each time it is set), or by
# ?entity= (once per value: the URL keeps it while the user picks other entities).
focus_ref = st.session_state.pop("focus_entity", None)
if not focus_ref and st.query_params.get("entity") != st.session_state.get("graph_focus_applied"):
    focus_ref = st.query_params.get("entity")
if focus_ref:
    st.session_state["graph_focus_applied"] = focus_ref
    focus_id = gviz.resolve_entity(anchors, focus_ref)
    if focus_id:
        st.session_state["graph_selected_entity"] = focus_id
        st.query_params["entity"] = st.session_state["graph_focus_applied"] = focus_id
    else:
        st.warning(f"No entity called {md_escape(focus_ref)} in this store.")

ranked = sorted(anchors.entities, key=lambda e: (-e.mentions, e.name.lower()))  # the profile picker's order
all_types = sorted({e.type or "other" for e in anchors.entities})
sessions = studio.session_ids(store)
with st.container(border=True):
    c1, c2, c3 = st.columns([3, 3, 2])
    types = c1.multiselect("Entity types", all_types, default=all_types, key="graph_filter_type")
    search = c2.text_input("Search a name or alias", key="graph_search", placeholder="e.g. Priya")
    co_mentions = c3.toggle("Co-mentions", value=True, key="graph_co_mentions",
                            help="Dashed edges between entities cited by the same utterances (at least 2; a speaker "
                                 "is mentioned by what they say), thicker the more often; click a diamond for the "
                                 "utterances. Typed relations stay solid.")
    session_range = None
    if len(sessions) > 1:
        first, last = st.select_slider("Sessions", options=sessions, value=(sessions[0], sessions[-1]),
                                       key="graph_session_range")
        i, j = sessions.index(first), sessions.index(last)
        session_range = tuple(sessions[i:j + 1])

g, all_nodes, all_edges = _explore(str(store.path), studio.store_mtime(store.path), co_mentions)
sub = gviz.filter_graph(g, types=types, sessions=session_range, search=search)
nodes, edges = gviz.select_frames(all_nodes, all_edges, sub.nodes, hide_unconnected=True)
alone = gviz.unconnected(gviz.select_frames(all_nodes, all_edges, sub.nodes)[0])
m1, m2, m3, m4 = st.columns(4)
m1.metric("Entities shown", len(nodes), help=f"{len(anchors.entities)} in the store")
m2.metric("Typed relations", int((edges["kind"] == "relation").sum()),
          help="A relation and its inverse ('sister', 'sister_of') count once.")
m3.metric("Co-mention edges", int((edges["kind"] == "co-mention").sum()),
          help="Pairs cited together by at least 2 utterances (turn on 'Co-mentions').")
m4.metric("Without an edge", len(alone), help="Listed under the graph, not drawn.")
if nodes.empty:
    st.warning("No entity with an edge matches these filters" + (" (turn on 'Co-mentions' to connect the entities "
                                                                "said together)" if not co_mentions else "") + ".")
else:
    view = entity_graph(data=gviz.graph_view(nodes, edges, selected=st.session_state.get("graph_selected_entity",
                                                                                         ranked[0].id)),
                        key="graph_chart", on_click_change=lambda: None)
    pick = gviz.clicked(view.click)  # set on the run a click starts, None on every other
    if pick:
        st.session_state["graph_last_click"] = pick
        if pick[0] == "node" and pick[1] in {e.id for e in ranked}:  # a speaker without a profile has none to open
            st.session_state["graph_selected_entity"] = pick[1]
            st.query_params["entity"] = pick[1]
            st.session_state["graph_focus_applied"] = pick[1]
        st.rerun()  # redraw with the clicked node ringed and its profile open
    st.caption("Colour: entity type. Node size: mentions. Solid lines: typed relations; dashed: mentioned together "
               "(thicker: more often). Click a node to open its profile, a diamond to read the utterances behind "
               "that edge; hover a node to see its neighbours. Drag to pan, scroll or +/− to zoom, double-click or ⤢ "
               "to fit.")
    chosen = st.session_state.get("graph_selected_entity")
    if chosen and chosen not in set(nodes["id"]) and chosen in set(all_nodes["id"]):
        st.caption("The profile below is not in the graph as filtered" + (" (it has no edge: it is in the list "
                   "below)" if chosen in set(alone["id"]) else "") + ".")
    last = st.session_state.get("graph_last_click")
    if last and last[0] == "edge":
        row = edges[edges["edge_id"] == last[1]]
        if not row.empty:
            with st.container(border=True):
                st.markdown("**Relation evidence:** " + md_escape(row["statements"].iloc[0]))
                quote_table(store, list(row["source_ids"].iloc[0]), key="graph_edge_quotes")

if not alone.empty:
    with st.expander(f"Entities without an edge ({len(alone)})", expanded=nodes.empty):
        st.caption("Named in the conversation but neither related to nor said together with another entity (at "
                   "least twice). Pick one in the Profile below.")
        st.dataframe(alone.drop(columns=["id"]), hide_index=True, width="stretch", key="graph_unconnected",
                     column_config={"name": st.column_config.TextColumn(width="large")})

st.subheader("Profile", anchor=False)
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

# Only the open tab is drawn: every table is a data grid the browser must start, and a tab opened on this
# page waited for five of them before the graph was drawn.
tabs = st.tabs(["Attributes", "Relations", "Merges", "Verification", "Sources"], key="graph_profile_tab",
               on_change="rerun")
if tabs[0].open:
    with tabs[0]:
        fields_with_sources(profile["attributes"], entity.attributes, lambda a: f"{a.key}: {a.value}", "graph_attr",
                            "No attributes.")
if tabs[1].open:
    with tabs[1]:
        fields_with_sources(profile["relations"], entity.relations, lambda r: f"{r.predicate} {r.target}", "graph_rel",
                            "No relations.")
if tabs[2].open:
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
if tabs[3].open:
    with tabs[3]:
        if profile["checks"]:
            flagged = [c for c in profile["checks"] if not c["supported"]]
            st.metric("Unsupported fields", len(flagged), help="fields whose cited utterances do not back them")
            st.dataframe(profile["checks"], hide_index=True, width="stretch")
        else:
            st.caption("No verification results stored for this entity.")
if tabs[4].open:
    with tabs[4]:
        quote_table(store, entity.source_ids[:200], key="graph_entity_quotes")
