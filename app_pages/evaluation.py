"""Evaluation: the LLM-free measures over a seeded slice of the store's benchmark questions, per category, with
bootstrap intervals; runs in the background (progress, cancel, resume; reruns and page switches keep it)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from app_services import studio
from gravity_engine.conversation import Question
from gravity_engine.errors import GravityError
from gravity_engine.eval.statistics import SLICES, sample_slice
from gravity_engine.viz import evaluation as eviz
from app_pages._ui import llm_config, query_config, require_store, selectable_hosts, store_embedder

st.title("Evaluation")
st.caption("LLM-free measures: whether the context holds the gold answer (at the same token budget with and without "
           "Gravity), evidence recall@k of the host with and without expansion queries, per question category, each "
           "with a 95% bootstrap interval. Answer accuracy needs a model to answer and a judge: the `evaluate` "
           "command (docs/judging.md).")
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

from gravity_engine.eval.summary import plain_category, summarize_with_intervals  # noqa: E402

try:
    llm_cfg = llm_config()
except GravityError:
    llm_cfg = None
cats = sorted({q.category for q in questions})
slice_names = {"stratified": "Stratified by category (seeded)", "random": "Random (seeded)",
               "first": "The first questions in file order"}
with st.container(border=True):
    c1, c2, c3 = st.columns([3, 2, 2])
    chosen = c1.multiselect("Categories", cats, default=cats, key="evaluation_categories",
                            format_func=lambda c: plain_category(c, dataset))
    pool = [q for q in questions if q.category in chosen]
    how = c2.selectbox("Slice", list(SLICES), key="evaluation_slice", format_func=slice_names.get,
                       help="Stratified keeps each category's share of the questions (each at least once); random "
                            "draws evenly; both are reproducible with the seed.")
    seed = c3.number_input("Seed", 0, 10_000, 0, key="evaluation_seed")
    c4, c5, c6 = st.columns([3, 2, 2])
    limit = c4.number_input(f"Questions (of {len(pool)})", 1, max(1, len(pool)), min(len(pool), 50) or 1,
                            key="evaluation_limit")
    blocked = {h: studio.host_unavailable(h, llm_cfg) for h in selectable_hosts()}
    host_names = c5.multiselect("Hosts", [h for h in blocked if not blocked[h]], default=["dense"],
                                key="evaluation_hosts",
                                help="Each host ingests the conversation once; all share the same anchors.")
    budget = c6.number_input("Token budget", 200, 8000, 1000, step=100, key="evaluation_budget")
    for h, why in blocked.items():
        if why:
            st.caption(f"{h} is unavailable: {why}.")
    if any(blocked.values()):
        st.page_link("app_pages/settings.py", label="Set a model endpoint in Settings", icon=":material/settings:")
    slice_ = sample_slice(pool, int(limit), how, int(seed))
    job: studio.EvaluationJob | None = st.session_state.get("evaluation_job")
    busy = job is not None and job.running
    go = st.button(eviz.run_label([q.category for q in slice_], dataset), type="primary", key="evaluation_run",
                   disabled=not slice_ or not host_names or busy, icon=":material/play_arrow:")

if go:
    from gravity_engine.eval.measure import MeasureSettings

    config = query_config("full").with_(total=int(budget))
    job = studio.EvaluationJob(store=store, questions=slice_, hosts=list(host_names), dataset=dataset,
                               settings=MeasureSettings(config=config, budget=config.budget),
                               embedder=store_embedder(store), llm_config=llm_cfg).start()
    st.session_state["evaluation_job"] = job
    st.session_state["evaluation_store"] = store_key
    st.session_state["evaluation_slice_text"] = (
        f"{'the first' if how == 'first' else how + ' slice of'} {len(slice_)} of {len(pool)} questions"
        + ("" if how == "first" else f", seed {seed}") + f", {budget} tokens of context, hosts: {', '.join(host_names)}")

job = st.session_state.get("evaluation_job")
if job is None or st.session_state.get("evaluation_store") != store_key:
    st.stop()


def _progress(job: studio.EvaluationJob) -> None:
    """Progress while the job runs (polled every second), then its outcome; a finished view is drawn once."""
    if job.running:
        st.progress(min(1.0, job.done / max(job.total, 1)), text=f"{job.done} of {job.total} (question × host) · "
                                                                    f"{job.status}")
        if st.button("Cancel", key="evaluation_cancel", icon=":material/stop:"):
            job.cancel()
            st.toast("Stopping after the current few questions; finished rows are kept.")
        return
    if job.error:
        st.error(job.error)
    for host, why in job.failed.items():
        st.warning(f"{host}: {why}")
    if job.done < job.total and not job.error:
        st.info(f"{'Cancelled' if job.cancelled else 'Stopped'} after {job.done} of {job.total} (question × host); "
                "the results below are partial.")
        if st.button("Resume", key="evaluation_resume", icon=":material/play_arrow:"):
            job.resume()
            st.rerun()
    if job.finished and (st.session_state.get("evaluation_drawn") != job.finished):
        st.session_state["evaluation_drawn"] = job.finished
        st.rerun(scope="app")  # draw the results below once the job is over


st.caption(f"This run: {st.session_state.get('evaluation_slice_text', '')}.")
st.fragment(_progress, run_every=1.0 if job.running else None)(job)

by_host = {h: rows for h, rows in job.rows.items() if rows}
if not by_host:
    st.stop()

shown_host = st.selectbox("Details for host", list(by_host), key="evaluation_detail_host") if len(by_host) > 1 \
    else next(iter(by_host))
rows = by_host[shown_host]


def _pct(iv) -> str:
    return "–" if iv.value is None else f"{iv.value:.0%}"


def _range(iv, signed: bool = False) -> str:
    if iv.value is None:
        return "–"
    f = (lambda v: f"{v * 100:+.0f}") if signed else (lambda v: f"{v * 100:.0f}")
    return f"{f(iv.value)}{'' if signed else '%'}  ({f(iv.low)} to {f(iv.high)}{' pts' if signed else '%'})"


if len(by_host) > 1:
    st.subheader("Hosts side by side", anchor=False)
    side = []
    for h, hr in by_host.items():
        total = summarize_with_intervals(hr, dataset, seed=int(seed))[-1]
        side.append({"host": h, "questions": total["n"], "coverage alone": _range(total["coverage_host"]),
                     "coverage + Gravity": _range(total["coverage_gravity"]),
                     "gain (points)": _range(total["coverage_gain"], signed=True),
                     "recall@k alone": _pct(total["recall_host"]), "recall@k + expansion": _pct(total["recall_expanded"])})
    st.dataframe(pd.DataFrame(side), hide_index=True, width="stretch", key="evaluation_hosts_table")

summary = summarize_with_intervals(rows, dataset, seed=int(seed))
overall = summary[-1]
head = eviz.headline(summary, [r.category for r in rows], dataset)
st.subheader(eviz.MEASURE_NAME, anchor=False)
st.caption(eviz.MEASURE_EXPLAINED + " " + head["counts"] + ".")
m = st.columns(4)
m[0].metric("Questions in the total", head["n"], help=head["counts"])
m[1].metric("Host alone", _pct(overall["coverage_host"]), help="holds the gold answer, " + head["counts"])
m[2].metric("Host + Gravity", _pct(overall["coverage_gravity"]),
            delta=f"{overall['coverage_gain'].value * 100:+.0f} pts" if head["show_gain"]
            and overall["coverage_gain"].value is not None else None, help="holds the gold answer, " + head["counts"])
gain = overall["coverage_gain"]
if head["show_gain"]:
    m[3].metric("Gain, 95% interval", "–" if gain.low is None else f"{gain.low * 100:+.0f} … {gain.high * 100:+.0f}",
                help="Points, paired bootstrap over the questions (2,000 resamples): the range the gain would likely "
                     "take on another slice of the same kind. An interval that crosses 0 does not show a gain.")
else:
    m[3].metric("Gain", "too few questions", help=head["warning"])
    st.warning(head["warning"], icon=":material/info:")
small = [s for s in summary if s["small"]]
if small:
    st.warning("Few questions in " + ", ".join(f"{s['label']} (n = {s['n']})" for s in small)
               + ": their intervals are wide and a difference there may be chance. Raise the number of questions.",
               icon=":material/info:")

table = pd.DataFrame([{
    "category": s["label"], "questions": s["n"], "few": "⚠ few" if s["small"] else "",
    "gold in context, alone": _range(s["coverage_host"]), "gold in context, + Gravity": _range(s["coverage_gravity"]),
    "gain (points)": _range(s["coverage_gain"], signed=True),
    "recall@k alone": _range(s["recall_host"]), "recall@k + expansion": _range(s["recall_expanded"]),
} for s in summary])
st.caption("Each cell: the share over the slice and its 95% bootstrap interval.")
st.dataframe(table, hide_index=True, width="stretch", key="evaluation_summary")

bars = pd.DataFrame([{"category": s["label"], "setting": side, "value": s[key].value, "low": s[key].low,
                      "high": s[key].high}
                     for s in summary for side, key in (("host alone", "coverage_host"),
                                                        ("host + Gravity", "coverage_gravity"))
                     if s[key].value is not None])
if not bars.empty:
    order = [s["label"] for s in summary]
    base = alt.Chart(bars).encode(
        y=alt.Y("category:N", title=None, sort=order, axis=alt.Axis(labelLimit=320)),
        yOffset=alt.YOffset("setting:N", sort=["host alone", "host + Gravity"]),
        color=alt.Color("setting:N", title=None, scale=alt.Scale(domain=["host alone", "host + Gravity"],
                                                                 range=["#9aa5b1", "#4C78A8"]),
                        legend=alt.Legend(orient="top")))
    chart = alt.layer(
        base.mark_bar().encode(x=alt.X("value:Q", title="gold answer in context (bars) and 95% interval (lines)",
                                       axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
                               tooltip=["category:N", "setting:N", alt.Tooltip("value:Q", format=".0%"),
                                        alt.Tooltip("low:Q", format=".0%"), alt.Tooltip("high:Q", format=".0%")]),
        base.mark_rule(strokeWidth=1.5).encode(x="low:Q", x2="high:Q", color=alt.value("#1f2933")),
    ).properties(height=alt.Step(16))
    st.altair_chart(chart, width="stretch")

frame = pd.DataFrame([r.model_dump() for r in rows])
changed = frame[frame["covered_host"].notna() & (frame["covered_host"] != frame["covered_gravity"])].copy()
changed["effect"] = changed["covered_gravity"].map({True: "gains the gold answer", False: "loses the gold answer"})
changed["category"] = changed["category"].map(lambda c: plain_category(c, dataset))
st.subheader(f"Questions where Gravity changes coverage ({len(changed)})", anchor=False)
if changed.empty:
    st.caption("None in this slice.")
else:
    st.dataframe(changed[["effect", "category", "question", "gold", "recall_host", "recall_expanded",
                          "anchor_tokens"]], hide_index=True, width="stretch")
st.download_button("Download all rows (CSV)", frame.to_csv(index=False), "gravity-measures.csv", "text/csv",
                   key="evaluation_dl_csv")
