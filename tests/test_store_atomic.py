"""Stores are written as a whole, under a lock: a writer killed (SIGKILL) at any point, or a reader during
writes, sees the old store or the new one, complete, never a mix or an error; files that are not the store's
own (checkpoints, human edits) survive every write.

The stores here are tiny, with hand-made vectors: each of the four files says which version it belongs to.
Writers run in forked child processes (the test process has everything imported, so a child starts in
milliseconds and many kills take seconds)."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from test_build import WordExtractor, make_conversation

from gravity_engine import fileio
from gravity_engine.anchors import AnchorSet, Entity
from gravity_engine.build import build_store
from gravity_engine.build.consolidate import consolidate_entities, unmerge_store
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.errors import GravityError, StoreError
from gravity_engine.fileio import GENERATION_FILE, INCOMING_DIR, read_generation
from gravity_engine.store import STORE_FILES, AnchorStore, embed_anchors, store_lock
from app_services.studio import unmerge_into_workspace

FORK = multiprocessing.get_context("fork")
FOREIGN = {".checkpoints/0123abcd/batch-1.json": '{"entities": []}\n', "edits.jsonl": "", "notes.txt": "mine\n"}
FOREIGN_TOP = {name.split("/")[0] for name in FOREIGN}
SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "stores" / "medllm_project"


def version_store(k: int) -> AnchorStore:
    """Version ``k``: its number in the conversation, every anchor, every vector and the report."""
    conv = Conversation(id=f"c{k}", speakers=["Ann"], sessions=[Session(id="s1", index=1, utterances=[
        Utterance(id="D1:1", speaker="Ann", text=f"version {k}", session_id="s1")])])
    n = 2 + k % 3  # the row count changes from one version to the next as well
    anchors = AnchorSet(conversation_id=f"c{k}", entities=[Entity(id=f"e{k}-{i}", name=f"E{k} {i}", source_ids=["D1:1"])
                                                           for i in range(n)])
    embeddings = {"entities": np.full((n, 4), float(k), dtype=np.float32),
                  "events": np.zeros((0, 4), dtype=np.float32), "topics": np.zeros((0, 4), dtype=np.float32)}
    return AnchorStore(anchors=anchors, embeddings=embeddings, conversation=conv, report={"version": k})


def version_of(store: AnchorStore) -> int:
    """The store's version, after checking that all four files are of that one version."""
    k = store.report["version"]
    seen = {
        "conversation": store.conversation.id, "anchors": store.anchors.conversation_id,
        "ids": {e.id.split("-")[0] for e in store.anchors.entities},
        "vectors": set(np.unique(store.matrix("entities")).tolist()),
        "rows": (len(store.anchors.entities), store.matrix("entities").shape[0]),
    }
    want = {"conversation": f"c{k}", "anchors": f"c{k}", "ids": {f"e{k}"}, "vectors": {float(k)},
            "rows": (2 + k % 3, 2 + k % 3)}
    assert seen == want, f"a mixed store: {seen} (report says version {k})"
    return k


def _with_foreign_files(folder: Path) -> None:
    for name, text in FOREIGN.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def _foreign_files_intact(folder: Path) -> bool:
    return all((folder / name).is_file() and (folder / name).read_text() == text for name, text in FOREIGN.items())


def _write_forever(folder: str, first: int) -> None:
    k = first
    while True:
        version_store(k).save(folder)
        k += 1


def _die_at_step(folder: str, k: int, step: int) -> None:
    """Save version ``k`` and get SIGKILLed just before the file system step number ``step`` of the save."""
    steps = {"n": 0}

    def step_then(fn):
        def wrapped(*args, **kwargs):
            steps["n"] += 1
            if steps["n"] == step:
                os.kill(os.getpid(), signal.SIGKILL)
            return fn(*args, **kwargs)
        return wrapped

    for name in ("replace", "unlink", "mkdir", "rmdir"):
        setattr(os, name, step_then(getattr(os, name)))
    version_store(k).save(folder)
    os._exit(0)


