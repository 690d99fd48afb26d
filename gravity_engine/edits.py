"""Human edits of a store, kept as records in ``edits.jsonl`` beside it and applied on every load.

``anchors.json`` stays what the extractor built; each correction (change a type, rename, merge,
split, delete an anchor or a field, fix or set a date, add a relation with its evidence) is one JSON
line saying who made it, when, what and why. ``AnchorStore.load`` replays the log (``apply_saved_edits``),
so the corrections survive a rebuild or a ``build --update``: each edit names its anchor by a stable
key (``anchor_keys.AnchorRef``), not by a volatile id. An edit whose anchor or field is no longer there is
reported as *stale* with the reason, one already true of the build as *already*; none is dropped.
Undo appends an ``undo`` record: the log is the history.

Changed anchors get embeddings of their new text: vectors of edited texts are cached in
``edits.vectors.npz`` (by text hash and model), so a load with a warm cache embeds nothing; a cold
one (after a rebuild or an import) encodes only the changed texts once and fills the cache.
"""

from __future__ import annotations

import getpass
import hashlib
import io
import os
import re
import uuid
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from .anchor_keys import AnchorRef, Resolver, entity_keys, name_key
from .anchors import ANCHORS_FILE, MODULES, AnchorSet, Entity, Event, Granularity, Relation
from .embed import embedder_for
from .errors import GravityError, StoreError
from .fileio import atomic_write_bytes, atomic_write_text
from .merging import record_merge, slug, unmerge
from .places import regions

EDITS_FILE = "edits.jsonl"
VECTORS_FILE = "edits.vectors.npz"
MAX_EDITS_BYTES = 64 * 1024 * 1024

# Which fields ``delete_field`` may remove per module; list fields name one item by its value.
LIST_FIELDS = {"entities": ("attributes", "relations", "aliases"), "events": ("participants",),
               "topics": ("key_facts", "keywords", "participants")}
TEXT_FIELDS = {"entities": ("description",), "events": ("where", "date"), "topics": ("summary",)}


