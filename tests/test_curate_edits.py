"""Edits of a store: every kind applies, undoes, travels in an export, survives a rebuild and an update,
and is reported (never dropped) when its anchor is gone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from gravity_engine.curate.edits import (EDITS_FILE, CurationError, curation_of, find_ref, load_raw, make_edit,
                                         read_log, record_edit, undo_edit)
from gravity_engine.errors import StoreError
from gravity_engine.store import AnchorStore, embed_anchors
from gravity_engine.testing import FakeEmbedder
from gravity_engine.viz.export import import_store_zip, store_zip_bytes

from studio_stores import make_store

ROOT = Path(__file__).resolve().parent.parent
GOLD_CONV = ROOT / "sample_data" / "gold" / "robotics_team.jsonl"


def _entity(store, name):
    return next((e for e in store.anchors.entities if e.name == name), None)


def _event(store, what):
    return next((v for v in store.anchors.events if v.what == what), None)


# kind -> (module, anchor, fields, check of the edited store, name of what a rebuild removes to make it stale)
CASES = {
    "set_type": ("entities", "St. Mary Hospital", {"type": "place"},
                 lambda s: _entity(s, "St. Mary Hospital").type == "place"),
    "rename": ("entities", "Dr. Chen", {"name": "Dr. Wei Chen"},
               lambda s: _entity(s, "Dr. Chen") is None and "Dr. Chen" in _entity(s, "Dr. Wei Chen").aliases
               and any(r.target == "Dr. Wei Chen" for r in _entity(s, "Priya").relations)),
    "merge": ("entities", "Dr. Chen", {"into": "Marco"},
              lambda s: _entity(s, "Dr. Chen") is None and "Dr. Chen" in _entity(s, "Marco").aliases
              and next(r for r in _entity(s, "Priya").relations if r.target == "Dr. Chen").target_id == "ent_2"),
    "split": ("entities", "Priya", {"alias": "P."},
              lambda s: _entity(s, "P.") is not None and "P." not in _entity(s, "Priya").aliases),
    "delete": ("events", "present the work at a conference", {},
               lambda s: _event(s, "present the work at a conference") is None and len(s.anchors.events) == 3),
    "delete_field": ("entities", "Priya", {"field": "relations", "key": "partners with", "value": "St. Mary Hospital"},
                     lambda s: [r.predicate for r in _entity(s, "Priya").relations] == ["works with", "owns"]),
    "set_date": ("events", "present the work at a conference", {"date_start": "2023-09-01", "when_text": "in September"},
                 lambda s: (_event(s, "present the work at a conference").date_start,
                            _event(s, "present the work at a conference").when_text) == ("2023-09-01", "in September")),
    "add_relation": ("entities", "Marco", {"predicate": "friend of", "object": "Priya", "source_ids": ["D1:2"]},
                     lambda s: any(r.predicate == "friend_of" and r.target_id == "ent_1" and r.source_ids == ["D1:2"]
                                   for r in _entity(s, "Marco").relations)),
}


def _record(path: Path, kind: str):
    module, name, fields, _ = CASES[kind]
    store = AnchorStore.load(path)
    fields = dict(fields)
    if "into" in fields:
        fields["into"] = find_ref(store, "entities", fields["into"]).model_dump()
    edit = make_edit(kind, find_ref(store, module, name), who="tester", why=f"test {kind}", **fields)
    return edit, record_edit(path, edit, FakeEmbedder(dim=64))


def _assert_embeddings_fresh(store: AnchorStore) -> None:
    """The rows of edited anchors are the embeddings of their new text (nothing stale is left)."""
    fresh = embed_anchors(store.anchors, FakeEmbedder(dim=64))
    for module in ("entities", "events", "topics", "lines"):
        assert np.allclose(store.embeddings[module], fresh[module], atol=1e-6), module
    assert store.line_keys == [str(k) for k in fresh["lines_keys"]]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_every_edit_kind_round_trips(tmp_path, kind):
    path = tmp_path / "store"
    original = make_store(path)
    check = CASES[kind][3]
    edit, outcome = _record(path, kind)
    assert outcome.status == "applied"

    # applied on load, with who/when/why kept, and embeddings that match the edited text
    store = AnchorStore.load(path)
    assert check(store)
    [o] = curation_of(store).outcomes
    assert (o.status, o.edit.who, o.edit.why, o.edit.id) == ("applied", "tester", f"test {kind}", edit.id)
    _assert_embeddings_fresh(store)
    assert load_raw(path).anchors == original.anchors  # anchors.json is what the build wrote

    # exported and imported with the store
    imported = import_store_zip(store_zip_bytes(path), tmp_path / "imported")
    assert check(imported)
    assert [x.id for x in read_log(tmp_path / "imported")] == [edit.id]

    # survives a rebuild (the store saved again over the same folder)
    AnchorStore(anchors=original.anchors, embeddings=embed_anchors(original.anchors, FakeEmbedder(dim=64)),
                conversation=original.conversation, report=original.report).save(path)
    assert (path / EDITS_FILE).is_file()
    assert check(AnchorStore.load(path))

    # undone by id: the store is as built again; the undo is a record too
    assert undo_edit(path, edit.id, who="tester", why="changed my mind")[1] == ""
    store = AnchorStore.load(path)
    assert store.anchors == original.anchors
    assert [o.status for o in curation_of(store).outcomes] == ["undone"]
    assert [r.kind for r in read_log(path)] == [kind, "undo"]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_an_edit_whose_anchor_is_gone_is_reported_not_dropped(tmp_path, kind):
    path = tmp_path / "store"
    original = make_store(path)
    _record(path, kind)
    module, name, _, _ = CASES[kind]
    # a rebuild that no longer has the anchor
    attr = {"entities": "name", "events": "what"}[module]
    rebuilt = original.anchors.model_copy(deep=True)
    setattr(rebuilt, module, [a for a in rebuilt.module(module) if getattr(a, attr) != name])
    AnchorStore(anchors=rebuilt, embeddings=embed_anchors(rebuilt, FakeEmbedder(dim=64)),
                conversation=original.conversation).save(path)
    [o] = curation_of(AnchorStore.load(path)).outcomes
    if kind == "delete":
        assert o.status == "already"  # what it deleted is not there: the edit holds
    else:
        assert o.status == "stale"
        assert name in o.note


def test_edits_by_stable_keys_after_ids_change(tmp_path):
    path = tmp_path / "store"
    original = make_store(path)
    edit, _ = _record(path, "set_date")
    # the next build numbers events differently and lists them in another order
    rebuilt = original.anchors.model_copy(deep=True)
    for i, v in enumerate(reversed(rebuilt.events)):
        v.id = f"evt-{100 + i}"
    rebuilt.events.reverse()
    AnchorStore(anchors=rebuilt, embeddings=embed_anchors(rebuilt, FakeEmbedder(dim=64)),
                conversation=original.conversation).save(path)
    store = AnchorStore.load(path)
    assert _event(store, "present the work at a conference").date_start == "2023-09-01"
    assert [o.status for o in curation_of(store).outcomes] == ["applied"]


def test_an_edit_the_build_already_has_is_listed_as_already(tmp_path):
    path = tmp_path / "store"
    make_store(path)
    edit = make_edit("set_type", find_ref(AnchorStore.load(path), "entities", "Biscuit"), type="pet")
    assert record_edit(path, edit, FakeEmbedder(dim=64)).status == "already"
    [o] = curation_of(AnchorStore.load(path)).outcomes
    assert o.status == "already" and "pet" in o.note


def test_undo_of_an_edit_a_save_wrote_into_the_build_says_so(tmp_path):
    path = tmp_path / "store"
    make_store(path)
    edit, _ = _record(path, "set_type")
    AnchorStore.load(path).save(path)  # e.g. `verify --drop` or an update saves the loaded, edited store
    [o] = curation_of(AnchorStore.load(path)).outcomes
    assert o.status == "already"
    _, warning = undo_edit(path, edit.id)
    assert "keep it until the next rebuild" in warning


def test_bad_edits_get_clear_errors(tmp_path):
    path = tmp_path / "store"
    make_store(path)
    store = AnchorStore.load(path)
    priya = find_ref(store, "entities", "Priya")
    with pytest.raises(CurationError, match="S99:1 is not an utterance"):
        record_edit(path, make_edit("add_relation", priya, predicate="likes", object="tea", source_ids=["S99:1"]))
    with pytest.raises(CurationError, match="date_end 2023-01-01 is before"):
        make_edit("set_date", find_ref(store, "events", "evt_1"), date_start="2023-02-01", date_end="2023-01-01")
    with pytest.raises(CurationError, match="set_type applies to entities"):
        make_edit("set_type", find_ref(store, "events", "evt_1"), type="person")
    with pytest.raises(CurationError, match="no such item"):
        record_edit(path, make_edit("delete_field", priya, field="relations", value="nobody"))
    with pytest.raises(CurationError, match="no entity 'Nobody'"):
        find_ref(store, "entities", "Nobody")
    with pytest.raises(CurationError, match="unknown edit kind"):
        make_edit("explode", priya)
    with pytest.raises(CurationError, match="no edit 'ed-missing'"):
        undo_edit(path, "ed-missing")
    assert not (path / EDITS_FILE).exists()  # nothing was recorded


def test_a_damaged_edits_file_names_the_line(tmp_path):
    path = tmp_path / "store"
    make_store(path)
    _record(path, "set_type")
    with open(path / EDITS_FILE, "a", encoding="utf-8") as fh:
        fh.write('{"kind": "set_type", "target": {"module": "entities", "name": "X"}}\n')
    with pytest.raises(StoreError, match=r"edits.jsonl line 2 \(set_type.type\): Field required"):
        AnchorStore.load(path)


def test_a_warm_cache_embeds_nothing_on_load(tmp_path, monkeypatch):
    path = tmp_path / "store"
    make_store(path)
    for kind in ("set_type", "rename", "add_relation"):
        _record(path, kind)
    assert curation_of(AnchorStore.load(path)).embedded == 0
    (path / "edits.vectors.npz").unlink()  # e.g. edits copied in by hand: embedded once, then cached
    assert curation_of(AnchorStore.load(path)).embedded > 0
    assert curation_of(AnchorStore.load(path)).embedded == 0


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A classic build of a small gold conversation (FakeEmbedder: the extractor is the real one)."""
    from gravity_engine.loaders import load_conversation

    conv = load_conversation(GOLD_CONV)
    return conv, tmp_path_factory.mktemp("built")


