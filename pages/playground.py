"""Query playground: one question through the host alone and with Gravity, with every step of the trace."""

from __future__ import annotations

import json

import altair as alt
import pandas as pd
import streamlit as st

from gravity_engine import studio
from gravity_engine.errors import GravityError
from gravity_engine.query.config import VARIANTS
from pages._ui import llm_config, load_store, query_config, require_store, selectable_hosts, store_embedder

st.title("Query playground")
store = require_store()
store_key = (str(store.path), studio.store_mtime(store.path))


@st.cache_resource(max_entries=4, show_spinner="Indexing the anchors…")
def _gravity(path: str, mtime: float):
    from gravity_engine.query.pipeline import GravityQuery

    s = load_store(path, mtime)
    return GravityQuery(s, store_embedder(s))


@st.cache_resource(max_entries=6, show_spinner="The host is ingesting the conversation…")
def _host(path: str, mtime: float, name: str, _llm=None):
    from gravity_engine.hosts import get_host

    s = load_store(path, mtime)
    # Only hosts that call an LLM while ingesting (A-Mem's evolution step) take the endpoint.
    host = get_host(name, embedder=store_embedder(s), **({"llm": _llm} if _llm is not None else {}))
    host.ingest(s.conversation)
    return host


questions = studio.questions_for(store)
with st.container(border=True):
    if questions:
        picks = ["(type your own question)"] + [q["question"] for q in questions]
        pick = st.selectbox(f"Benchmark questions with gold answers ({len(questions)})", picks,
                            key="playground_pick")
        if pick != picks[0] and st.session_state.get("playground_last_pick") != pick:
            st.session_state["playground_query"] = pick
        st.session_state["playground_last_pick"] = pick
    question = st.text_input("Question", key="playground_query",
                             placeholder="e.g. When did the model invent a drug dose?")
    c1, c2, c3 = st.columns([1, 1, 2])
    host_name = c1.selectbox("Host", selectable_hosts(), key="playground_host",
                             help="The memory system Gravity sits beside (built-in hosts work offline).")
    variant = c2.selectbox("Variant", list(VARIANTS), key="playground_variant",
                           help="full = +EVT; +E/+V/+T single modules; -rrk no rerank; -exp no expansion; "
                                "+Sum free-form summaries in the same slot.")
    with c3:
        st.caption("Switch blocks off to see their effect")
        t = st.columns(5)
        use_e = t[0].toggle("Entities", True, key="playground_use_entities")
        use_v = t[1].toggle("Events", True, key="playground_use_events")
        use_t = t[2].toggle("Topics", True, key="playground_use_topics")
        use_x = t[3].toggle("Expansion", True, key="playground_use_expansion")
        use_r = t[4].toggle("Temporal", True, key="playground_use_temporal")
    ask_clicked = st.button("Ask", type="primary", key="playground_ask", disabled=not question.strip(),
                            icon=":material/send:")

gold = next((q for q in questions if q["question"] == question), None)

if ask_clicked and question.strip():
    from gravity_engine.query.pipeline import ask

    try:
        cfg = query_config(variant)
        wanted = tuple(m for m, on in (("entities", use_e), ("events", use_v), ("topics", use_t)) if on)
        cfg = cfg.with_(modules=tuple(m for m in cfg.modules if m in wanted), expand=cfg.expand and use_x,
                        temporal=cfg.temporal and use_r)
        llm_cfg = llm_config()
        llm = None
        if llm_cfg is not None:
            from gravity_engine.llm import OpenAIClient

            llm = OpenAIClient(llm_cfg)
        with st.spinner("Asking…"):
            from gravity_engine.hosts import LLM_AT_INGEST

            host = _host(*store_key, host_name, _llm=llm_cfg if host_name in LLM_AT_INGEST else None)
            result = ask(store, host, question.strip(), cfg,
                         question_date=(gold or {}).get("question_date"), llm=llm, gravity=_gravity(*store_key))
        st.session_state["playground_result"] = json.loads(result.trace.to_json())
        st.session_state["playground_store"] = store_key
    except GravityError as err:
        st.error(str(err))

trace = st.session_state.get("playground_result")
if not trace or st.session_state.get("playground_store") != store_key:
    st.caption("Ask a question to see the host's memories, the anchors Gravity picks, the expansion queries and the "
               "final prompt.")
    st.stop()


def _contains(text: str, answer: str | None) -> bool | None:
    if not answer:
        return None
    from gravity_engine.measure import context_covers

    return context_covers(str(answer), text)


st.subheader("Answers", anchor=False)
answers = trace["answers"]
gold_answer = (gold or {}).get("answer")
a1, a2, a3 = st.columns(3)
with a1:
    st.markdown("**Host alone**")
    st.text(answers.get("without") or answers.get("status", "unavailable"))
    c = _contains(trace["prompt_without"]["text"], gold_answer)
    if c is not None:
        st.caption("context holds the gold answer: " + ("yes" if c else "no"))
with a2:
    st.markdown("**Host + Gravity**")
    st.text(answers.get("with") or answers.get("status", "unavailable"))
    c = _contains(trace["prompt_with"]["text"], gold_answer)
    if c is not None:
        st.caption("context holds the gold answer: " + ("yes" if c else "no"))
with a3:
    st.markdown("**Gold answer**")
    st.text(gold_answer or "– (not a benchmark question)")
if answers.get("status", "").startswith("unavailable"):
    st.info("No LLM endpoint is configured, so no answers were generated; everything below is complete. "
            "Set an endpoint on the Settings page to compare answers.")