class CurationError(GravityError):
    """An edit that cannot be made (its anchor is missing, it says nothing to do, it is malformed)."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _new_id() -> str:
    return f"ed-{uuid.uuid4().hex[:8]}"


def default_who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in some containers; the record still says something
        return "unknown"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(default_factory=_new_id, pattern=r"^[A-Za-z0-9._-]{1,40}$")
    who: str = Field(default_factory=default_who, max_length=200)
    at: str = Field(default_factory=_now)
    why: str = Field(default="", max_length=2000)


class _Edit(_Record):
    target: AnchorRef
    modules: ClassVar[tuple[str, ...]] = MODULES  # the modules whose anchors this kind of edit applies to

    @model_validator(mode="after")
    def _module(self):
        if self.target.module not in self.modules:
            raise ValueError(f"{self.kind} applies to {' and '.join(self.modules)}, not {self.target.module}")
        return self


class SetType(_Edit):
    modules: ClassVar[tuple[str, ...]] = ("entities",)
    kind: Literal["set_type"] = "set_type"
    type: str = Field(min_length=1, max_length=40)

    @field_validator("type")
    @classmethod
    def _slug(cls, value: str) -> str:
        value = re.sub(r"[^a-z0-9]+", "_", value.strip().casefold()).strip("_")
        if not value:
            raise ValueError("a type is a word such as person, pet, organization, place, project, product")
        return value


class Rename(_Edit):
    kind: Literal["rename"] = "rename"
    name: str = Field(min_length=1, max_length=300)
    keep_alias: bool = True  # the old name stays an alias, so sources that say it still support the profile


class Merge(_Edit):
    modules: ClassVar[tuple[str, ...]] = ("entities",)
    kind: Literal["merge"] = "merge"
    into: AnchorRef  # the entity that absorbs the target


class Split(_Edit):
    modules: ClassVar[tuple[str, ...]] = ("entities",)
    kind: Literal["split"] = "split"
    alias: str = Field(min_length=1, max_length=300)  # the name to split off into its own profile


class Delete(_Edit):
    kind: Literal["delete"] = "delete"


class DeleteField(_Edit):
    kind: Literal["delete_field"] = "delete_field"
    field: str
    key: str = ""  # attributes: the key; relations: the predicate
    value: str = ""  # the item's value / target / text (list fields)

    @model_validator(mode="after")
    def _known_field(self) -> DeleteField:
        module = self.target.module
        allowed = LIST_FIELDS[module] + TEXT_FIELDS[module]
        if self.field not in allowed:
            raise ValueError(f"{module} have no deletable field {self.field!r}; use one of {', '.join(allowed)}")
        if self.field in LIST_FIELDS[module] and not self.value:
            raise ValueError(f"say which item of {self.field} to delete (its value)")
        return self


class SetDate(_Edit):
    modules: ClassVar[tuple[str, ...]] = ("events",)
    kind: Literal["set_date"] = "set_date"
    date_start: date | None  # None clears the date (unknown)
    date_end: date | None = None  # inclusive; defaults to date_start
    granularity: Granularity | None = None  # default: day, or range when the dates differ
    when_text: str | None = Field(default=None, max_length=200)  # None keeps the expression as said

    @model_validator(mode="after")
    def _order(self) -> SetDate:
        if self.date_end is not None and self.date_start is None:
            raise ValueError("date_end without date_start")
        if self.date_start and self.date_end and self.date_end < self.date_start:
            raise ValueError(f"date_end {self.date_end} is before date_start {self.date_start}")
        return self

    def values(self) -> tuple[str | None, str | None, str]:
        if self.date_start is None:
            return None, None, "unknown"
        end = self.date_end or self.date_start
        gran = self.granularity or ("day" if end == self.date_start else "range")
        return self.date_start.isoformat(), end.isoformat(), gran


class AddRelation(_Edit):
    modules: ClassVar[tuple[str, ...]] = ("entities",)
    kind: Literal["add_relation"] = "add_relation"
    predicate: str = Field(min_length=1, max_length=80)
    object: str = Field(min_length=1, max_length=300)
    source_ids: list[str] = Field(min_length=1, max_length=50)  # the utterances that say it (evidence)

    @field_validator("predicate")
    @classmethod
    def _predicate(cls, value: str) -> str:
        return re.sub(r"[^a-z0-9]+", "_", value.strip().casefold()).strip("_") or value


class Undo(_Record):
    kind: Literal["undo"] = "undo"
    edit_id: str


Edit = Annotated[Union[SetType, Rename, Merge, Split, Delete, DeleteField, SetDate, AddRelation],
                 Field(discriminator="kind")]
Record = Annotated[Union[SetType, Rename, Merge, Split, Delete, DeleteField, SetDate, AddRelation, Undo],
                   Field(discriminator="kind")]
EDIT_KINDS = ("set_type", "rename", "merge", "split", "delete", "delete_field", "set_date", "add_relation")
RECORD = TypeAdapter(Record)
_RECORDS = TypeAdapter(list[Record])

Status = Literal["applied", "already", "stale", "undone"]


@dataclass
class EditOutcome:
    """What one edit did on this load: ``applied``, ``already`` (the build says so itself),
    ``stale`` (its anchor or field is not in this build; ``note`` says why) or ``undone``."""

    edit: Any
    status: Status
    note: str = ""
    anchor_id: str | None = None

    def describe(self) -> str:
        return describe(self.edit)


@dataclass
class Curation:
    """The edits of a loaded store and what each did; ``store.curation``."""

    outcomes: list[EditOutcome] = field(default_factory=list)
    undos: list[Undo] = field(default_factory=list)
    embedded: int = 0  # texts encoded on this load (cache misses)

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    def stale(self) -> list[EditOutcome]:
        return [o for o in self.outcomes if o.status == "stale"]


def describe(edit: Any) -> str:
    """One line saying what an edit does."""
    t = edit.target.label() if hasattr(edit, "target") else ""
    k = edit.kind
    if k == "set_type":
        return f"{t}: type -> {edit.type}"
    if k == "rename":
        return f"{t}: rename to {edit.name!r}"
    if k == "merge":
        return f"{t}: merge into {edit.into.label()}"
    if k == "split":
        return f"{t}: split {edit.alias!r} off"
    if k == "delete":
        return f"{t}: delete"
    if k == "delete_field":
        item = " ".join(x for x in (edit.key, edit.value) if x)
        return f"{t}: delete {edit.field}" + (f" {item!r}" if item else "")
    if k == "set_date":
        start, end, gran = edit.values()
        when = "unknown" if start is None else start if start == end else f"{start}..{end}"
        return f"{t}: date -> {when} ({gran})"
    if k == "add_relation":
        return f"{t}: add {edit.predicate} {edit.object!r} [{', '.join(edit.source_ids)}]"
    if k == "undo":
        return f"undo {edit.edit_id}"
    return k


# --------------------------------------------------------------------------------------------------
# Applying edits to an AnchorSet (in place).


class _Apply:
    def __init__(self, anchors: AnchorSet, conversation=None):
        self.anchors = anchors
        self.conversation = conversation
        self.resolve = Resolver(anchors)
        self.touched: set[str] = set()  # ids whose text may have changed: re-embedded
        self.removed: set[int] = set()  # id() of removed anchors, dropped from the lists at the end
        self._utterances: dict | None = None

    def utterances(self) -> dict:
        if self._utterances is None:
            self._utterances = self.conversation.utterance_index() if self.conversation is not None else {}
        return self._utterances

    def run(self, edit) -> EditOutcome:
        anchor, why = self.resolve.find(edit.target)
        if anchor is None and edit.kind not in ("delete", "rename", "merge", "split"):
            return EditOutcome(edit, "stale", why)
        return getattr(self, f"_{edit.kind}")(edit, anchor, why)

    def finish(self) -> None:
        if self.removed:
            for module in MODULES:
                items = self.anchors.module(module)
                setattr(self.anchors, module, [a for a in items if id(a) not in self.removed])

    # each returns an EditOutcome; ``anchor`` is the target found (or None) and ``why`` why not

    def _set_type(self, edit: SetType, e: Entity, _why: str) -> EditOutcome:
        if e.type == edit.type:
            return EditOutcome(edit, "already", f"{e.name!r} is {e.type} in this build", e.id)
        e.type = edit.type
        self.touched.add(e.id)
        return EditOutcome(edit, "applied", "", e.id)

    def _rename(self, edit: Rename, anchor, why: str) -> EditOutcome:
        module = edit.target.module
        if anchor is None:
            now = self.resolve.find(edit.target.model_copy(update={"name": edit.name}))[0]
            if now is not None:
                return EditOutcome(edit, "already", f"{edit.name!r} is in this build", now.id)
            return EditOutcome(edit, "stale", why)
        if module == "entities":
            if anchor.name == edit.name:
                return EditOutcome(edit, "already", f"named {edit.name!r} in this build", anchor.id)
            old = anchor.name
            anchor.name = edit.name
            anchor.aliases = [a for a in anchor.aliases if name_key(a) != name_key(edit.name)]
            if edit.keep_alias and name_key(old) != name_key(edit.name) and old not in anchor.aliases:
                anchor.aliases.append(old)
            anchor.checks = [c for c in anchor.checks if c.field != "name"]
            self.resolve.renamed("entities", anchor)
            for other in self.anchors.entities:  # relations that point at it read its new name
                for r in other.relations:
                    if r.target_id == anchor.id:
                        r.target = edit.name
                        self.touched.add(other.id)
        elif module == "topics":
            if anchor.label == edit.name:
                return EditOutcome(edit, "already", f"labelled {edit.name!r} in this build", anchor.id)
            anchor.label = edit.name
            self.resolve.renamed("topics", anchor)
        else:
            if anchor.what == edit.name:
                return EditOutcome(edit, "already", f"reads {edit.name!r} in this build", anchor.id)
            anchor.what = edit.name
            anchor.checks = [c for c in anchor.checks if c.field != "what"]
            self.resolve.renamed("events", anchor)
        self.touched.add(anchor.id)
        return EditOutcome(edit, "applied", "", anchor.id)

    def _merge(self, edit: Merge, alias: Entity | None, why: str) -> EditOutcome:
        if edit.into.module != "entities":
            return EditOutcome(edit, "stale", "an entity merges into an entity only")
        into, why_into = self.resolve.find(edit.into)
        if into is None:
            return EditOutcome(edit, "stale", f"merge target: {why_into}")
        if alias is None or alias is into:
            if name_key(edit.target.name) in entity_keys(into):
                return EditOutcome(edit, "already", f"{edit.target.name!r} is a name of {into.name!r} in this build",
                                   into.id)
            return EditOutcome(edit, "stale", why)
        record_merge(into, alias, f"edit {edit.id}" + (f": {edit.why}" if edit.why else ""))
        self._drop(alias)
        self.resolve.renamed("entities", into)
        for other in self.anchors.entities:
            for r in other.relations:
                if r.target_id == alias.id:
                    r.target_id = into.id
        self.touched.add(into.id)
        return EditOutcome(edit, "applied", "", into.id)

    def _split(self, edit: Split, e: Entity | None, why: str) -> EditOutcome:
        if e is None:
            return EditOutcome(edit, "stale", why)
        key = name_key(edit.alias)
        if key == name_key(e.name):
            return EditOutcome(edit, "stale", f"{edit.alias!r} is {e.name!r}'s own name; rename instead")
        own = [x for x in self.resolve.entities_named(edit.alias) if x is not e]
        merge = next((m for m in e.merges if name_key(m.alias) == key and m.snapshot), None)
        if merge is not None:
            taken = {x.id for x in self.anchors.entities}
            # unmerge copies what it is given: give it the one profile, not the whole store
            part = unmerge(AnchorSet(entities=[e]), e.id, merge.alias)
            changed, restored = part.entities
            if restored.id in taken:
                restored.id = slug(restored.name, taken, "ent")
            for name in type(e).model_fields:
                setattr(e, name, getattr(changed, name))
        elif key in {name_key(a) for a in e.aliases}:
            restored = self._split_alias(e, edit.alias)
        elif own:
            return EditOutcome(edit, "already", f"{edit.alias!r} has its own profile in this build", own[0].id)
        else:
            return EditOutcome(edit, "stale", f"{e.name!r} has no name {edit.alias!r} to split off")
        self.anchors.entities.append(restored)
        self.resolve.add("entities", restored)
        for other in self.anchors.entities:
            for r in other.relations:
                if r.target_id == e.id and name_key(r.target) == key:
                    r.target_id = restored.id
        self.touched |= {e.id, restored.id}
        return EditOutcome(edit, "applied", "", restored.id)

    def _split_alias(self, e: Entity, alias: str) -> Entity:
        """An alias with no merge record: the new profile takes the utterances that say the alias and
        not the profile's own name (all of them stay cited by both when the text is not at hand)."""
        e.aliases = [a for a in e.aliases if name_key(a) != name_key(alias)]
        index = self.utterances()
        said = re.compile(rf"\b{re.escape(alias)}\b", re.IGNORECASE)
        own = re.compile(rf"\b{re.escape(e.name)}\b", re.IGNORECASE)
        moved = [s for s in e.source_ids if s in index and said.search(index[s].display_text())]
        keep_own = [s for s in moved if own.search(index[s].display_text())]
        e.source_ids = [s for s in e.source_ids if s not in moved or s in keep_own]
        taken = {x.id for x in self.anchors.entities}
        return Entity(id=slug(alias, taken, "ent"), name=alias, type=e.type, source_ids=moved, mentions=len(moved),
                      description=f"split off {e.name}")

    def _delete(self, edit: Delete, anchor, why: str) -> EditOutcome:
        if anchor is None:
            return EditOutcome(edit, "already", f"not in this build ({why})")
        self._drop(anchor)
        if edit.target.module == "entities":
            for other in self.anchors.entities:
                for r in other.relations:
                    if r.target_id == anchor.id:
                        r.target_id = None
        elif edit.target.module == "events":
            for v in self.anchors.events:
                if anchor.id in v.follows or anchor.id in v.causes:
                    v.follows = [x for x in v.follows if x != anchor.id]
                    v.causes = [x for x in v.causes if x != anchor.id]
        return EditOutcome(edit, "applied", "", anchor.id)

    def _drop(self, anchor) -> None:
        self.removed.add(id(anchor))
        self.resolve.remove(anchor)
        self.touched.discard(anchor.id)

    def _delete_field(self, edit: DeleteField, anchor, _why: str) -> EditOutcome:
        name = edit.field
        if name == "date":
            if anchor.date_start is None:
                return EditOutcome(edit, "already", "the event has no date in this build", anchor.id)
            anchor.date_start = anchor.date_end = None
            anchor.granularity = "unknown"
            anchor.checks = [c for c in anchor.checks if c.field != "date"]
        elif name in TEXT_FIELDS[edit.target.module]:
            if not getattr(anchor, name):
                return EditOutcome(edit, "already", f"{name} is empty in this build", anchor.id)
            setattr(anchor, name, "")
            anchor.checks = [c for c in anchor.checks if c.field != name]
        else:
            items = getattr(anchor, name)
            i = next((i for i, x in enumerate(items) if _item_matches(name, x, edit)), None)
            if i is None:
                return EditOutcome(edit, "already", f"no such item in {name} in this build", anchor.id)
            del items[i]
            _renumber_checks(anchor, name, i)
        self.touched.add(anchor.id)
        return EditOutcome(edit, "applied", "", anchor.id)

    def _set_date(self, edit: SetDate, v: Event, _why: str) -> EditOutcome:
        start, end, gran = edit.values()
        when = v.when_text if edit.when_text is None else edit.when_text
        if (v.date_start, v.date_end or v.date_start, v.granularity, v.when_text) == (start, end, gran, when):
            return EditOutcome(edit, "already", "the build has this date", v.id)
        v.date_start, v.date_end, v.granularity, v.when_text = start, end, gran, when
        v.checks = [c for c in v.checks if c.field != "date"]
        self.touched.add(v.id)
        return EditOutcome(edit, "applied", "", v.id)

    def _add_relation(self, edit: AddRelation, e: Entity, _why: str) -> EditOutcome:
        if self.conversation is not None:
            known = self.utterances()
            missing = [s for s in edit.source_ids if s not in known]
            if missing:
                return EditOutcome(edit, "stale", f"evidence {', '.join(missing)} is not an utterance of this conversation")
        key = (name_key(edit.predicate), name_key(edit.object))
        for r in e.relations:
            if (name_key(r.predicate), name_key(r.target)) == key:
                if set(edit.source_ids) <= set(r.source_ids):
                    return EditOutcome(edit, "already", "the build has this relation", e.id)
                r.source_ids += [s for s in edit.source_ids if s not in r.source_ids]
                self.touched.add(e.id)
                return EditOutcome(edit, "applied", "evidence added to the relation the build has", e.id)
        targets = self.resolve.entities_named(edit.object)
        e.relations.append(Relation(predicate=edit.predicate, target=edit.object,
                                    target_id=targets[0].id if len(targets) == 1 else None,
                                    source_ids=list(edit.source_ids)))
        e.source_ids += [s for s in edit.source_ids if s not in e.source_ids]
        self.touched.add(e.id)
        return EditOutcome(edit, "applied", "", e.id)


