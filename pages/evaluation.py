"""Evaluation: the LLM-free measures over a benchmark slice, per category, with the questions that changed."""

from __future__ import annotations

import streamlit as st

st.title("Evaluation")
try:
    from gravity_engine import measure  # noqa: F401
except ImportError:
    st.info("The measures module (gravity_engine.measure) is not installed in this build yet.")
    st.stop()
