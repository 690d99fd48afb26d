"""Settings: the LLM endpoint or a local model file (key kept in this browser session only, never shown back)
and the query-path knobs."""

from __future__ import annotations

import streamlit as st

from gravity_engine.errors import GravityError
from gravity_engine.llm.endpoints import JSON_MODES
from gravity_engine.llm.local_server import llama_cpp_installed, smollm2_path
from gravity_engine.llm.models import describe_model
from gravity_engine.llm.settings import PRESETS, masked_key
from gravity_engine.query.config import FULL
from app_pages._ui import llm_config, md_escape

st.title("Settings")

st.subheader("LLM endpoint", anchor=False)
st.caption("Any OpenAI-compatible server (OpenAI, Azure, vLLM, Ollama, LM Studio, llama.cpp) or a model file on "
           "this machine. The key stays in this browser session's memory only: it is never written to disk, to the "
           "store, or to the logs, and never shown back. Leave everything empty to use GRAVITY_LLM_* from the "
           "environment, or to work offline.")
llm = st.session_state["llm_settings"]
CUSTOM, LOCAL_FILE = "Custom", "Local model file"
choices = [CUSTOM, *PRESETS, LOCAL_FILE]


def _apply_preset() -> None:
    """Fill the endpoint fields from the chosen preset (a callback: widgets may be set before they are drawn)."""
    preset = PRESETS.get(st.session_state["settings_preset"])
    if preset is not None:
        st.session_state["settings_base_url"] = preset.base_url
        st.session_state["settings_json_mode"] = preset.json_mode
        st.session_state["settings_concurrency"] = preset.concurrency


def _take_key() -> None:
    """Move a typed key into the session settings and empty the box, so it is never drawn again."""
    typed = st.session_state.get("settings_api_key", "").strip()
    if typed:
        llm["api_key"] = typed
    st.session_state["settings_api_key"] = ""


test_model = smollm2_path()
# Widgets start from the session's settings (set once per visit; afterwards the widgets hold them).
for key, value in {"settings_preset": llm.get("preset") or (LOCAL_FILE if llm.get("local_model") else CUSTOM),
                   "settings_base_url": llm.get("base_url", ""), "settings_model": llm.get("model", ""),
                   "settings_local_model": llm.get("local_model") or (str(test_model) if test_model else ""),
                   "settings_json_mode": llm.get("json_mode") or "auto",
                   "settings_concurrency": int(llm.get("concurrency") or 4),
                   "settings_timeout": float(llm.get("timeout") or 120.0),
                   "settings_temperature": str(llm.get("temperature", "0"))}.items():
    st.session_state.setdefault(key, value)

kind = st.selectbox("Server", choices, key="settings_preset", on_change=_apply_preset,
                    help="Presets fill in the usual address, JSON mode and concurrency of each kind of server.")
if kind in PRESETS:
    st.caption(PRESETS[kind].note)
local_model = ""
if kind == LOCAL_FILE:
    local_model = st.text_input("GGUF model file", key="settings_local_model", placeholder="/path/to/model.gguf",
                                help="Served by llama-cpp-python on 127.0.0.1 while the app runs (started on first use, "
                                     "stopped when the app stops). Same as GRAVITY_LLM_GGUF.")
    if not llama_cpp_installed():
        st.warning("llama-cpp-python is not installed: `make local-llm` (or `pip install -r requirements-local.txt`).")
    elif test_model is not None:
        st.caption(f"A small test model is installed: `{test_model.name}` (SmolLM2-135M: plumbing, not quality).")
    base_url = model = ""
else:
    c1, c2 = st.columns(2)
    base_url = c1.text_input("Base URL", placeholder="https://api.openai.com/v1", key="settings_base_url")
    model = c2.text_input("Model", key="settings_model")
    st.text_input("API key", type="password", key="settings_api_key", on_change=_take_key,
                  placeholder="sk-… (not needed for most local servers)" if not llm.get("api_key")
                  else "a key is set; type another to replace it")
    if llm.get("api_key"):
        k1, k2 = st.columns([3, 1])
        k1.caption(f"Key in this session: {masked_key(llm['api_key'])}")
        if k2.button("Forget key", key="settings_forget_key"):
            llm["api_key"] = ""
            st.rerun()

with st.expander("Requests: JSON mode, concurrency, timeout", expanded=False):
    r1, r2, r3, r4 = st.columns(4)
    modes = ["auto", *JSON_MODES]
    json_mode = r1.selectbox("JSON mode", modes, key="settings_json_mode",
                             help="auto: json_schema first, then whatever the endpoint accepts (remembered). "
                                  "json_object_schema is llama.cpp's grammar-constrained JSON.")
    concurrency = r2.number_input("Concurrency", 1, 64, key="settings_concurrency",
                                  help="Most requests in flight; lowered automatically after timeouts.")
    timeout = r3.number_input("Timeout (s)", 1.0, 3600.0, step=10.0, key="settings_timeout",
                              help="Longest wait for the next token (the first one included). Replies are streamed: "
                                   "a long answer that keeps coming is never cut.")
    temperature = r4.text_input("Temperature", key="settings_temperature")

