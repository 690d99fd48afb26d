"""Build: pick or upload a conversation, choose how to extract, watch the per-batch progress, read the report."""

from __future__ import annotations

import hashlib

import streamlit as st

from app_services import studio
from gravity_engine.errors import GravityError
from gravity_engine.loaders import load_bytes, load_conversations
from gravity_engine.store import AnchorStore
from app_pages._ui import llm_config, md_escape

st.title("Build anchors")


@st.cache_resource
def _jobs() -> dict[str, studio.BuildJob]:
    """Builds of this server process by output folder: they survive a page reload."""
    return {}


@st.cache_data(max_entries=8, show_spinner="Reading the conversation…")
def _load_upload(digest: str, data: bytes, filename: str):
    return load_bytes(data, filename)


@st.cache_data(max_entries=8, show_spinner="Reading the conversation file…")
def _load_path(path: str, mtime: float):
    return load_conversations(path)


def _pick_source():
    """The conversations of the chosen source, or None (with the reason shown) when there are none yet."""
    sources = ["Sample conversation", "Upload a file"]
    bench = studio.benchmark_files()
    if bench:
        sources.append("Benchmark item (../shared/data)")
    kind = st.radio("Conversation", sources, horizontal=True, key="build_source")
    try:
        if kind == "Upload a file":
            up = st.file_uploader("Conversation file", key="build_upload",
                                  help="LoCoMo or LongMemEval JSON, JSON/JSONL/CSV with speaker and text columns, "
                                       "a plain-text transcript, or a ChatGPT export (conversations.json).")
            if up is None:
                return None
            problem = studio.upload_problem(up.size)
            if problem:
                st.error(problem, icon=":material/block:")
                return None
            st.caption(f"{md_escape(up.name)} · {studio.size_text(up.size)} (the app takes up to "
                       f"{studio.max_upload_mb():g} MB)")
            data = up.getvalue()
            return _load_upload(hashlib.sha256(data).hexdigest(), data, up.name)
        if kind == "Sample conversation":
            samples = studio.sample_conversations()
            if not samples:
                st.info("No sample conversation is shipped in sample_data/.")
                return None
            path = st.selectbox("Sample", samples, format_func=lambda p: p.name, key="build_sample")
            return _load_path(str(path), path.stat().st_mtime)
        label = st.selectbox("Benchmark file", list(bench), key="build_bench_file")
        return _load_path(str(bench[label]), bench[label].stat().st_mtime)
    except GravityError as err:
        st.error(studio.message_for_people(err))
        return None


conversations = _pick_source()
if not conversations:
    st.stop()
if len(conversations) > 1:
    ids = [c.id for c in conversations]
    chosen = st.selectbox(f"{len(conversations)} conversations in this file", ids, key="build_conversation")
    conversation = conversations[ids.index(chosen)]
else:
    conversation = conversations[0]

m = st.columns(4)
m[0].metric("Sessions", len(conversation.sessions))
m[1].metric("Utterances", conversation.n_utterances())
m[2].metric("Speakers", len(conversation.speakers))
m[3].metric("Questions", len(conversation.questions))
if conversation.warnings:
    with st.expander(f"Loader notes ({len(conversation.warnings)})"):
        for w in conversation.warnings[:50]:
            st.text(w)

st.subheader("Options", anchor=False)
o1, o2, o3 = st.columns(3)
backend = o1.radio("Backend", ["classic", "llm"], horizontal=True, key="build_backend",
                   help="classic: offline NLP (spaCy, dateparser, clustering), no key. llm: the paper's extractors "
                        "through the endpoint set in Settings.")
batch_size = o2.number_input("Batch size (utterances)", 1, 200, 20, key="build_batch_size")
modules = o3.multiselect("Modules", ["entities", "events", "topics"], default=["entities", "events", "topics"],
                         key="build_modules")
fused = True
model = None
if backend == "llm":
    l1, l2 = st.columns(2)
    fused = l1.toggle("Fused extraction (one call per batch)", value=True, key="build_fused")
    model = l2.text_input("Model", value=st.session_state["llm_settings"]["model"], key="build_model")
name = st.text_input("Store name", value=studio.safe_name(conversation.id), key=f"build_name_{conversation.id}")
out_dir = studio.workspace_dir() / studio.safe_name(name or conversation.id)
exists = studio.is_store(out_dir)
update = False
if exists:
    update = st.toggle("Update the existing store with new sessions only", value=True, key="build_update",
                       help="Off: rebuild from scratch into the same folder (finished batches are reused from "
                            "checkpoints).")
pending = studio.pending_checkpoints(out_dir)
if pending and not exists:
    st.info(f"{pending} batches of an earlier, unfinished build are checkpointed in {out_dir.name}: starting "
            "again resumes from them.")

