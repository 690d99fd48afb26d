"""Export the loaded store (zip, GraphML, events CSV, Markdown report) and import a zipped store."""

from __future__ import annotations

import streamlit as st

from app_services import studio
from gravity_engine.errors import GravityError
from gravity_engine.viz import export
from app_pages._ui import current_store, load_store, md_escape

st.title("Export & import")
if flash := st.session_state.pop("data_flash", None):
    st.success(flash)


@st.cache_data(max_entries=4, show_spinner="Preparing the downloads…")
def _exports(path: str, mtime: float) -> dict[str, bytes]:
    s = load_store(path, mtime)
    return {"zip": export.store_zip_bytes(path), "graphml": export.graphml_bytes(s),
            "csv": export.events_csv_bytes(s), "md": export.markdown_report(s).encode("utf-8")}


store = current_store()
st.subheader("Export", anchor=False)
if store is None:
    st.info("No store is loaded: import one below or build one on the Build page.")
else:
    name = studio.safe_name(store.anchors.conversation_id or store.path.name)
    files = _exports(str(store.path), studio.store_mtime(store.path))
    st.caption(f"From the store in {store.path}")
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("Anchor store (.zip)", files["zip"], f"{name}-anchors.zip", "application/zip",
                       icon=":material/folder_zip:", key="data_dl_zip", width="stretch",
                       help="anchors.json, embeddings.npz, conversation.json and build_report.json")
    c2.download_button("Entity graph (GraphML)", files["graphml"], f"{name}-entities.graphml", "application/xml",
                       icon=":material/hub:", key="data_dl_graphml", width="stretch")
    c3.download_button("Events (CSV)", files["csv"], f"{name}-events.csv", "text/csv",
                       icon=":material/table:", key="data_dl_csv", width="stretch")
    c4.download_button("Report (Markdown)", files["md"], f"{name}-report.md", "text/markdown",
                       icon=":material/description:", key="data_dl_md", width="stretch")
    with st.expander("Preview the Markdown report"):
        st.code(files["md"].decode("utf-8")[:6000], language="markdown")

st.subheader("Import a store built elsewhere", anchor=False)
st.caption("A zip holding anchors.json (required) and embeddings.npz, conversation.json, build_report.json. "
           "It is checked before anything is written and lands in your workspace.")
upload = st.file_uploader("Zipped anchor store", type=["zip"], key="data_import_file")
target = st.text_input("Store name", value=studio.safe_name(upload.name.rsplit(".", 1)[0]) if upload else "",
                       key="data_import_name")
if st.button("Import", type="primary", disabled=upload is None, key="data_import_go"):
    dest = studio.workspace_dir() / studio.safe_name(target or "imported")
    try:
        imported = export.import_store_zip(upload.getvalue(), dest, filename=upload.name)
    except GravityError as err:
        st.error(studio.message_for_people(err))
    else:
        st.session_state["store_path"] = str(dest)
        c = imported.anchors.counts()
        st.session_state["data_flash"] = (f"Imported {md_escape(dest.name)}: {c['entities']} entities, {c['events']} "
                                          f"events, {c['topics']} topics. It is now the loaded store.")
        st.rerun()  # the whole app again, so the sidebar and the page name the imported store at once
