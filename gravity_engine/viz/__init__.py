"""Charts, graph HTML and exports for the app, as plain functions tests can call without Streamlit."""

from __future__ import annotations

# One colour per anchor module and per entity type, shared by every page and chart.
MODULE_COLORS = {"entities": "#4C78A8", "events": "#F58518", "topics": "#54A24B"}
TYPE_COLORS = {
    "person": "#4C78A8",
    "organization": "#B279A2",
    "place": "#54A24B",
    "project": "#F58518",
    "product": "#E45756",
    "pet": "#9D755D",
    "artifact": "#72B7B2",
    "other": "#8C8C8C",
}


def type_color(entity_type: str) -> str:
    return TYPE_COLORS.get((entity_type or "other").lower(), TYPE_COLORS["other"])


def vega_spec(chart) -> dict:
    """An altair chart as the Vega-Lite dict ``st.vega_lite_chart`` draws, without altair's schema validation:
    it cost 0.2-0.7 s per chart and rerun here, and the tests validate every chart with ``to_dict()``."""
    return chart.to_dict(validate=False)


def inline(frame):
    """A frame as inline chart data: plain records, dates as ISO strings, missing values as null. Altair's own
    conversion sanitises a frame again for every layer (about 0.1 s each here); records are converted once."""
    import altair as alt
    import pandas as pd

    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_datetime64_any_dtype(out[col]):
            out[col] = out[col].dt.strftime("%Y-%m-%dT%H:%M:%S").where(out[col].notna(), None)
    records = out.astype(object).where(out.notna(), None).to_dict("records")
    return alt.Data(values=records)