def test_edits_survive_a_real_rebuild_and_an_update(built):
    from gravity_engine.build import build_store

    conv, root = built
    path = root / "full"
    build_store(conv, path, backend="classic", embedder=FakeEmbedder())
    store = AnchorStore.load(path)
    target = next(e for e in store.anchors.entities if e.name == "Copper Kettle")
    edits = [make_edit("set_type", find_ref(store, "entities", target.name), type="place", why="a cafe"),
             make_edit("rename", find_ref(store, "entities", "Hamburg"), name="Hamburg, Germany")]
    for e in edits:
        record_edit(path, e, FakeEmbedder())
    shutil.rmtree(path / ".checkpoints")  # a full rebuild: extraction runs again
    build_store(conv, path, backend="classic", embedder=FakeEmbedder())
    store = AnchorStore.load(path)
    assert _entity(store, "Copper Kettle").type == "place"
    assert _entity(store, "Hamburg, Germany") is not None
    assert [o.status for o in curation_of(store).outcomes] == ["applied", "applied"]
    _assert_embeddings_fresh(store)

    # an update from the first two sessions to all four keeps them too
    part = root / "part"
    first_two = conv.model_copy(update={"sessions": conv.sessions[:2]})
    build_store(first_two, part, backend="classic", embedder=FakeEmbedder())
    store = AnchorStore.load(part)
    record_edit(part, make_edit("set_type", find_ref(store, "entities", "Copper Kettle"), type="place"), FakeEmbedder())
    build_store(conv, part, backend="classic", embedder=FakeEmbedder(), update=True)
    store = AnchorStore.load(part)
    assert _entity(store, "Copper Kettle").type == "place"
    [o] = curation_of(store).outcomes
    assert o.status in ("applied", "already")  # an update extends the edited anchors; either way it holds
    assert json.loads((part / EDITS_FILE).read_text().splitlines()[0])["kind"] == "set_type"


