"""Versioned builds: checkpoints and stores record what built them (engine, extractor and prompt versions,
backend), a rebuild after a change re-extracts instead of reusing old batches, and `evaluate` refuses a
store that another backend built instead of scoring it under the requested backend's name."""

from __future__ import annotations

import json

import pytest
from evaluate_fixtures import write_conversation, write_store
from test_build import WordExtractor, make_conversation
from typer.testing import CliRunner

import gravity_engine.cli.eval_cmds  # noqa: F401  (registers evaluate)
from gravity_engine import __version__
from gravity_engine.build import CHECKPOINT_DIR, build_store
from gravity_engine.cli import app
from gravity_engine.errors import StoreError
from gravity_engine.extract.classic import EXTRACTOR_VERSION as CLASSIC_VERSION
from gravity_engine.extract.classic import ClassicExtractor
from gravity_engine.extract.llm import EXTRACTOR_VERSION as LLM_VERSION
from gravity_engine.extract.llm import LLMExtractor
from gravity_engine.llm import OpenAIClient
from gravity_engine.build import ensure_store
from gravity_engine.store import AnchorStore
from gravity_engine.testing.pytest_plugin import local_llm_config


class VersionedWordExtractor(WordExtractor):
    def __init__(self, version: str = "1", **kwargs):
        super().__init__(**kwargs)
        self.version = version

    def describe(self):
        return {"backend": "word", "version": self.version, "prompt_versions": {"extract_word": "v1"}}


def test_store_and_checkpoints_record_engine_extractor_and_prompt_versions(tmp_path, fake_embedder):
    store = build_store(make_conversation(), tmp_path / "s", extractor=VersionedWordExtractor("7"),
                        embedder=fake_embedder)
    info = AnchorStore.load(tmp_path / "s").anchors.built_with
    assert (info.backend, info.extractor_version, info.engine_version) == ("word", "7", __version__)
    assert info.prompt_versions == {"extract_word": "v1"} and store.anchors.built_with == info
    [record] = list((tmp_path / "s" / CHECKPOINT_DIR).glob("*/built_with.json"))
    written = json.loads(record.read_text())
    assert written["engine_version"] == __version__ and written["extractor"]["version"] == "7"
    assert written["extractor"]["prompt_versions"] == {"extract_word": "v1"} and written["batch_size"] == 20


def test_both_extractors_describe_their_version(fake_embedder, scripted_openai):
    assert ClassicExtractor(embedder=fake_embedder).describe()["version"] == CLASSIC_VERSION
    llm = LLMExtractor(OpenAIClient(local_llm_config(scripted_openai))).describe()
    assert llm["version"] == LLM_VERSION and llm["prompt_versions"]


@pytest.mark.parametrize("change", ["engine", "extractor", "nothing"])
def test_a_rebuild_after_a_version_change_re_extracts(tmp_path, fake_embedder, monkeypatch, change):
    conv = make_conversation()
    build_store(conv, tmp_path / "s", extractor=VersionedWordExtractor("1"), embedder=fake_embedder)
    if change == "engine":
        monkeypatch.setattr("gravity_engine.build.pipeline.__version__", __version__ + ".post1")
    again = VersionedWordExtractor("2" if change == "extractor" else "1")
    store = build_store(conv, tmp_path / "s", extractor=again, embedder=fake_embedder)
    if change == "nothing":
        assert again.seen == [] and store.report["batches"]["from_checkpoint"] == 3
    else:
        assert again.seen == ["session_1", "session_2", "session_3"]
        assert store.report["batches"]["from_checkpoint"] == 0


def test_update_refuses_a_store_another_extractor_version_built(tmp_path, fake_embedder):
    build_store(make_conversation(2), tmp_path / "s", extractor=VersionedWordExtractor("1"), embedder=fake_embedder)
    with pytest.raises(StoreError, match=r"extractor_version '1' \(asked for '2'\).*without --update"):
        build_store(make_conversation(3), tmp_path / "s", extractor=VersionedWordExtractor("2"),
                    embedder=fake_embedder, update=True)


def test_ensure_store_refuses_a_store_another_backend_built(tmp_path, fake_embedder):
    conv_file, _ = write_conversation(tmp_path / "data")
    folder = write_store(tmp_path / "stores", conv_file, fake_embedder)  # built_with.backend: classic
    conv = AnchorStore.load(folder).conversation
    with pytest.raises(StoreError, match=r"backend 'classic' \(asked for 'llm'\).*--backend classic"):
        ensure_store(conv, tmp_path / "stores", fake_embedder, backend="llm")
    assert ensure_store(conv, tmp_path / "stores", fake_embedder, backend="classic")[1] is False
    assert ensure_store(conv, tmp_path / "stores", fake_embedder)[1] is False  # no backend asked: any will do


def test_evaluate_with_another_backend_refuses_before_any_call(tmp_path, fake_embedder):
    conv_file, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv_file, fake_embedder)
    result = CliRunner().invoke(app, ["evaluate", "custom", str(conv_file), "--stores", str(tmp_path / "stores"),
                                      "--out", str(tmp_path / "out"), "--backend", "llm", "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "built with backend 'classic' (asked for 'llm')" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
