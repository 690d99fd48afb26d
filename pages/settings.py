"""Settings: the LLM endpoint (key kept in this browser session only) and the query-path knobs."""

from __future__ import annotations

import streamlit as st

from gravity_engine.errors import GravityError
from gravity_engine.query.config import FULL
from pages._ui import llm_config

st.title("Settings")

st.subheader("LLM endpoint", anchor=False)
st.caption("Any OpenAI-compatible server: OpenAI, Azure, vLLM, Ollama, LM Studio, llama.cpp. The key stays in this "
           "browser session's memory only: it is never written to disk, to the store, or to the logs. Leave empty "
           "to use GRAVITY_LLM_BASE_URL / GRAVITY_LLM_API_KEY from the environment, or to work offline.")
llm = st.session_state["llm_settings"]
c1, c2 = st.columns(2)
base_url = c1.text_input("Base URL", value=llm["base_url"], placeholder="https://api.openai.com/v1",
                         key="settings_base_url")
model = c2.text_input("Model", value=llm["model"], key="settings_model")
api_key = st.text_input("API key", value=llm["api_key"], type="password", key="settings_api_key",
                        placeholder="sk-… (not needed for most local servers)")
st.session_state["llm_settings"] = {"base_url": base_url, "api_key": api_key, "model": model}

if st.button("Test connection", key="settings_test", icon=":material/network_check:"):
    try:
        cfg = llm_config()
    except GravityError as err:
        st.error(str(err))
    else:
        if cfg is None:
            st.warning("No endpoint configured: enter a base URL or a key (everything else works offline).")
        else:
            from gravity_engine.llm import OpenAIClient

            with st.spinner(f"Reaching {cfg.endpoint_label()}…"):
                check = OpenAIClient(cfg).test_connection()
            (st.success if check.ok else st.error)(check.message)
            if check.models:
                st.caption("Models offered: " + ", ".join(check.models[:20]))

st.subheader("Embeddings", anchor=False)
st.session_state["embedding_model"] = st.text_input(
    "Embedding model for new builds", value=st.session_state["embedding_model"], key="settings_embedding_model",
              help="A sentence-transformers name or local path. The default ships inside a Python package and "
                   "loads offline. Stores keep the model they were built with.")

st.subheader("Query path", anchor=False)
st.caption("Defaults are the engine's; they apply to the playground and the evaluation.")
ov = st.session_state["query_overrides"]
k1, k2, k3 = st.columns(3)
K_E = k1.number_input("K_E (entity profiles)", 0, 20, ov.get("K_E", FULL.K_E), key="settings_K_E")
K_V = k2.number_input("K_V (event records)", 0, 30, ov.get("K_V", FULL.K_V), key="settings_K_V")
K_T = k3.number_input("K_T (topic arcs)", 0, 10, ov.get("K_T", FULL.K_T), key="settings_K_T")
s1, s2, s3 = st.columns(3)
sigma = s1.slider("σ (minimum cosine)", -0.2, 0.9, float(ov.get("sigma", FULL.sigma)), 0.01, key="settings_sigma")
slots = s2.number_input("Temporal slots R", 0, 10, ov.get("temporal_slots", FULL.temporal_slots),
                        key="settings_slots")
budget = s3.number_input("Expansion budget", 0, 20, ov.get("expansion_budget", FULL.expansion_budget),
                         key="settings_budget")
a1, a2, _ = st.columns(3)
anchor_tokens = a1.number_input("Anchor tokens", 0, 4000, int(ov.get("anchor_budget", FULL.anchor_budget)), 50,
                                key="settings_anchor_budget",
                                help="Most tokens the anchor blocks take; the best lines across modules go in first.")
line_sigma = a2.slider("Line σ (minimum cosine of a line)", -0.2, 0.9, float(ov.get("line_sigma", FULL.line_sigma)),
                       0.01, key="settings_line_sigma")
new = {"K_E": int(K_E), "K_V": int(K_V), "K_T": int(K_T), "sigma": float(sigma), "temporal_slots": int(slots),
       "expansion_budget": int(budget), "anchor_budget": int(anchor_tokens), "line_sigma": float(line_sigma)}
st.session_state["query_overrides"] = {k: v for k, v in new.items() if v != getattr(FULL, k)}
if st.session_state["query_overrides"]:
    st.caption("Changed from the defaults: " + ", ".join(f"{k}={v}" for k, v in st.session_state["query_overrides"].items()))
if st.button("Reset to defaults", key="settings_reset"):
    st.session_state["query_overrides"] = {}
    for k in ("settings_K_E", "settings_K_V", "settings_K_T", "settings_sigma", "settings_slots", "settings_budget",
              "settings_anchor_budget", "settings_line_sigma"):
        st.session_state.pop(k, None)
    st.rerun()
