"""Query playground: one question through the host alone and with Gravity: what Gravity changed in the prompt,
where each memory came from, whether each context holds the gold answer, and every step of the trace."""

from __future__ import annotations

import html
import json

import altair as alt
import pandas as pd
import streamlit as st

from app_services import studio
from gravity_engine.errors import GravityError
from gravity_engine.hosts import LLM_AT_INGEST
from gravity_engine.llm.models import describe_model
from gravity_engine.query.config import VARIANTS
from gravity_engine.query.pipeline import GravityQuery
from gravity_engine.query.summaries import MODEL_WRITTEN, variant_label
from gravity_engine.viz import prompt as pview
from app_pages._ui import (llm_config, load_store, query_config, quote_table, require_store, selectable_hosts,
                           store_embedder)

st.title("Query playground")
store = require_store()
store_key = (str(store.path), studio.store_mtime(store.path))


@st.cache_resource(max_entries=4, show_spinner="Indexing the anchors…")
def _gravity(path: str, mtime: float):
    s = load_store(path, mtime)
    return GravityQuery(s, store_embedder(s))


def _host(name: str, cfg):
    """A host that calls a model while ingesting holds a client built from this session's endpoint and key, so it
    lives in this browser session only, keyed by endpoint, model and a hash of the key."""
    if name not in LLM_AT_INGEST:  # holds nothing of a user's: one per store and host, server-wide
        ready = studio.host_in_background(store, name)
        if not ready.done():
            with st.spinner(f"The {name} host is still indexing the conversation (once per store)…"):
                return ready.result()
        return ready.result()
    hosts = st.session_state.setdefault("playground_hosts", {})
    key = studio.host_cache_key(*store_key, name, cfg)
    if key not in hosts:
        with st.spinner(f"{name} is ingesting the conversation (it calls the model for every note)…"):
            host = studio.ingested_host(load_store(*store_key), name, store_embedder(store), cfg)
        while len(hosts) >= 2:  # a session keeps its last two such hosts
            hosts.pop(next(iter(hosts)))
        hosts[key] = host
    return hosts[key]


def _memories(trace: dict) -> None:
    sources = pview.memory_sources(trace)
    pushed = trace.get("pushed_out") or []
    left, right = st.columns(2)
    original = next((h for h in trace["host_results"] if h["source"] == "original"), {"memories": []})
    with left:
        st.caption(f"The host's top {len(original['memories'])} for the question alone")
        st.dataframe(pd.DataFrame(original["memories"], columns=["rank", "score", "session_id", "text"]),
                     hide_index=True, width="stretch")
    with right:
        rule = trace["config"].get("fusion_method", "rrf")
        how = (f"the host's first {trace['config'].get('fusion_keep', 0)} kept, then each expansion's best new memory"
               if rule == "slots" else "reciprocal-rank fusion")
        st.caption(f"After fusing the expansion queries' results ({how}); “brought by” names the search that "
                   "found it")
        merged = pd.DataFrame([{"rank": mm["rank"], "brought by": sources.get(pview._key(mm), ""),
                                "session_id": mm.get("session_id"), "text": mm["text"]} for mm in trace["merged"]],
                              columns=["rank", "brought by", "session_id", "text"])
        st.dataframe(merged, hide_index=True, width="stretch", key="playground_merged",
                     column_config={"brought by": st.column_config.TextColumn(width="medium")})
    if pushed:
        with st.expander(f"The host's own memories that Gravity pushed out ({len(pushed)})",
                         expanded=pview.top_hit_pushed_out(trace) is not None):
            st.dataframe(pd.DataFrame(pushed, columns=["rank", "score", "session_id", "text"]), hide_index=True,
                         width="stretch", key="playground_pushed")


