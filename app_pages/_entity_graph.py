"""The entity graph's Streamlit component: an SVG drawn by ``components/entity_graph.js`` from
:func:`gravity_engine.viz.graph.graph_view`, which sends back what was clicked.

A Vega chart made a tab opened on the graph page wait for the Vega library to load and start (1.5-2 s here);
this component is a few kilobytes of script inlined in the page.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

_HERE = Path(__file__).parent / "components"

entity_graph = st.components.v2.component(
    "gravity_entity_graph",
    js=(_HERE / "entity_graph.js").read_text(encoding="utf-8"),
    css=(_HERE / "entity_graph.css").read_text(encoding="utf-8"),
)