def _count(folder: str, counter) -> None:
    for name in ("replace", "unlink", "mkdir", "rmdir"):
        def wrapped(*args, _real=getattr(os, name), **kwargs):
            counter.value += 1
            return _real(*args, **kwargs)
        setattr(os, name, wrapped)
    version_store(2).save(folder)


def _count_steps(folder: Path) -> int:
    """File system steps of one save over an existing store (counted in a child: the patches die with it)."""
    version_store(1).save(folder)
    _with_foreign_files(folder)
    counter = FORK.Value("i", 0)
    child = FORK.Process(target=_count, args=(str(folder), counter))
    child.start()
    child.join(30)
    return counter.value


def test_a_writer_killed_before_each_step_of_a_save_leaves_the_old_or_the_new_store(tmp_path):
    steps = _count_steps(tmp_path / "probe")
    assert steps >= 8  # files into .incoming, the seal, the generation twice, the moves, the clean-up
    folder = tmp_path / "s"
    version_store(1).save(folder)
    _with_foreign_files(folder)
    seen = []
    for step in range(1, steps + 2):
        before = version_of(AnchorStore.load(folder))
        child = FORK.Process(target=_die_at_step, args=(str(folder), before + 1, step))
        child.start()
        child.join(30)
        killed = child.exitcode == -signal.SIGKILL
        assert killed or step > steps
        after = version_of(AnchorStore.load(folder))
        assert after in (before, before + 1) and _foreign_files_intact(folder)
        assert read_generation(folder) % 2 == 0 and not (folder / INCOMING_DIR / "MANIFEST.json").exists()
        seen.append(after - before)
    # Killed before the seal: the old store; after it: the new one (the load finished the write).
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 1
    version_store(1000).save(folder)  # and the next writer is not hindered
    assert version_of(AnchorStore.load(folder)) == 1000 and _foreign_files_intact(folder)


def test_a_writer_killed_at_random_moments_never_leaves_a_mixed_or_broken_store(tmp_path):
    folder = tmp_path / "s"
    version_store(1).save(folder)
    _with_foreign_files(folder)
    rng = random.Random(11)
    interrupted = 0
    for _ in range(40):
        before = version_of(AnchorStore.load(folder))
        child = FORK.Process(target=_write_forever, args=(str(folder), before + 1))
        child.start()
        time.sleep(rng.uniform(0.0, 0.08))
        child.kill()
        child.join(30)
        interrupted += read_generation(folder) % 2 == 1 or (folder / INCOMING_DIR).exists()
        after = version_of(AnchorStore.load(folder))  # never raises, never mixed
        assert after >= before and _foreign_files_intact(folder)
    assert interrupted > 0  # some kills did land inside a save


def test_readers_during_writes_see_whole_versions_only(tmp_path):
    folder = tmp_path / "s"
    version_store(1).save(folder)
    writer = FORK.Process(target=_write_forever, args=(str(folder), 2))
    writer.start()
    try:
        versions = [version_of(AnchorStore.load(folder)) for _ in range(150)]
    finally:
        writer.kill()
        writer.join(30)
    assert versions == sorted(versions) and len(set(versions)) > 1  # the writer did move on meanwhile


def _hold_lock(folder: str, ready, release) -> None:
    with store_lock(folder):
        ready.set()
        release.wait(30)


