"""Exports of a store (zip with its edits, GraphML, events CSV, Markdown report) and the import of a zipped store.

The import reads untrusted archives: it refuses absolute paths, ``..`` parts, links, too many
members and oversized contents before writing anything, and validates the result as a store.
"""

from __future__ import annotations

import io
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import networkx as nx

from ..edits import EDITS_FILE, VECTORS_FILE
from ..errors import InputError, StoreError
from ..fileio import read_file_group
from ..store import ANCHORS_FILE, CONVERSATION_FILE, EMBEDDINGS_FILE, REPORT_FILE, AnchorStore
from .graph import build_graph
from .timeline import events_frame

# The human edits travel with the store: they are replayed on load (``curate.edits``).
STORE_FILES = (ANCHORS_FILE, EMBEDDINGS_FILE, CONVERSATION_FILE, REPORT_FILE, EDITS_FILE, VECTORS_FILE)
MAX_ZIP_BYTES = 200 * 1024 * 1024
MAX_UNPACKED_BYTES = 1024 * 1024 * 1024
MAX_MEMBERS = 64


def store_zip_bytes(store_dir: str | Path) -> bytes:
    """The store's standalone files in one zip, at the archive root."""
    def read(folder: Path) -> dict[str, bytes]:
        return {name: (folder / name).read_bytes() for name in STORE_FILES if (folder / name).is_file()}

    # One consistent version of the store, even while a writer replaces it (fileio's generation check).
    files, _ = read_file_group(Path(store_dir), read)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def graphml_bytes(store: AnchorStore) -> bytes:
    """The entity graph as GraphML (list attributes joined, as GraphML holds only scalars)."""
    session_by_utt = _session_by_utt(store)
    g = build_graph(store.anchors, session_by_utt)
    flat = nx.MultiDiGraph()
    for n, d in g.nodes(data=True):
        flat.add_node(n, name=d["name"], type=d["type"], mentions=int(d["mentions"]),
                      aliases="; ".join(d["aliases"]), sessions="; ".join(d["sessions"]))
    for u, v, d in g.edges(data=True):
        flat.add_edge(u, v, predicate=d["predicate"], source_ids="; ".join(d["source_ids"]))
    buf = io.BytesIO()
    nx.write_graphml(flat, buf)
    return buf.getvalue()


def events_csv_bytes(store: AnchorStore) -> bytes:
    frame = events_frame(store.anchors).drop(columns=["participant"])
    for col in ("date_start", "date_end"):
        frame[col] = frame[col].dt.strftime("%Y-%m-%d").fillna("")
    return frame.to_csv(index=False).encode("utf-8")


def _md(text: object) -> str:
    # A report is read in Markdown viewers: keep conversation text from turning into markup or HTML.
    s = str(text).replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "`*_[]#|":
        s = s.replace(ch, "\\" + ch)
    return s.replace("\n", " ")


def markdown_report(store: AnchorStore) -> str:
    """A readable summary: what built the store, counts, entities, events and topic arcs."""
    a = store.anchors
    info = a.built_with
    lines = [f"# Gravity anchors: {_md(a.conversation_id or 'conversation')}", "",
             f"- backend: {_md(info.backend)}" + (f" (model {_md(info.llm_model)})" if info.llm_model else ""),
             f"- embeddings: {_md(info.embedding_model)} ({info.embedding_dim} dims)",
             f"- built at: {_md(info.built_at)}, batch size {info.batch_size}, fused: {info.fused}",
             f"- entities: {len(a.entities)}, events: {len(a.events)}, topics: {len(a.topics)}", ""]
    verification = store.report.get("verification") if isinstance(store.report, dict) else None
    share = verification.get("share") if isinstance(verification, dict) else None
    if isinstance(share, (int, float)):
        lines += [f"- fields verified: {share:.0%}", ""]
    lines += ["## Entities", "", "| name | type | mentions | aliases |", "|---|---|---|---|"]
    for e in sorted(a.entities, key=lambda e: -e.mentions):
        lines.append(f"| {_md(e.name)} | {_md(e.type)} | {e.mentions} | {_md(', '.join(e.aliases))} |")
    lines += ["", "## Events", "", "| date | as said | who | what |", "|---|---|---|---|"]
    for v in sorted(a.events, key=lambda v: (v.date_start or "9999", v.id)):
        lines.append(f"| {_md(v.date_label())} | {_md(v.when_text)} | {_md(', '.join(v.participants))} | {_md(v.what)} |")
    lines += ["", "## Topic arcs", ""]
    for t in a.topics:
        lines += [f"### {_md(t.label)} ({t.status})", "", _md(t.summary), ""]
        for s in t.sessions:
            lines.append(f"- {_md(s.session_id)} {_md(s.date or '')}: {_md(s.state)}")
        lines.append("")
    return "\n".join(lines) + "\n"


def _session_by_utt(store: AnchorStore) -> dict[str, str]:
    if store.conversation is None:
        return {}
    return {u.id: s.id for s in store.conversation.sessions for u in s.utterances}


def import_store_zip(data: bytes, dest: str | Path, *, filename: str = "upload.zip",
                     max_zip_bytes: int = MAX_ZIP_BYTES, max_unpacked_bytes: int = MAX_UNPACKED_BYTES) -> AnchorStore:
    """Unpack a zipped store into ``dest`` (which must not exist yet) after checking it; return it loaded."""
    dest = Path(dest)
    if len(data) > max_zip_bytes:
        raise InputError(f"archive is {len(data) / 1e6:.1f} MB, the limit is {max_zip_bytes / 1e6:.0f} MB", source=filename)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as err:
        raise InputError(f"not a zip archive ({err})", source=filename) from err
    with zf:
        members = zf.infolist()
        if len(members) > MAX_MEMBERS:
            raise InputError(f"{len(members)} entries; a store has at most {len(STORE_FILES)} files", source=filename)
        total = 0
        picked: dict[str, zipfile.ZipInfo] = {}
        for info in members:
            path = PurePosixPath(info.filename.replace("\\", "/"))
            if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
                raise InputError("entry points outside the archive; refusing to unpack", source=filename,
                                 where=info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise InputError("entry is a symbolic link; refusing to unpack", source=filename, where=info.filename)
            if info.is_dir():
                continue
            total += info.file_size
            if total > max_unpacked_bytes:
                raise InputError(f"unpacks to more than {max_unpacked_bytes / 1e6:.0f} MB", source=filename)
            if path.name in STORE_FILES:
                if path.name in picked:
                    raise InputError(f"holds {path.name} twice", source=filename, where=info.filename)
                picked[path.name] = info
        if ANCHORS_FILE not in picked:
            raise InputError(f"no {ANCHORS_FILE} inside; export a store from Gravity Studio or zip a build folder",
                             source=filename)
        if dest.exists():
            raise InputError(f"a store named {dest.name!r} exists already; pick another name", source=filename)
        tmp = Path(tempfile.mkdtemp(prefix=".import-", dir=dest.parent if dest.parent.exists() else None))
        try:
            for name, info in picked.items():
                with zf.open(info) as src, open(tmp / name, "wb") as out:
                    # Copy with a running cap: the sizes in the zip header can lie.
                    written = 0
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        if written > info.file_size or written > max_unpacked_bytes:
                            raise InputError("entry is larger than its header says", source=filename, where=name)
                        out.write(chunk)
            try:
                store = AnchorStore.load(tmp)
                store.check_embeddings()
            except StoreError as err:
                raise InputError(str(err).replace(str(tmp), "archive"), source=filename) from err
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(tmp), str(dest))
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return AnchorStore.load(dest)
