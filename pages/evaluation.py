"""Evaluation: the LLM-free measures over a slice of the store's benchmark questions, per category."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from gravity_engine import studio
from gravity_engine.conversation import Question
from gravity_engine.errors import GravityError
from pages._ui import llm_config, load_store, query_config, require_store, selectable_hosts, store_embedder

st.title("Evaluation")
st.caption("LLM-free measures: evidence recall@k of the host with and without expansion queries, answer coverage "
           "(every gold-answer token in the context) at the same token budget, and temporal grounding.")
store = require_store()
store_key = (str(store.path), studio.store_mtime(store.path))

items = studio.questions_for(store)
if not items:
    st.info("This store's conversation has no benchmark questions with gold answers. Build a LoCoMo or "
            "LongMemEval conversation (Build page), or open the sample store, which ships 30 questions.")
    st.stop()
questions = [Question.model_validate({**q, "category": str(q.get("category", ""))}) for q in items]
fmt = store.conversation.format if store.conversation else ""
dataset = fmt if fmt in ("locomo", "longmemeval") else "sample"

cats = sorted({q.category for q in questions})
with st.container(border=True):
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    chosen = c1.multiselect("Categories", cats, default=cats, key="evaluation_categories")
    pool = [q for q in questions if q.category in chosen]
    limit = c2.number_input("Questions (max)", 1, max(1, len(pool)), min(len(pool), 50) or 1,
                            key="evaluation_limit")
    host_names = c3.multiselect("Hosts", selectable_hosts(), default=["dense"], key="evaluation_hosts",
                                help="Each host ingests the conversation once; all share the same anchors.")
    budget = c4.number_input("Token budget", 200, 8000, 1000, step=100, key="evaluation_budget")
    go = st.button(f"Run on {min(int(limit), len(pool))} questions", type="primary", key="evaluation_run",
                   disabled=not pool or not host_names, icon=":material/play_arrow:")

if go:
    from gravity_engine.measure import MeasureSettings
    from gravity_engine.measure_hosts import measure_store_hosts

    bar = st.progress(0.0, text="Measuring…")
    note = st.empty()
    try:
        s = load_store(*store_key)
        report = measure_store_hosts(
            s, pool[: int(limit)], host_names, dataset=dataset,
            settings=MeasureSettings(budget=int(budget), config=query_config("full")), embedder=store_embedder(s),
            llm=llm_config(), progress=lambda d, t: bar.progress(d / max(t, 1), text=f"{d} of {t} (question × host)"),
            status=lambda text: note.caption(text))
    except GravityError as err:
        st.error(str(err))
    else:
        st.session_state["evaluation_summary"] = report.summary_rows()
        st.session_state["evaluation_rows"] = {r.spec.name: [row.model_dump() for row in r.rows] for r in report.results}
        st.session_state["evaluation_notes"] = report.notes() + [f"{h}: {why}" for h, why in
                                                                 {**report.skipped, **report.failed}.items()]
        st.session_state["evaluation_store"] = store_key
    bar.empty()
    note.empty()

by_host = st.session_state.get("evaluation_rows")
if not isinstance(by_host, dict) or not by_host or st.session_state.get("evaluation_store") != store_key:
    st.stop()

from gravity_engine.measure import MeasureRow, summarize  # noqa: E402

for line in st.session_state.get("evaluation_notes", []):
    st.caption(line)
if len(by_host) > 1:
    st.subheader("Hosts side by side", anchor=False)
    st.dataframe(pd.DataFrame(st.session_state["evaluation_summary"])[
        ["host", "n", "recall_host", "recall_expanded", "coverage_host", "coverage_gravity", "coverage_delta",
         "temporal_grounding", "gravity_ms_p50", "host_search_ms_p50", "ratio", "llm_at_ingest"]],
        hide_index=True, width="stretch",
        column_config={
            "n": "questions",
            "recall_host": st.column_config.NumberColumn("recall@k alone", format="percent"),
            "recall_expanded": st.column_config.NumberColumn("recall@k + expansion", format="percent"),
            "coverage_host": st.column_config.NumberColumn("coverage alone", format="percent"),
            "coverage_gravity": st.column_config.NumberColumn("coverage + Gravity", format="percent"),
            "coverage_delta": st.column_config.NumberColumn("Δ coverage", format="percent"),
            "temporal_grounding": st.column_config.NumberColumn("temporal grounding", format="percent"),
            "gravity_ms_p50": st.column_config.NumberColumn("Gravity p50 ms", format="%.1f"),
            "host_search_ms_p50": st.column_config.NumberColumn("host search p50 ms", format="%.1f"),
            "ratio": st.column_config.NumberColumn("Gravity / host time", format="%.2f×"),
            "llm_at_ingest": "LLM at ingest"})
shown_host = st.selectbox("Details for host", list(by_host), key="evaluation_detail_host") if len(by_host) > 1 \
    else next(iter(by_host))
data = by_host[shown_host]
rows = [MeasureRow.model_validate(r) for r in data]
summary = pd.DataFrame(summarize(rows))
overall = summary[summary["category"].str.startswith("overall")].iloc[0]
m = st.columns(4)
m[0].metric("Questions", int(overall["n"]))
m[1].metric("Coverage, host alone", f"{overall['coverage_host'] or 0:.0%}")
m[2].metric("Coverage, host + Gravity", f"{overall['coverage_gravity'] or 0:.0%}",
            delta=f"{((overall['coverage_gravity'] or 0) - (overall['coverage_host'] or 0)) * 100:+.0f} pts")
m[3].metric("Recall@k, with expansion", f"{overall['recall_expanded'] or 0:.0%}",
            delta=f"{((overall['recall_expanded'] or 0) - (overall['recall_host'] or 0)) * 100:+.0f} pts")

long = summary.melt(id_vars=["category"], value_vars=["coverage_host", "coverage_gravity", "recall_host",
                                                        "recall_expanded"], var_name="measure", value_name="value")
long["what"] = long["measure"].map({"coverage_host": "coverage", "coverage_gravity": "coverage",
                                    "recall_host": "recall@k", "recall_expanded": "recall@k"})
long["setting"] = long["measure"].map({"coverage_host": "host alone", "coverage_gravity": "host + Gravity",
                                       "recall_host": "host alone", "recall_expanded": "host + Gravity"})
chart = alt.Chart(long.dropna()).mark_bar().encode(
    x=alt.X("setting:N", title=None, sort=["host alone", "host + Gravity"], axis=alt.Axis(labels=False, ticks=False)),
    y=alt.Y("value:Q", title=None, axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
    color=alt.Color("setting:N", scale=alt.Scale(domain=["host alone", "host + Gravity"], range=["#9aa5b1", "#4C78A8"]),
                    legend=alt.Legend(orient="top")),
    column=alt.Column("category:N", title=None), row=alt.Row("what:N", title=None),
    tooltip=["category:N", "setting:N", alt.Tooltip("value:Q", format=".0%")],
).properties(width=90, height=140)
st.altair_chart(chart)
st.dataframe(summary, hide_index=True, width="stretch")

frame = pd.DataFrame(data)
changed = frame[frame["covered_host"].notna() & (frame["covered_host"] != frame["covered_gravity"])].copy()
changed["effect"] = changed["covered_gravity"].map({True: "gains the gold answer", False: "loses the gold answer"})
st.subheader(f"Questions where Gravity changes coverage ({len(changed)})", anchor=False)
if changed.empty:
    st.caption("None in this slice.")
else:
    st.dataframe(changed[["effect", "category_label", "question", "gold", "recall_host", "recall_expanded",
                          "anchor_tokens"]], hide_index=True, width="stretch")
st.download_button("Download all rows (CSV)", frame.to_csv(index=False), "gravity-measures.csv", "text/csv",
                   key="evaluation_dl_csv")