def test_the_store_lock_is_exclusive_between_processes(tmp_path):
    folder = tmp_path / "s"
    version_store(1).save(folder)
    ready, release = FORK.Event(), FORK.Event()
    holder = FORK.Process(target=_hold_lock, args=(str(folder), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(StoreError, match="being written by another process"):
            with fileio.directory_lock(folder, timeout=0.2):
                pass
        assert version_of(AnchorStore.load(folder)) == 1  # readers do not wait for writers
    finally:
        release.set()
        holder.join(30)
    with store_lock(folder):  # reentrant in one thread: save inside a held lock
        version_store(2).save(folder)
    assert version_of(AnchorStore.load(folder)) == 2


def test_save_replaces_exactly_the_store_files(tmp_path):
    folder = tmp_path / "s"
    version_store(1).save(folder)
    _with_foreign_files(folder)
    without_conversation = version_store(2)
    without_conversation.conversation = None
    without_conversation.save(folder)
    assert not (folder / "conversation.json").exists()  # a file of the old version does not linger beside the new
    assert AnchorStore.load(folder).report == {"version": 2} and _foreign_files_intact(folder)
    assert {p.name for p in folder.iterdir()} == {*FOREIGN_TOP, *STORE_FILES, ".lock", GENERATION_FILE} - {
        "conversation.json"}


def test_stores_written_file_by_file_before_still_load():
    store = AnchorStore.load(SAMPLE)  # the shipped sample: no generation file, no lock
    store.check_embeddings()
    assert store.anchors.entities


def test_a_second_unmerge_leaves_the_loaded_store_report_alone(fake_embedder):
    merged = consolidate_entities([[Entity(id="a", name="Priya Raman", type="person", source_ids=["1"])],
                                   [Entity(id="b", name="priya", type="person", source_ids=["2"])]],
                                  speakers=["Priya Raman"])
    [target] = [e for e in merged if e.merges]
    store = AnchorStore(anchors=AnchorSet(entities=merged), report={"edits": [{"note": "earlier"}]})
    first = unmerge_store(store, target.id, "priya", fake_embedder)
    second = unmerge_store(store, target.id, "priya", fake_embedder)  # the app's cached store, split again
    assert store.report == {"edits": [{"note": "earlier"}]}  # as it was loaded
    assert len(first.report["edits"]) == len(second.report["edits"]) == 2


def test_an_update_does_not_save_over_a_change_made_while_it_ran(tmp_path, fake_embedder):
    folder = tmp_path / "s"
    build_store(make_conversation(2), folder, extractor=WordExtractor(), embedder=fake_embedder)

    def someone_else_saves(progress):
        if progress.stage == "extract" and progress.done == 1:
            edited = AnchorStore.load(folder)
            edited.report["edited"] = True  # e.g. an unmerge in the app
            edited.save(folder)

    with pytest.raises(StoreError, match="saved by another writer after it was loaded here; run the update again"):
        build_store(make_conversation(3), folder, extractor=WordExtractor(), embedder=fake_embedder, update=True,
                    progress=someone_else_saves)
    assert AnchorStore.load(folder).report["edited"] is True
    again = WordExtractor()
    store = build_store(make_conversation(3), folder, extractor=again, embedder=fake_embedder, update=True)
    assert again.seen == [] and "session_3" in store.anchors.built_with.sessions  # the batch was checkpointed


def test_the_apps_unmerge_does_not_save_over_a_change_saved_since_it_loaded_the_store(tmp_path, fake_embedder):
    merged = consolidate_entities([[Entity(id="a", name="Priya Raman", type="person", source_ids=["1"])],
                                   [Entity(id="b", name="priya", type="person", source_ids=["2"])]],
                                  speakers=["Priya Raman"])
    [target] = [e for e in merged if e.merges]
    folder = tmp_path / "workspace" / "s"
    AnchorStore(anchors=AnchorSet(entities=merged), embeddings=embed_anchors(AnchorSet(entities=merged), fake_embedder),
                report={}).save(folder)
    in_the_app = AnchorStore.load(folder)  # the page's cached store
    from_the_cli = AnchorStore.load(folder)
    from_the_cli.report["verification"] = {"share": 1.0}
    from_the_cli.save(folder)
    with pytest.raises(GravityError, match="saved by another writer after it was loaded here"):
        unmerge_into_workspace(in_the_app, target.id, "priya", fake_embedder)
    assert AnchorStore.load(folder).report == {"verification": {"share": 1.0}}  # the CLI's change is kept
    assert unmerge_into_workspace(AnchorStore.load(folder), target.id, "priya", fake_embedder) == folder.resolve()
    split = AnchorStore.load(folder)
    assert sorted(e.name for e in split.anchors.entities) == ["Priya Raman", "priya"]
    assert split.report["verification"] == {"share": 1.0} and len(split.report["edits"]) == 1