tm = trace["timings_ms"]
m = st.columns(4)
m[0].metric("Gravity query path", f"{tm.get('query_path', 0):.0f} ms")
m[1].metric("Host search", f"{tm.get('host_search', 0):.0f} ms",
            help="A host on the anchors' embedding model searches with the question's embedding, which Gravity's "
                 "path computes (and counts) once for both.")
m[2].metric("Injected tokens", trace["injected_tokens"])
m[3].metric("Expansion queries", len(trace["expansions"]))

st.subheader("Memories: host alone vs with expansion", anchor=False)
left, right = st.columns(2)
original = next((h for h in trace["host_results"] if h["source"] == "original"), {"memories": []})
with left:
    st.caption(f"The host's top {len(original['memories'])} for the question alone")
    st.dataframe(pd.DataFrame(original["memories"], columns=["rank", "score", "session_id", "text"]),
                 hide_index=True, width="stretch")
with right:
    rule = trace["config"].get("fusion", "rrf")
    how = (f"the host's first {trace['config'].get('fusion_keep', 0)} kept, then each expansion's best new memory"
           if rule == "slots" else "reciprocal-rank fusion")
    st.caption(f"After fusing the expansion queries' results ({how}; from_lists: 0 = the question)")
    st.dataframe(pd.DataFrame(trace["merged"], columns=["rank", "rrf", "from_lists", "session_id", "text"]),
                 hide_index=True, width="stretch")
pushed = trace.get("pushed_out") or []
if pushed:
    st.warning(f"With Gravity, {len(pushed)} of the host's own top {len(original['memories'])} memories are not in "
               "the prompt (fusion or the anchors' share of the budget pushed them out):", icon=":material/info:")
    st.dataframe(pd.DataFrame(pushed, columns=["rank", "score", "session_id", "text"]), hide_index=True,
                 width="stretch", key="playground_pushed")

st.subheader("Anchors per module", anchor=False)
if trace["temporal"].get("spans"):
    st.caption("Temporal expressions in the question: " + "; ".join(
        f"“{s['text']}” → {s.get('start')}..{s.get('end')}" for s in trace["temporal"]["spans"]))
sigma = trace["config"].get("sigma", 0)
mods = [mo for mo in ("entities", "events", "topics") if mo in trace["modules"]]
if not mods:
    st.caption("No anchor module is on for this variant.")
for tab, module in zip(st.tabs([f"{mo} ({len(trace['modules'][mo]['kept_ids'])} kept)" for mo in mods] or ["–"]),
                       mods):
    mt = trace["modules"][module]
    with tab:
        st.caption(f"{mt['n_candidates']} candidates ({mt['n_native']} native, {mt['n_widened']} widened by dense "
                   f"match, {mt['n_temporal']} in temporal slots) of {mt['n_anchors']} anchors; K = {mt['k']}, "
                   f"σ = {sigma}")
        cands = pd.DataFrame(mt["candidates"], columns=["rank", "anchor_id", "label", "native_reason", "cosine",
                                                        "status", "kept"])
        if cands.empty:
            st.caption("No candidates.")
            continue
        if cands["cosine"].notna().any():
            top = cands.head(25).copy()
            bars = alt.Chart(top).mark_bar().encode(
                x=alt.X("cosine:Q", title="cosine to the question"),
                y=alt.Y("label:N", sort=list(top["label"]), title=None),
                color=alt.Color("status:N", scale=alt.Scale(
                    domain=["kept", "temporal slot", "below sigma", "beyond K"],
                    range=["#54A24B", "#F58518", "#BAB0AC", "#9ecae9"])),
                tooltip=["anchor_id:N", "native_reason:N", "cosine:Q", "status:N"])
            rule = alt.Chart(pd.DataFrame({"sigma": [sigma]})).mark_rule(color="#E45756", strokeDash=[5, 3]).encode(
                x="sigma:Q")
            st.altair_chart((bars + rule).properties(height=max(120, 22 * len(top))), width="stretch")
        st.dataframe(cands, hide_index=True, width="stretch")

st.subheader("Expansion queries", anchor=False)
if trace["expansions"]:
    labels = {c["anchor_id"]: c["label"] for mo in trace["modules"].values() for c in mo["candidates"]}
    st.dataframe([{"#": i + 1, "query": e["query"], "module": e["module"], "from anchor": labels.get(e["anchor_id"],
                                                                                                      e["anchor_id"])}
                  for i, e in enumerate(trace["expansions"])], hide_index=True, width="stretch")
else:
    st.caption("No expansion queries (expansion is off, or no anchor was kept).")

st.subheader("Injected prompt", anchor=False)
if trace["blocks"]:
    b = st.columns(len(trace["blocks"]))
    for col, block in zip(b, trace["blocks"]):
        col.metric(block["title"], f"{block['tokens']} tokens")
    rows = [{"block": block["title"], "anchor": ln["anchor_id"], "field": ln["field"], "line": ln["text"],
             "score": ln["score"], "temporal slot": ln["pinned"], "sources": ", ".join(ln["source_ids"])}
            for block in trace["blocks"] for ln in block.get("lines", [])]
    if rows:
        st.caption("What Gravity added, line by line: each line's cosine with the question (lines are packed best "
                   "first within the anchor budget) and the utterances it cites")
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="playground_lines")
p1, p2 = st.columns(2)
with p1:
    st.caption(f"Without Gravity · {trace['prompt_without']['tokens']} tokens")
    st.code(trace["prompt_without"]["text"], language=None, height=360)
with p2:
    st.caption(f"With Gravity · {trace['prompt_with']['tokens']} tokens")
    st.code(trace["prompt_with"]["text"], language=None, height=360)
st.download_button("Download the trace (JSON)", json.dumps(trace, indent=2, ensure_ascii=False),
                   f"trace-{studio.safe_name(trace['variant'])}.json", "application/json", key="playground_dl_trace")
