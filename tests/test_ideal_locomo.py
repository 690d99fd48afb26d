"""build-ideal: LoCoMo-shaped annotations answered by a scripted endpoint, through the real llm pipeline.

The sample is invented here (LoCoMo's own text is CC BY-NC and never enters the repository)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gravity_engine.cli import app
from gravity_engine.store import AnchorStore
from gravity_engine.testing.ideal_locomo import IDEAL_MODEL, build_ideal_store, ideal_router


def _sample(sample_id: str = "conv-x") -> dict:
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "2:00 pm on 3 March, 2024",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Bo! I adopted a grey kitten called Pixel on Monday."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! I am still training for the Harbor Valley marathon."},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "Pixel sleeps all day. How far do you run now?"},
                {"speaker": "Bo", "dia_id": "D1:4", "text": "Twenty kilometres every Sunday along the river."},
            ],
            "session_2_date_time": "10:00 am on 10 March, 2024",
            "session_2": [
                {"speaker": "Bo", "dia_id": "D2:1", "text": "I finished the marathon yesterday in four hours!"},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Congratulations! I started a pottery class at Clayworks Studio."},
                {"speaker": "Bo", "dia_id": "D2:3", "text": "Send me a photo of your first bowl."},
            ],
            # LoCoMo quirk: a date for a session that has no turns
            "session_3_date_time": "9:00 am on 1 April, 2024",
        },
        "observation": {
            "session_1_observation": {
                "Ana": [["Ana adopted a grey kitten named Pixel.", "D1:1"],
                        ["Ana's kitten Pixel sleeps all day.", ["D1:1", "D1:3"]]],
                "Bo": [["Bo trains for the Harbor Valley marathon by running twenty kilometres on Sundays.", "D1:2, D1:4"]],
            },
            "session_2_observation": {
                "Ana": [["Ana started a pottery class at Clayworks Studio.", "D2:2"]],
                "Bo": [["Bo finished the marathon in four hours.", "D9:99"]],  # evidence not in the dialogue
            },
        },
        "event_summary": {
            "events_session_1": {"Ana": ["Ana adopts a kitten named Pixel."], "Bo": [], "date": "3 March, 2024"},
            "events_session_2": {"Ana": ["Ana starts a pottery class."], "Bo": ["Bo finishes the marathon."],
                                 "date": "10 March, 2024"},
        },
        "session_summary": {
            "session_1_summary": "Ana and Bo caught up at 2:00 pm on 3 March, 2024. Ana adopted a kitten named "
                                 "Pixel. Bo is training for a marathon.",
            "session_2_summary": "Bo and Ana spoke on 10 March, 2024. Bo finished his marathon. Ana began pottery "
                                 "at Clayworks Studio.",
        },
        "qa": [],
    }


def _write(tmp_path: Path, samples: list[dict]) -> Path:
    path = tmp_path / "locomo_like.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def test_ideal_build_places_annotations_and_rebuild_is_cached(tmp_path, fake_embedder):
    path = _write(tmp_path, [_sample()])
    out = tmp_path / "store"
    store = build_ideal_store(path, "conv-x", out, embedder=fake_embedder, batch_size=2)
    a = store.anchors
    assert a.built_with.backend == "llm" and a.built_with.llm_model == IDEAL_MODEL

    ana = next(e for e in a.entities if e.name == "Ana")
    bo = next(e for e in a.entities if e.name == "Bo")
    facts = {x.value: x.source_ids for x in ana.attributes if x.key == "fact"}
    assert facts["Ana adopted a grey kitten named Pixel."] == ["D1:1"]
    # evidence spread over two batches (size 2): both halves cited once consolidated
    assert sorted(facts["Ana's kitten Pixel sleeps all day."]) == ["D1:1", "D1:3"]
    bo_facts = {x.value: x.source_ids for x in bo.attributes}
    assert sorted(bo_facts["Bo trains for the Harbor Valley marathon by running twenty kilometres on Sundays."]) == ["D1:2", "D1:4"]
    # a fact whose evidence does not exist is tied to the best matching turn of its session
    assert bo_facts["Bo finished the marathon in four hours."] == ["D2:1"]
    assert not any(v.startswith("Bo") for v in facts) and not any(v.startswith("Ana") for v in bo_facts)
    names = {e.name: e.type for e in a.entities}
    assert names.get("Pixel") == "pet" and "Clayworks Studio" in names and "Harbor Valley" in names

    events = {v.what: v for v in a.events}
    assert set(events) == {"Ana adopts a kitten named Pixel.", "Ana starts a pottery class.", "Bo finishes the marathon."}
    kitten, pottery, marathon = (events[k] for k in sorted(events))
    # "on Monday" said on Sunday 3 March 2024: the expression is passed on and the pipeline resolves it
    assert kitten.date_start == "2024-02-26" and kitten.granularity == "day" and "Monday" in kitten.when_text
    assert kitten.source_ids[0] == "D1:1" and kitten.participants == ["Ana"]
    assert pottery.date_start == "2024-03-10" and marathon.date_start == "2024-03-09"  # "yesterday" said on 10 March
    assert pottery.source_ids[0] == "D2:2" and marathon.source_ids[0] == "D2:1"

    assert len(a.topics) == 2
    summaries = {t.summary for t in a.topics}
    assert summaries == {s for s in _sample()["session_summary"].values()}
    first = next(t for t in a.topics if t.summary.startswith("Ana and Bo"))
    assert first.sessions[0].state == "Ana adopted a kitten named Pixel."  # the meeting sentence is skipped
    assert {f.text for f in first.key_facts} >= {"Ana adopted a grey kitten named Pixel."}
    assert set(first.source_ids) == {"D1:1", "D1:2", "D1:3", "D1:4"}  # every batch of the session joined the arc

    report = store.report
    assert report["stats"]["invented_source_ids"] == 0 and report["source_ids"]["dropped_nonexistent"] == 0
    assert report["ideal"]["plan"]["facts_placed_by_overlap"] == 1
    assert report["ideal"]["endpoint_requests"] == report["batches"]["total"] == 4
    assert not (out / ".checkpoints").exists()

    again = build_ideal_store(path, "conv-x", out, embedder=fake_embedder, batch_size=2)
    assert again.report["ideal"]["endpoint_requests"] == 0
    assert again.report["llm"]["total"]["calls"] == 0 and again.report["llm"]["total"]["cache_hits"] == 4
    assert json.loads((out / "build_report.json").read_text())["ideal"]["endpoint_requests"] == 0
    assert {v.what for v in AnchorStore.load(out).anchors.events} == set(events)


def test_router_answers_other_prompts_like_the_echo_router():
    router = ideal_router(_sample())
    judge = {"messages": [{"role": "user", "content": "judge this"}],
             "response_format": {"type": "json_schema", "json_schema": {"name": "judge", "schema": {}}}}
    assert router(judge)["label"] == "WRONG"


def test_cli_build_ideal_all_then_skip(tmp_path, fake_embedder, monkeypatch):
    monkeypatch.setattr("gravity_engine.embed.get_embedder", lambda name="": fake_embedder)
    path = _write(tmp_path, [_sample("conv-x"), _sample("conv-y")])
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["build-ideal", str(path), "--all", "--runs", str(runs)])
    assert result.exit_code == 0, result.output
    assert "conv-x: " in result.output and "conv-y: " in result.output and "0 invented ids dropped" in result.output
    assert "done: 2 built, 0 skipped" in result.output
    assert AnchorStore.load(runs / "conv-y").anchors.built_with.llm_model == IDEAL_MODEL
    result = CliRunner().invoke(app, ["build-ideal", str(path), "--all", "--runs", str(runs)])
    assert result.exit_code == 0 and "done: 0 built, 2 skipped" in result.output
    result = CliRunner().invoke(app, ["build-ideal", str(path), "-c", "conv-y", "--out", str(tmp_path / "one")])
    assert result.exit_code == 0, result.output
    assert "2 calls, 0 cache hits" in result.output  # a new --out has its own cache: the endpoint answers
    assert (tmp_path / "one" / "anchors.json").is_file()


@pytest.mark.parametrize("case", ["unknown id", "not locomo", "missing file", "no choice"])
def test_cli_build_ideal_bad_input_is_one_line_and_exit_2(tmp_path, case):
    path = _write(tmp_path, [_sample()])
    args = {
        "unknown id": [str(path), "--conversation", "conv-404"],
        "not locomo": [str(tmp_path / "chat.jsonl"), "--conversation", "c"],
        "missing file": [str(tmp_path / "nope.json"), "--all"],
        "no choice": [str(path)],
    }[case]
    (tmp_path / "chat.jsonl").write_text('{"speaker": "A", "text": "hi", "session": "s1"}\n'
                                         '{"speaker": "B", "text": "hello", "session": "s1"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["build-ideal", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("error:") == 1
    expected = {"unknown id": "no conversation 'conv-404'", "not locomo": "not a LoCoMo file",
                "missing file": "nope.json", "no choice": "--all"}[case]
    assert expected in result.output