def _anchors(trace: dict) -> None:
    if trace["temporal"].get("spans"):
        st.caption("Temporal expressions in the question: " + "; ".join(
            f"“{s['text']}” → {s.get('start')}..{s.get('end')}" for s in trace["temporal"]["spans"]))
    sigma = trace["config"].get("sigma", 0)
    mods = [mo for mo in ("entities", "events", "topics") if mo in trace["modules"]]
    if not mods:
        st.caption("No anchor module is on for this variant.")
    # One module at a time: drawing every module's chart and table at once made each answer slow to appear.
    shown = st.segmented_control("Module", mods, default=mods[0] if mods else None, key="playground_module",
                                 format_func=lambda mo: f"{mo} ({len(trace['modules'][mo]['kept_ids'])} kept)") \
        if mods else None
    if shown is not None:
        mt = trace["modules"][shown]
        st.caption(f"{mt['n_candidates']} candidates ({mt['n_native']} native, {mt['n_widened']} widened by dense "
                   f"match, {mt['n_temporal']} in temporal slots) of {mt['n_anchors']} anchors; K = {mt['k']}, "
                   f"σ = {sigma}")
        if shown == "events":
            st.caption("For a question about time an event's score also counts the utterance it cites and the "
                       "question's words it holds (docs/temporal.md), so it can differ from its plain cosine.")
        cands = pd.DataFrame(mt["candidates"], columns=["rank", "anchor_id", "label", "native_reason", "cosine",
                                                        "status", "kept"]).rename(columns={"cosine": "rerank_score"})
        if cands.empty:
            st.caption("No candidates.")
        else:
            if cands["rerank_score"].notna().any():
                top = cands.head(25).copy()
                bars = alt.Chart(top).mark_bar().encode(
                    x=alt.X("rerank_score:Q", title="rerank score (cosine to the question; events add more, above)"),
                    y=alt.Y("label:N", sort=list(top["label"]), title=None),
                    color=alt.Color("status:N", scale=alt.Scale(
                        domain=["kept", "temporal slot", "below sigma", "beyond K"],
                        range=["#54A24B", "#F58518", "#BAB0AC", "#9ecae9"])),
                    tooltip=["anchor_id:N", "native_reason:N", "rerank_score:Q", "status:N"])
                rule = alt.Chart(pd.DataFrame({"sigma": [sigma]})).mark_rule(
                    color="#E45756", strokeDash=[5, 3]).encode(x="sigma:Q")
                st.altair_chart((bars + rule).properties(height=max(120, 22 * len(top))), width="stretch")
            st.dataframe(cands, hide_index=True, width="stretch", key="playground_candidates")


def _expansions(trace: dict) -> None:
    if trace["expansions"]:
        labels = {c["anchor_id"]: c["label"] for mo in trace["modules"].values() for c in mo["candidates"]}
        brought = pview.expansion_yield(trace)
        st.dataframe([{"#": i + 1, "query": e["query"], "module": e["module"],
                       "from anchor": labels.get(e["anchor_id"], e["anchor_id"]),
                       "new memories in the prompt": brought.get(i + 1, 0)}
                      for i, e in enumerate(trace["expansions"])], hide_index=True, width="stretch",
                     key="playground_expansions")
    else:
        st.caption("No expansion queries (expansion is off, or no anchor was kept).")


def _injected_lines(trace: dict) -> None:
    if trace["blocks"]:
        b = st.columns(len(trace["blocks"]))
        for col, block in zip(b, trace["blocks"]):
            col.metric(block["title"], f"{block['tokens']} tokens")
        rows = [{"block": block["title"], "anchor": ln["anchor_id"], "field": ln["field"], "line": ln["text"],
                 pview.LINE_SCORE: ln["score"], "temporal slot": ln["pinned"], "sources": ", ".join(ln["source_ids"])}
                for block in trace["blocks"] for ln in block.get("lines", [])]
        if rows:
            st.caption("What Gravity added, line by line: each line's score (its cosine with the question plus the "
                       "share of the question's words it holds; lines are packed best first within the anchor budget) "
                       "and the utterances it cites")
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="playground_lines")


def _full_prompts(trace: dict) -> None:
    p1, p2 = st.columns(2)
    with p1:
        st.caption(f"Without Gravity · {trace['prompt_without']['tokens']} tokens")
        st.code(trace["prompt_without"]["text"], language=None, wrap_lines=True)
    with p2:
        st.caption(f"With Gravity · {trace['prompt_with']['tokens']} tokens")
        st.code(trace["prompt_with"]["text"], language=None, wrap_lines=True)