def _item_matches(name: str, item: Any, edit: DeleteField) -> bool:
    if name == "attributes":
        return name_key(item.value) == name_key(edit.value) and (not edit.key or name_key(item.key) == name_key(edit.key))
    if name == "relations":
        return name_key(item.target) == name_key(edit.value) and (
            not edit.key or name_key(item.predicate) == name_key(edit.key))
    if name == "key_facts":
        return name_key(item.text) == name_key(edit.value)
    return name_key(item) == name_key(edit.value)


def _renumber_checks(anchor: Any, name: str, removed: int) -> None:
    """Checks name list items by index ("relations[3]"): drop the removed one's, shift the later ones."""
    prefix = f"{name}["
    kept = []
    for c in anchor.checks:
        if not c.field.startswith(prefix) or not c.field.endswith("]"):
            kept.append(c)
            continue
        i = int(c.field[len(prefix):-1])
        if i != removed:
            kept.append(c if i < removed else c.model_copy(update={"field": f"{name}[{i - 1}]"}))
    anchor.checks = kept


def active(records: Iterable[Any]) -> tuple[list[Any], dict[str, Undo]]:
    """The edits in log order and the undo record of each undone edit id."""
    records = list(records)
    undone = {r.edit_id: r for r in records if r.kind == "undo"}
    return [r for r in records if r.kind != "undo"], undone


