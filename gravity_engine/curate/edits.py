"""Curation: making, checking and undoing the human edits of a store, the API the CLI, the app and the review
queue edit through. The edits themselves (their records, the log beside the store and its replay on every load)
belong to the store layer (``gravity_engine.edits``); the names a caller needs of them are named here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..anchor_keys import AnchorRef, entity_keys, name_key, ref_of
from ..anchors import MODULES
from ..edits import (RECORD, EDIT_KINDS, EDITS_FILE, VECTORS_FILE, Curation, CurationError, EditOutcome, Undo,
                     active, apply_edits, apply_saved_edits, curation_of, default_who, describe, edits_path,
                     read_log, write_log)
from ..fileio import directory_lock
from ..store import AnchorStore

__all__ = ["EDITS_FILE", "VECTORS_FILE", "Curation", "CurationError", "EditOutcome", "curation_of", "default_who",
           "describe", "find_ref", "load_edited", "load_raw", "make_edit", "read_log", "record_edit", "ref_of",
           "undo_edit", "write_log"]


def load_raw(path: str | Path) -> AnchorStore:
    """The store as built, without its edits (for a diff of before vs after edits)."""
    return AnchorStore.load(path, edits=False)


def load_edited(path: str | Path, embedder: Any = None) -> AnchorStore:
    """The store with its edits applied, embedding changed texts with ``embedder`` if the cache misses."""
    return apply_saved_edits(load_raw(path), embedder, always=True)


def make_edit(kind: str, target: AnchorRef, **fields: Any):
    """An edit record from its kind and fields; problems raise CurationError saying which field."""
    if kind not in EDIT_KINDS:
        raise CurationError(f"unknown edit kind {kind!r}; use one of {', '.join(EDIT_KINDS)}")
    try:
        return RECORD.validate_python({"kind": kind, "target": target.model_dump(), **fields})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or kind
        raise CurationError(f"{kind} ({where}): {first['msg'].removeprefix('Value error, ')}") from None


def find_ref(store: AnchorStore, module: str, name_or_id: str) -> AnchorRef:
    """The stable key of an anchor named by id, entity name or alias, event text or topic label."""
    if module not in MODULES:
        raise CurationError(f"unknown module {module!r}; use one of {', '.join(MODULES)}")
    items = store.anchors.module(module)
    hit = [a for a in items if a.id == name_or_id]
    if not hit:
        key = name_key(name_or_id)
        if module == "entities":
            hit = [a for a in items if key in entity_keys(a)]
            hit = [a for a in hit if name_key(a.name) == key] or hit
        else:
            attr = "what" if module == "events" else "label"
            hit = [a for a in items if name_key(getattr(a, attr)) == key]
    if not hit:
        raise CurationError(f"no {module[:-1] if module != 'entities' else 'entity'} {name_or_id!r} in "
                            f"{store.path or 'the store'} (give its id, or its name as shown by review or show)")
    if len(hit) > 1:
        raise CurationError(f"{len(hit)} {module} match {name_or_id!r} ({', '.join(a.id for a in hit[:6])}); give the id")
    return ref_of(module, hit[0])


def record_edit(store_dir: str | Path, edit: Any, embedder: Any = None) -> EditOutcome:
    """Check the edit against the store as it is now (its edits applied), then append it to the log.
    An edit that cannot apply (stale) is refused with the reason; the new state's vectors are cached."""
    store_dir = Path(store_dir)
    with directory_lock(store_dir):  # the store's writer lock: two people editing at once both keep their edit
        current = load_edited(store_dir, embedder)
        outcome = apply_edits(current.anchors, [edit], current.conversation)[0][0]
        if outcome.status == "stale" or (outcome.status == "already" and edit.kind == "delete_field"):
            # (a field deletion that finds nothing is a typo now, not a fact of a later build)
            raise CurationError(f"{describe(edit)}: {outcome.note}")
        records = read_log(store_dir)
        if any(r.id == edit.id for r in records):
            raise CurationError(f"an edit with id {edit.id!r} exists already")
        write_log(store_dir, [*records, edit])
    load_edited(store_dir, embedder)  # fills the vector cache, so the next load embeds nothing
    return outcome


def undo_edit(store_dir: str | Path, edit_id: str, who: str | None = None, why: str = "",
              embedder: Any = None) -> tuple[Undo, str]:
    """Undo one edit by id (the others stay); the undo is a record too. Returns it and a warning when the
    build itself holds what the edit did (a save after the edit wrote it into anchors.json, or a rebuild
    found it): then the anchors keep it until the next rebuild."""
    with directory_lock(store_dir):
        records = read_log(store_dir)
        edits, undone = active(records)
        if not any(e.id == edit_id for e in edits):
            known = ", ".join(e.id for e in edits[-5:]) or "none"
            raise CurationError(f"no edit {edit_id!r} in {edits_path(store_dir)} (latest: {known})")
        if edit_id in undone:
            raise CurationError(f"edit {edit_id!r} is undone already")
        before = curation_of(load_edited(store_dir, embedder))
        status = next((o.status for o in before.outcomes if o.edit.id == edit_id), "")
        record = Undo(edit_id=edit_id, why=why, **({"who": who} if who else {}))
        write_log(store_dir, [*records, record])
    load_edited(store_dir, embedder)
    warning = ("the build itself has what this edit did (saved into anchors.json, or found by a rebuild): the "
               "anchors keep it until the next rebuild" if status == "already" else "")
    return record, warning