def _changes_table(changes: dict) -> list[dict]:
    """One row per change, in the order a reader wants them: anchor lines (best first), memories brought by
    expansion, the host's memories pushed out."""
    rows = [{"change": "+ anchor" + (" (slot)" if r["pinned"] else ""), "line": r["text"],
             "date": r["date"], pview.LINE_SCORE: r["score"], "from": f"{r['kind']} · {r['anchor']}",
             "source_ids": r["source_ids"]} for r in changes["added"]]
    rows += [{"change": "+ memory", "line": r["text"], "date": r["date"], pview.LINE_SCORE: None,
              "from": r["why"], "source_ids": r["source_ids"]} for r in changes["expansion"]]
    rows += [{"change": "− pushed out", "line": r["text"], "date": r["date"], pview.LINE_SCORE: None,
              "from": f"the host's hit #{r['rank']}", "source_ids": r["source_ids"]} for r in changes["pushed"]]
    return rows


llm_cfg = None
llm_problem = None
try:
    llm_cfg = llm_config()
except GravityError as err:
    llm_problem = str(err)

questions = studio.questions_for(store)
with st.container(border=True):
    if questions:
        picks = ["(type your own question)"] + [q["question"] for q in questions]
        pick = st.selectbox(f"Benchmark questions with gold answers ({len(questions)})", picks,
                            key="playground_pick")
        if pick != picks[0] and st.session_state.get("playground_last_pick") != pick:
            st.session_state["playground_query"] = pick
            known = next((q for q in questions if q["question"] == pick), None)
            st.session_state["playground_gold_input"] = "" if known is None else str(known.get("answer") or "")
        st.session_state["playground_last_pick"] = pick
    q1, q2 = st.columns([3, 2])
    question = q1.text_input("Question", key="playground_query",
                             placeholder="e.g. When did the model invent a drug dose?")
    typed_gold = q2.text_input("Gold answer (optional)", key="playground_gold_input",
                               placeholder="type one to check both contexts against it",
                               help="Filled in for a benchmark question; type your own to check any question.")
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1], vertical_alignment="bottom")
    host_names = selectable_hosts()
    blocked = {h: studio.host_unavailable(h, llm_cfg) for h in host_names}
    host_name = c1.selectbox("Host", host_names, key="playground_host",
                             format_func=lambda h: h + (" (needs a model endpoint)" if blocked.get(h) else ""),
                             help="The memory system Gravity sits beside (built-in hosts work offline).")
    variant = c2.selectbox("Variant", list(VARIANTS), key="playground_variant",
                           format_func=lambda v: variant_label(v, store, MODEL_WRITTEN if llm_cfg else None),
                           help="full = +EVT; +E/+V/+T single modules; -rrk no rerank; -exp no expansion; "
                                "+Sum free-form summaries in the same slot.")
    with c3.popover("Parts", icon=":material/tune:", help="Switch parts of Gravity off to see their effect"):
        use_e = st.toggle("Entities", True, key="playground_use_entities")
        use_v = st.toggle("Events", True, key="playground_use_events")
        use_t = st.toggle("Topics", True, key="playground_use_topics")
        use_x = st.toggle("Expansion", True, key="playground_use_expansion")
        use_r = st.toggle("Temporal slots", True, key="playground_use_temporal")
    ask_clicked = c4.button("Ask", type="primary", key="playground_ask", icon=":material/send:", width="stretch",
                            disabled=not question.strip() or bool(blocked.get(host_name)))
    if not blocked.get(host_name) and host_name not in LLM_AT_INGEST:
        studio.host_in_background(store, host_name)  # index while the question is typed
    if blocked.get(host_name):
        st.warning(f"{blocked[host_name]}.", icon=":material/block:")
        st.page_link("app_pages/settings.py", label="Open Settings", icon=":material/settings:")
    model_warning = describe_model(llm_cfg).warning if llm_cfg is not None else None
    if model_warning:
        st.warning(model_warning, icon=":material/warning:")
    if llm_problem:
        st.error(f"The model settings cannot be used: {llm_problem}")
        st.page_link("app_pages/settings.py", label="Fix them in Settings", icon=":material/settings:")

gold = next((q for q in questions if q["question"] == question), None)

