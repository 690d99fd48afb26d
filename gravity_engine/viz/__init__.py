"""Charts, graph HTML and exports for the app, as plain functions tests can call without Streamlit."""

from __future__ import annotations

import functools

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


def unvalidated(build):
    """Build a chart with altair's schema validation at construction off (its ``DEBUG_MODE``): every channel and
    inline data object was checked against the Vega-Lite schema as it was made, 0.2-0.4 s of a 268-event timeline's
    0.45 s per rerun. The tests validate each chart whole with ``to_dict()``. (The flag is altair's global: a
    concurrent build in another session may run with or without its checks, both correct.)"""

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        from altair.utils.schemapi import debug_mode

        with debug_mode(False):
            return build(*args, **kwargs)

    return wrapper


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