def apply_edits(anchors: AnchorSet, records: Iterable[Any], conversation=None) -> tuple[list[EditOutcome], set[str]]:
    """Replay edits (in log order, skipping undone ones) on ``anchors`` in place. Returns each edit's
    outcome and the ids of anchors whose text changed."""
    edits, undone = active(records)
    worker = _Apply(anchors, conversation)
    outcomes = []
    for edit in edits:
        if edit.id in undone:
            u = undone[edit.id]
            outcomes.append(EditOutcome(edit, "undone", f"undone by {u.who} at {u.at}" + (f": {u.why}" if u.why else "")))
        else:
            outcomes.append(worker.run(edit))
    worker.finish()
    return outcomes, worker.touched


# --------------------------------------------------------------------------------------------------
# The log file.


def edits_path(store_dir: str | Path) -> Path:
    return Path(store_dir) / EDITS_FILE


def parse_log(data: bytes, source: str) -> list[Any]:
    """Records of an edits file; a bad line raises StoreError naming the file and the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise StoreError(f"{source}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    try:  # one validation call for the whole file; line by line only to say where it is wrong
        records = _RECORDS.validate_json("[" + ",".join(line for _, line in numbered) + "]")
    except ValidationError:
        records = []
        for n, line in numbered:
            try:
                records.append(RECORD.validate_json(line))
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "record"
                msg = first["msg"].removeprefix("Value error, ")
                raise StoreError(f"{source} line {n} ({where}): {msg}") from None
    ids: set[str] = set()
    for (n, _), record in zip(numbered, records):
        if record.id in ids:
            raise StoreError(f"{source} line {n}: edit id {record.id!r} appears twice")
        ids.add(record.id)
    return records


def read_log(store_dir: str | Path) -> list[Any]:
    path = edits_path(store_dir)
    if not path.is_file():
        return []
    if path.stat().st_size > MAX_EDITS_BYTES:
        raise StoreError(f"{path}: {path.stat().st_size / 1e6:.0f} MB is too large for an edits file")
    return parse_log(path.read_bytes(), str(path))


def _dump(records: Iterable[Any]) -> str:
    return "".join(r.model_dump_json(exclude_none=False) + "\n" for r in records)


def write_log(store_dir: str | Path, records: Iterable[Any]) -> None:
    """Rewrite the log atomically, and mark the store changed (anchors.json's mtime keys the app's cache)."""
    store_dir = Path(store_dir)
    atomic_write_text(edits_path(store_dir), _dump(records))
    anchors = store_dir / ANCHORS_FILE
    if anchors.is_file():
        os.utime(anchors)


# --------------------------------------------------------------------------------------------------
# Applying the log on load, with embeddings for the changed anchors.

def apply_saved_edits(store, embedder: Any = None, *, always: bool = False):
    """Replay ``edits.jsonl`` beside a loaded ``AnchorStore`` and re-embed what changed (with ``embedder``, else
    the store's own model); ``store.curation`` says what each edit did. A store without an edits file is returned
    as it is (with an empty ``curation`` when ``always``). ``AnchorStore.load`` calls this."""
    records = read_log(store.path) if store.path is not None else []
    if always:
        store.curation = Curation()
    if not records:
        return store
    outcomes, _ = _replay(store, records, embedder)
    store.curation = Curation(outcomes=outcomes, undos=[r for r in records if r.kind == "undo"],
                              embedded=store._embedded_on_load)
    return store


def curation_of(store) -> Curation:
    return getattr(store, "curation", None) or Curation()


def _replay(store, records: list[Any], embedder: Any) -> tuple[list[EditOutcome], set[str]]:
    rows = {m: {a.id: i for i, a in enumerate(store.anchors.module(m))} for m in MODULES}
    old_line_rows = {k: i for i, k in enumerate(store.line_keys or [])}
    located = regions(store.anchors)
    outcomes, touched = apply_edits(store.anchors, records, store.conversation)
    now = regions(store.anchors)
    moved = {name for name in located.keys() | now.keys() if located.get(name) != now.get(name)}
    store._embedded_on_load = _realign(store, rows, old_line_rows, touched, embedder, moved)
    return outcomes, touched


def _realign(store, rows: dict, old_line_rows: dict[str, int], touched: set[str], embedder: Any,
             moved: set[str] = frozenset()) -> int:
    """Rows of unchanged anchors and lines are kept; changed and new ones get vectors of their new text. So do
    the lines that name a place whose region an edit changed (``moved``): a line says where the places it names
    lie (``lines.with_regions``), so renaming or retyping a place changes other anchors' lines."""
    emb = store.embeddings
    plans: dict[str, list] = {}  # matrix -> [row index (int) or text (str)]
    for module in MODULES:
        if module not in emb:
            continue
        plans[module] = [rows[module][a.id] if a.id in rows[module] and a.id not in touched else a.compact_text()
                         for a in store.anchors.module(module)]
    table = None
    if "lines" in emb and store.line_keys is not None:
        table = store.line_table()
        plans["lines"] = [old_line_rows[f"{ln.anchor_id}/{ln.field}"]
                          if ln.anchor_id not in touched and f"{ln.anchor_id}/{ln.field}" in old_line_rows
                          and not any(name in ln.search_text for name in moved)
                          else ln.search_text for ln in table.lines]
    wanted = list(dict.fromkeys(x for plan in plans.values() for x in plan if isinstance(x, str)))
    if not wanted:
        vectors: dict[str, np.ndarray] = {}
        embedded = 0
    else:
        vectors, embedded = _vectors_for(store, wanted, embedder)
    dim = next((m.shape[1] for m in emb.values() if m.ndim == 2 and m.shape[0]), store.anchors.built_with.embedding_dim)
    for name, plan in plans.items():
        old = emb[name]
        out = np.zeros((len(plan), dim), dtype=np.float32)
        for i, x in enumerate(plan):
            out[i] = old[x] if isinstance(x, int) else vectors[x]
        emb[name] = out
    if table is not None:
        store.line_keys = table.keys()
    return embedded


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _vectors_for(store, texts: list[str], embedder: Any) -> tuple[dict[str, np.ndarray], int]:
    """Vectors of edited texts: from the cache beside the store, the rest encoded once and cached."""
    model = store.anchors.built_with.embedding_model
    cache = _read_vectors(store.path, model)
    missing = [t for t in texts if _text_key(t) not in cache]
    if missing:
        if embedder is None:
            embedder = embedder_for(model, store.anchors.built_with.embedding_dim)
        fresh = np.asarray(embedder.encode(missing), dtype=np.float32)
        cache.update({_text_key(t): fresh[i] for i, t in enumerate(missing)})
        try:
            _write_vectors(store.path, model, {_text_key(t): cache[_text_key(t)] for t in texts})
        except OSError:  # a read-only store still loads; it embeds again next time
            pass
    return {t: cache[_text_key(t)] for t in texts}, len(missing)


def _read_vectors(store_dir: Path | None, model: str) -> dict[str, np.ndarray]:
    path = Path(store_dir or ".") / VECTORS_FILE
    if store_dir is None or not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as npz:
            if str(npz["model"]) != model:
                return {}
            return dict(zip((str(k) for k in npz["keys"]), np.asarray(npz["vectors"], dtype=np.float32)))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError):
        return {}  # a damaged cache is only a cache: the texts are encoded again


def _write_vectors(store_dir: Path | None, model: str, vectors: dict[str, np.ndarray]) -> None:
    if store_dir is None:
        return
    buf = io.BytesIO()
    keys = list(vectors)
    matrix = np.stack([vectors[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
    np.savez(buf, model=np.array(model), keys=np.array(keys, dtype=str), vectors=matrix.astype(np.float32))
    atomic_write_bytes(Path(store_dir) / VECTORS_FILE, buf.getvalue())