try:
    from gravity_engine.build import estimate_build

    est = estimate_build(conversation, backend, int(batch_size), fused, model, modules=modules)
except GravityError as err:
    est = None
    st.error(studio.message_for_people(err))
if est:
    e = st.columns(4)
    e[0].metric("Batches", est["batches"])
    e[1].metric("LLM calls", est["calls"])
    e[2].metric("Prompt tokens (est.)", f"{est['prompt_tokens']:,}")
    e[3].metric("Time (est.)", studio.duration_text(est["est_seconds"]))
long_build = bool(est) and est["est_seconds"] > studio.LONG_BUILD_SECONDS
confirmed = True
if long_build:
    confirmed = st.checkbox(f"Start a build of about {studio.duration_text(est['est_seconds'])} (it runs in the "
                            "background and can be cancelled; finished batches are kept)", key="build_confirm_long")

jobs = _jobs()
job = jobs.get(str(out_dir))
running = job is not None and job.running
if st.button("Build", type="primary", disabled=running or not modules or not confirmed, key="build_start",
             icon=":material/play_arrow:"):
    options = {"backend": backend, "batch_size": int(batch_size), "modules": tuple(modules), "fused": fused,
               "update": update,
               "embedding_model": st.session_state.get("embedding_model") or "all-MiniLM-L6-v2"}
    try:
        if backend == "llm":
            cfg = llm_config()
            if cfg is None:
                raise GravityError("the llm backend needs an endpoint: set it on the Settings page "
                                   "(or GRAVITY_LLM_BASE_URL / GRAVITY_LLM_API_KEY)")
            options["llm_config"] = cfg.model_copy(update={"model": model}) if model else cfg
    except GravityError as err:
        st.error(studio.message_for_people(err))
    else:
        job = jobs[str(out_dir)] = studio.start_build(conversation, out_dir, **options)
        st.session_state["build_job_dir"] = str(out_dir)


def _progress(job: studio.BuildJob) -> None:
    frac, text = job.describe()
    st.progress(frac, text=text)
    p = job.progress
    if p is not None and p.counts:
        c = st.columns(3)
        for col, mod in zip(c, ("entities", "events", "topics")):
            col.metric(f"{mod} found", p.counts.get(mod, 0))


def _report(store: AnchorStore) -> None:
    rep = store.report
    b = rep.get("batches", {})
    st.markdown("#### Build report")
    r = st.columns(5)
    r[0].metric("Batches", b.get("total", 0))
    r[1].metric("From checkpoints", b.get("from_checkpoint", 0))
    r[2].metric("Failed batches", len(b.get("failed", [])))
    ver = rep.get("verification") or {}
    share = ver.get("share")
    r[3].metric("Fields verified", f"{share:.0%}" if isinstance(share, (int, float)) else "–")
    llm = (rep.get("llm") or {}).get("total", {})
    r[4].metric("LLM calls", llm.get("calls", 0))
    if llm:
        st.caption(f"Prompt tokens {llm.get('prompt_tokens', 0):,} · completion tokens "
                   f"{llm.get('completion_tokens', 0):,}")
    if b.get("failed"):
        st.warning("Some batches failed; build again to retry only those.")
        st.dataframe(b["failed"], hide_index=True, width="stretch")
    with st.expander("Full report (JSON)"):
        st.json(rep, expanded=False)


def _open_store(path: str) -> None:
    st.session_state["store_path"] = path


def _job_view(job: studio.BuildJob) -> None:
    """Progress while the build runs; then its outcome. Polled as a fragment while running."""
    if job.running:
        _progress(job)
        if st.button("Cancel", key="build_cancel", icon=":material/stop:"):
            job.cancel()
            st.toast("Cancelling after the current batch; finished batches are kept.")
    elif job.error:
        (st.warning if job.cancelled else st.error)(job.error)
        st.caption("Batches finished before this point are checkpointed; press Build to resume.")
    elif job.store_path is not None:
        built = AnchorStore.load(job.store_path)
        counts = built.anchors.counts()
        st.success(f"Built {counts['entities']} entities, {counts['events']} events, {counts['topics']} topics.")
        if st.session_state.get("store_path") != str(job.store_path):
            # A callback, then a full rerun: the sidebar and every page switch to the new store.
            if st.button("Open this store", type="primary", key="build_open"):
                _open_store(str(job.store_path))
                st.rerun(scope="app")
        _report(built)


watched = jobs.get(st.session_state.get("build_job_dir", "")) or job
if watched is not None:
    st.subheader(f"Build of {md_escape(watched.out_dir.name)}", anchor=False)
    # While the build runs the view refreshes itself every second; once it is over it is drawn once.
    st.fragment(_job_view, run_every=1.0 if watched.running else None)(watched)