llm.update({"preset": kind if kind in PRESETS else "", "local_model": local_model.strip(), "base_url": base_url,
            "model": model, "json_mode": json_mode, "concurrency": int(concurrency), "timeout": float(timeout),
            "temperature": temperature})
st.session_state["llm_settings"] = llm

try:
    if kind == LOCAL_FILE and local_model.strip():
        with st.spinner("Starting the llama.cpp server for this file (once per app run)…"):
            cfg = llm_config()
    else:
        cfg = llm_config()
except GravityError as err:
    cfg = None
    st.error(str(err))
else:
    if cfg is None:
        st.info("No endpoint configured: the app works offline (answers are shown as unavailable).")
    else:
        info = describe_model(cfg)
        st.caption(f"Answers, judging and builds use **{md_escape(info.label)}**.")
        if info.warning:
            st.warning(info.warning)

if st.button("Test connection", key="settings_test", icon=":material/network_check:", disabled=cfg is None):
    from gravity_engine.llm import OpenAIClient

    with st.spinner(f"Reaching {cfg.endpoint_label()}…"):
        check = OpenAIClient(cfg).test_connection()
    (st.success if check.ok else st.error)(check.message)
    if check.models:
        st.caption("Models offered: " + ", ".join(md_escape(m) for m in check.models[:20]))

st.subheader("Embeddings", anchor=False)
st.session_state["embedding_model"] = st.text_input(
    "Embedding model for new builds", value=st.session_state["embedding_model"], key="settings_embedding_model",
              help="A sentence-transformers name or local path. The default ships inside a Python package and "
                   "loads offline. Stores keep the model they were built with.")

st.subheader("Query path", anchor=False)
st.caption("Defaults are the engine's; they apply to the playground and the evaluation.")
defaults = FULL.options()
cur = defaults | st.session_state["query_overrides"]
k1, k2, k3 = st.columns(3)
K_E = k1.number_input("K_E (entity profiles)", 0, 20, cur["K_E"], key="settings_K_E")
K_V = k2.number_input("K_V (event records)", 0, 30, cur["K_V"], key="settings_K_V")
K_T = k3.number_input("K_T (topic arcs)", 0, 10, cur["K_T"], key="settings_K_T")
s1, s2, s3 = st.columns(3)
sigma = s1.slider("σ (minimum cosine)", -0.2, 0.9, float(cur["sigma"]), 0.01, key="settings_sigma")
slots = s2.number_input("Temporal slots R", 0, 10, cur["temporal_slots"], key="settings_slots")
budget = s3.number_input("Expansion budget", 0, 20, cur["expansion_budget"], key="settings_budget")
a1, a2, a3 = st.columns(3)
anchor_tokens = a1.number_input("Anchor tokens", 0, 4000, int(cur["anchor_budget"]), 50,
                                key="settings_anchor_budget",
                                help="Most tokens the anchor blocks take; the best lines across modules go in first.")
line_sigma = a2.slider("Line σ (minimum cosine of a line)", -0.2, 0.9, float(cur["line_sigma"]), 0.01,
                       key="settings_line_sigma")
line_words = a3.slider("Word share of a line", 0.0, 2.0, float(cur["line_lexical"]), 0.05,
                       key="settings_line_lexical",
                       help="Added to a profile or topic line's cosine, times the share of the question's words the "
                            "line holds: picks the line that answers among a speaker's many similar ones. 0 = cosine "
                            "only.")
new = {"K_E": int(K_E), "K_V": int(K_V), "K_T": int(K_T), "sigma": float(sigma), "temporal_slots": int(slots),
       "expansion_budget": int(budget), "anchor_budget": int(anchor_tokens), "line_sigma": float(line_sigma),
       "line_lexical": round(float(line_words), 2)}
st.session_state["query_overrides"] = {k: v for k, v in new.items() if v != defaults[k]}
if st.session_state["query_overrides"]:
    st.caption("Changed from the defaults: " + ", ".join(f"{k}={v}" for k, v in st.session_state["query_overrides"].items()))
if st.button("Reset to defaults", key="settings_reset"):
    st.session_state["query_overrides"] = {}
    for k in ("settings_K_E", "settings_K_V", "settings_K_T", "settings_sigma", "settings_slots", "settings_budget",
              "settings_anchor_budget", "settings_line_sigma", "settings_line_lexical"):
        st.session_state.pop(k, None)
    st.rerun()