if ask_clicked and question.strip():
    from gravity_engine.query.pipeline import ask

    st.session_state.pop("playground_llm_error", None)
    try:
        cfg = query_config(variant)
        wanted = tuple(m for m, on in (("entities", use_e), ("events", use_v), ("topics", use_t)) if on)
        cfg = cfg.with_(modules=tuple(m for m in cfg.selection.modules if m in wanted),
                        expand=cfg.expansion.expand and use_x,
                        temporal_preservation=cfg.temporal.temporal_preservation and use_r)
        llm = None
        if llm_cfg is not None:
            from gravity_engine.llm import OpenAIClient

            # One attempt: the page waits at most the configured timeout, then shows what it has offline.
            llm = OpenAIClient(llm_cfg.model_copy(update={"max_retries": 0}))
        host = _host(host_name, llm_cfg if host_name in LLM_AT_INGEST else None)
        qdate = (gold or {}).get("question_date")
        with st.spinner("Asking…"):
            try:
                result = ask(store, host, question.strip(), cfg, question_date=qdate, llm=llm,
                             gravity=_gravity(*store_key))
            except GravityError as err:
                if llm is None:
                    raise
                # The endpoint failed: everything but the answers is computed offline, so show that beside the error.
                st.session_state["playground_llm_error"] = studio.message_for_people(err)
                result = ask(store, host, question.strip(), cfg, question_date=qdate, llm=None,
                             gravity=_gravity(*store_key))
        st.session_state["playground_result"] = json.loads(result.trace.to_json())
        st.session_state["playground_store"] = store_key
        local = getattr(llm_cfg, "local_model", None)  # a GGUF file behind a local llama.cpp server
        st.session_state["playground_endpoint"] = None if llm_cfg is None else (
            llm_cfg.endpoint_label() + (f" (local model file {local.name})" if local else ""))
    except GravityError as err:
        st.error(str(err))

trace = st.session_state.get("playground_result")
if not trace or st.session_state.get("playground_store") != store_key:
    st.caption("Ask a question to see what Gravity adds to the host's prompt, where each memory came from, whether "
               "each context holds the gold answer, and every step of the trace.")
    st.stop()

answers = trace["answers"]
# The gold answer is read at every rerun: typing one checks the contexts already asked, no new question needed.
same_question = question.strip() == trace["question"]
gold_answer = (typed_gold.strip() or str((gold or {}).get("answer") or "").strip() or None) if same_question else None
answered = answers.get("status") == "answered"
llm_error = st.session_state.get("playground_llm_error")
if llm_error:
    st.error(f"The model endpoint failed, so there are no answers; everything else below is computed offline. "
             f"{llm_error}", icon=":material/cloud_off:")
elif answered:
    where = st.session_state.get("playground_endpoint")
    st.caption(f"Answered by **{answers.get('model') or 'the configured model'}**"
               + (f" at {where}" if where else "") + " · the same model and prompt wording on both sides.")
else:
    st.caption("**No model answer** (no endpoint set: a local server works offline, see Settings). The verdicts "
               "read the two contexts themselves.")
people = [e.name for e in store.anchors.entities if (e.type or "").lower() == "person"]
diff = None if gold_answer else pview.differences(trace, people)
a1, a2, a3 = st.columns([2, 2, 1])
for col, side, title in ((a1, "without", "Host alone"), (a2, "with", "Host + Gravity")):
    prompt = trace["prompt_without" if side == "without" else "prompt_with"]["text"]
    with col:
        if gold_answer:
            from gravity_engine.eval.coverage import context_covers

            st.html(pview.coverage_badge_html(context_covers(gold_answer, prompt), title))
        elif side == "with":
            st.html(pview.differences_html(diff))
        else:
            st.html(f'<div class="gs-cover gs-cover-na">{title}: the host\'s own memories</div>')
        if answered:
            st.html(f'<div class="gs-answer">{html.escape(answers.get(side) or "")}</div>')
with a3:
    st.html(f'<div class="gs-answer"><b>Gold:</b> {html.escape(gold_answer)}</div>' if gold_answer
            else '<div class="gs-answer gs-answer-none">no gold answer: type one above to check both contexts</div>')

