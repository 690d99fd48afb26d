"""Streamlit glue shared by the pages: shared state, cached loaders, the store guard, small widgets.

Only drawing and caching live here; every computation is a ``gravity_engine`` call.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import streamlit as st

from app_services import studio
from gravity_engine.embed import embedder_for, registered
from gravity_engine.errors import GravityError
from gravity_engine.hosts import available_hosts
from gravity_engine.llm.settings import config_from_settings
from gravity_engine.query.config import get_variant
from gravity_engine.store import AnchorStore
from gravity_engine.viz import MODULE_COLORS

ROOT = Path(__file__).resolve().parent.parent
MODULE_LABELS = {"entities": "Entities", "events": "Events", "topics": "Topics"}


def init_state() -> None:
    """The few keys every page shares, set once per browser session (pages namespace their own keys)."""
    if "store_path" not in st.session_state:
        # A link or a new tab carries the store in the URL (?store=sample/medllm_project): open that one.
        default = studio.store_from_ref(st.query_params.get("store")) or studio.default_store()
        st.session_state["store_path"] = str(default) if default else None
    # The key lives only in this dict in the session: never written to disk, env or logs.
    st.session_state.setdefault("llm_settings", {
        "base_url": os.environ.get("GRAVITY_LLM_BASE_URL", ""),
        "api_key": "",
        "model": os.environ.get("GRAVITY_LLM_MODEL", "gpt-4o-mini"),
    })
    st.session_state.setdefault("query_overrides", {})
    st.session_state.setdefault("embedding_model", "all-MiniLM-L6-v2")


def inject_css() -> None:
    css = (ROOT / "assets" / "style.css").read_text(encoding="utf-8")
    st.html(f"<style>{css}</style>")


@st.cache_resource(max_entries=6, show_spinner="Loading the anchor store…")
def load_store(path: str, mtime: float) -> AnchorStore:
    """A store per (path, mtime): a rebuild changes the mtime and so loads fresh. Never mutated."""
    return AnchorStore.load(path)


@st.cache_resource(max_entries=3, show_spinner="Loading the embedding model…")
def get_embedder(name: str, dim: int = 0):
    return embedder_for(name, dim)


def current_store() -> AnchorStore | None:
    path = st.session_state.get("store_path")
    if not path or not studio.is_store(Path(path)):
        return None
    try:
        store = load_store(path, studio.store_mtime(path))
    except GravityError as err:
        st.error(f"Cannot open the store: {err}")
        return None
    info = store.anchors.built_with
    if not registered(info.embedding_model or ""):  # a model to load, not the test stores' registered fake
        studio.load_embedder_soon(info.embedding_model or "all-MiniLM-L6-v2", info.embedding_dim)
    return store


def require_store() -> AnchorStore:
    """The page guard: the loaded store, or a short note on how to get one and a stop."""
    store = current_store()
    if store is None:
        st.info("No anchor store is loaded yet. Build one from a conversation, or import a zipped store.")
        c1, c2 = st.columns(2)
        c1.page_link("app_pages/build.py", label="Build anchors", icon=":material/construction:")
        c2.page_link("app_pages/data.py", label="Import a store", icon=":material/upload:")
        st.stop()
    return store


def store_embedder(store: AnchorStore):
    info = store.anchors.built_with
    return get_embedder(info.embedding_model or "all-MiniLM-L6-v2", info.embedding_dim)


def sidebar_store_picker() -> None:
    stores = studio.available_stores()
    current = st.session_state.get("store_path")
    paths = [str(p) for p in stores]
    if current and current not in paths and studio.is_store(Path(current)):
        paths.insert(0, current)
    if not paths:
        st.sidebar.caption("No anchor store yet.")
        return
    labels = {str(p): studio.store_label(Path(p)) for p in paths}
    # No key on purpose: the widget's identity follows its index, so when a page (Build, Import) changes
    # store_path the picker shows it instead of restoring its own stale value.
    index = paths.index(current) if current in paths else 0
    choice = st.sidebar.selectbox("Anchor store", paths, index=index, format_func=labels.get)
    if choice != paths[index] or current not in paths:
        st.session_state["store_path"] = choice
    ref = studio.store_ref(st.session_state["store_path"])
    if ref and st.query_params.get("store") != ref:
        st.query_params["store"] = ref  # so a reload, a bookmark or a new tab opens the same store


def badge(module: str, text: str | None = None) -> str:
    """A coloured pill for a module; the text is escaped (it may come from a conversation)."""
    return f'<span class="gs-badge gs-{module}">{html.escape(text or MODULE_LABELS.get(module, module))}</span>'


def module_color(module: str) -> str:
    # Imported here: gravity_engine.viz brings altair and networkx, which the first page does not need.
    return MODULE_COLORS[module]


def quote_table(store: AnchorStore, source_ids: list[str], key: str | None = None) -> None:
    """The cited utterances, quoted with speaker, session and date, as a table (text is never markup)."""
    rows = studio.quotes(store, source_ids)
    if not rows:
        st.caption("No source utterances cited.")
        return
    st.dataframe(rows, hide_index=True, width="stretch", key=key,
                 column_config={"text": st.column_config.TextColumn("text", width="large")})


_MD_SPECIAL = "\\`*_{}[]()#+-.!|>~$:"


def md_escape(text: object) -> str:
    """Conversation text made inert for st.markdown: HTML escaped, Markdown punctuation backslashed."""
    s = html.escape(str(text), quote=False)
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s).replace("\n", " ")


def md_table(rows: list[dict[str, object]]) -> str:
    """Rows as a Markdown table, every cell escaped: a small table that costs neither pandas on the server nor
    the data grid in the browser (the first page draws at once)."""
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(md_escape(c) or "&nbsp;" for c in cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(md_escape(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def llm_config():
    """The endpoint from Settings (session only), else the environment; None when nothing is configured.
    A bad setting raises ``ConfigError`` naming it (never "no endpoint")."""
    return config_from_settings(st.session_state.get("llm_settings", {}))


def query_config(variant: str = "full"):
    """The named variant with the Settings page's overrides (K, sigma, slots, budget) applied."""
    base = get_variant(variant)
    overrides = dict(st.session_state.get("query_overrides", {}))
    if not base.expansion.expand:
        overrides.pop("expansion_budget", None)
    return base.with_(**overrides) if overrides else base


@st.cache_data(max_entries=2, show_spinner=False)
def selectable_hosts() -> list[str]:
    """Installed hosts the pages can run: every adapter but mcp, which needs a server configuration
    (the CLI's --host-config)."""
    return [h.name for h in available_hosts() if h.installed and h.name != "mcp"
            and "not available yet" not in h.description]