def test_cli_edit_edits_undo_review_and_diff(tmp_path):
    from typer.testing import CliRunner

    from gravity_engine.cli import app

    runner = CliRunner()
    path = tmp_path / "store"
    make_store(path)
    p = str(path)

    def run(*args, code=0):
        result = runner.invoke(app, list(args))
        assert result.exit_code == code, result.output
        assert "Traceback" not in result.output
        return result.output

    out = run("edit", p, "set_type", "Biscuit", "organization", "--why", "a test", "--who", "cli")
    edit_id = out.split(":")[0]
    assert "type -> organization — applied" in out
    run("edit", p, "set-date", "evt_4", "2023-09-01", "--end", "2023-09-30", "--granularity", "month")
    run("edit", p, "add_relation", "Marco", "friend_of", "--object", "Priya", "--source", "D1:2")
    run("edit", p, "merge", "Dr. Chen", "Marco")
    listed = run("edits", p)
    assert listed.count("applied") >= 4 and "cli: entity 'Biscuit'" in listed and "why: a test" in listed
    store = AnchorStore.load(path)
    assert _entity(store, "Biscuit").type == "organization"
    assert next(v for v in store.anchors.events if v.id == "evt_4").date_label() == "2023-09-01..2023-09-30"

    assert "undid " + edit_id in run("undo", p, edit_id)
    assert _entity(AnchorStore.load(path), "Biscuit").type == "pet"
    assert "undone" in run("edits", p)

    queue = run("review", p, "--top", "3")
    assert "anchors to review" in queue and "no date" not in queue  # evt_4 has its date now
    diff = run("diff", p, p, "--a-raw")
    assert "- 'Dr. Chen'" in diff and "aliases: '' -> 'Dr. Chen'" in diff and "friend_of Priya" in diff
    data = json.loads(run("edits", p, "--json"))
    assert [d["status"] for d in data][:1] == ["undone"]

    # bad input: one line, exit code 2
    assert "needs the new type" in run("edit", p, "set_type", "Biscuit", code=2)
    assert "no entity 'Nobody'" in run("edit", p, "delete", "Nobody", code=2)
    assert "unknown edit kind 'explode'" in run("edit", p, "explode", "Biscuit", code=2)
    assert "evidence D9:9 is not an utterance" in run("edit", p, "add_relation", "Marco", "likes", "--object", "tea",
                                                      "--source", "D9:9", code=2)
    assert "no edit 'ed-nope'" in run("undo", p, "ed-nope", code=2)
    assert "no anchors.json here" in run("review", str(tmp_path / "nowhere"), code=2)
    (path / EDITS_FILE).write_text("not json\n")
    assert "edits.jsonl line 1" in run("edits", p, code=2)