top = pview.top_hit_pushed_out(trace)
pushed = trace.get("pushed_out") or []
if top is not None:
    st.error(f"Fusion demoted the host's top hit out of the prompt with Gravity: “{top['text'][:300]}”. "
             "If it held the answer, Gravity cost this question; see the struck-through lines below.",
             icon=":material/warning:")

changes = pview.what_changed(trace, store.anchors, store.conversation)
table = _changes_table(changes)
st.subheader(f"What Gravity changed: {len(changes['added'])} anchor lines, {len(changes['expansion'])} memories from "
             f"expansion, {len(changes['pushed'])} of the host's pushed out", anchor=False)
if table:
    picked = st.dataframe(
        pd.DataFrame(table).drop(columns=["source_ids"]), hide_index=True, width="stretch", key="playground_changes",
        on_select="rerun", selection_mode="single-row", height=min(36 + 35 * len(table), 282),
        column_config={"change": st.column_config.TextColumn(width="small", help="+ anchor: an anchor line Gravity "
                                                             "added ((slot): in a temporal slot); + memory: brought by "
                                                             "an expansion query; − pushed out: the host's own"),
                       "line": st.column_config.TextColumn(width="large"),
                       "date": st.column_config.TextColumn(width="small"),
                       pview.LINE_SCORE: st.column_config.NumberColumn(format="%.2f", help=pview.line_score_help(trace)),
                       "from": st.column_config.TextColumn(width="medium")})
    chosen_rows = (picked.selection.rows if picked is not None and hasattr(picked, "selection") else []) or []
    if chosen_rows:
        quote_table(store, table[chosen_rows[0]]["source_ids"], key="playground_change_quotes")
    else:
        st.caption("Select a row to read the utterances it comes from. " + pview.LINE_SCORE.capitalize() + ": "
                   + pview.line_score_help(trace) + ".")
else:
    st.caption("Gravity changed nothing in this prompt (no anchor was kept and no expansion brought a memory).")

rows = pview.classify_prompt(trace)
n = pview.diff_counts(rows)
with st.expander(f"The prompt, line by line ({n['anchor']} anchor lines, {n['expansion']} memories brought by "
                 f"expansion, {n['removed']} pushed out)", expanded=False):
    st.caption("Green: anchor lines, with the anchor and field each comes from; blue: memories brought by expansion "
               "queries, with the query and anchor; red, struck through: host memories pushed out; grey: unchanged, "
               "long runs folded.")
    st.html(pview.prompt_diff_html(rows))

with st.expander("Details: evidence, memories, anchors per module, expansion queries, both prompts, timings",
                 expanded=False):
    if not answered:
        e1, e2 = st.columns(2)
        for col, side in ((e1, "without"), (e2, "with")):
            prompt = trace["prompt_without" if side == "without" else "prompt_with"]["text"]
            col.caption(f"Evidence preview, {'host alone' if side == 'without' else 'host + Gravity'}: the context "
                        "lines that best support an answer")
            with col:
                st.html(pview.evidence_html(pview.evidence(prompt, trace["question"], gold_answer)))
    tm = trace["timings_ms"]
    m = st.columns(4)
    m[0].metric("Gravity query path", f"{tm.get('query_path', 0):.0f} ms")
    m[1].metric("Host search", f"{tm.get('host_search', 0):.0f} ms",
                help="A host on the anchors' embedding model searches with the question's embedding, which Gravity's "
                     "path computes (and counts) once for both.")
    m[2].metric("Injected tokens", trace["injected_tokens"])
    m[3].metric("Expansion queries", len(trace["expansions"]))
    # The details sit in tabs that rerun on a switch, so an answer draws only the open one: every table and chart
    # at once made each answer slow to appear (the browser drew five grids, a chart and both prompts per question).
    DETAILS = {"Memories": _memories, "Anchors per module": _anchors, "Expansion queries": _expansions,
               "Injected anchor lines": _injected_lines, "Both prompts in full": _full_prompts}
    for draw, tab in zip(DETAILS.values(), st.tabs(list(DETAILS), key="playground_details", on_change="rerun")):
        if tab.open:
            with tab:
                draw(trace)
    st.download_button("Download the trace (JSON)", json.dumps(trace, indent=2, ensure_ascii=False),
                       f"trace-{studio.safe_name(trace['variant'])}.json", "application/json",
                       key="playground_dl_trace")
